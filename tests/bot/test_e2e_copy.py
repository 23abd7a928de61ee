"""End to end, the Russian and Ukrainian copy (issue 13): face ranks as В/Д/К/Т,
one word for AI players («компьютер»), game names in the case the sentence
needs, the group greeting naming the button that exists, refusals with their
real reason, the deep-link join naming the game and the group, and moves told
without a gender the bot cannot know."""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, Message, RateLimits
from telegram_bot.buttons.callbacks import PlayCb
from telegram_bot.views.format import event_line, role_label
from telegram_bot.views.i18n import Translator
from tests.bot.e2e_kit import SAFETY, Harness, has_game_buttons, is_over, play_out, running

LATIN_FACE = re.compile(r"(?<![A-Za-z])[JQKA](?:♠|♥|♦|♣)")
CYRILLIC_FACE = re.compile(r"[ВДКТ](?:♠|♥|♦|♣)")
GENDERED = ("вышел", "забрал", "показал", "проиграл", "вийшов", "забрав", "показав", "програв")
AI_WORDS = re.compile(r"\bИИ\b|\bШІ\b|\bбот(а|ами|ов|ом|и|ів)?\b", re.IGNORECASE)


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def shown_to(h: Harness, user_id: int) -> list[str]:
    """Every text and button label the bot sent or edited for this chat."""
    out = []
    for entry in h.fake.world.outbox:
        if entry["chat_id"] != user_id:
            continue
        rows = (entry["reply_markup"] or {}).get("inline_keyboard", [])
        out.append(entry["text"] or "")
        out += [b.get("text", "") for row in rows for b in row]
    return out


@pytest.mark.parametrize("lang", ["ru", "uk"])
async def test_a_solo_game_reads_naturally(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, lang: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        anna = fake.add_user("Анна", language_code=lang)
        anna.start()
        welcome = await anna.wait_message("/play", timeout=SAFETY)
        assert "комп" in (welcome.text or "").lower()
        anna.send("/play")  # the choice of game and level, in her words (#41)
        choice = await anna.wait_message(lambda m: bool(m.buttons), timeout=SAFETY)
        assert "комп" in (choice.text or "").lower()
        assert "Чуваськ" in " ".join(choice.button_texts) or "Чувашск" in " ".join(
            choice.button_texts
        )
        normal = PlayCb(variant="chuvash", level="normal").pack()
        await anna.press(data=normal, message=choice).wait_answer(SAFETY)
        await anna.wait_message(has_game_buttons, timeout=SAFETY)
        table = await h.svc.tables.where(anna.id)
        assert table is not None
        hand = await h.hand_message(anna, table.id)
        assert hand is not None
        assert "Комп" in (hand.text or "")  # the AI seats' names: «Компьютер 1»
        assert "AI 1" not in (hand.text or "")
        await play_out(h, table.id, [anna], rng=random.Random(3))
        assert is_over(await h.hand_message(anna, table.id))
        texts = shown_to(h, anna.id)
        everything = "\n".join(texts)
        print("shown:", everything[-2000:])
        # ranks: В/Д/К/Т, never J/Q/K/A, on buttons and in text
        assert not LATIN_FACE.search(everything), LATIN_FACE.findall(everything)[:5]
        assert CYRILLIC_FACE.search(everything)
        # one word for AI players
        assert not AI_WORDS.search(everything), AI_WORDS.findall(everything)[:5]
        # moves without a gender: present tense or a colon
        for word in GENDERED:
            assert word not in everything, word
        # (each history line in words: the test below)


async def test_group_lobby_copy_in_russian(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False):
        anna, boris, vera = (
            fake.add_user(n, language_code="ru") for n in ("Анна", "Борис", "Вера")
        )
        group = anna.create_group("Карточный вечер", boris, vera)
        anna.add_bot_to(group)
        greeting = await anna.wait_message("/new", group, timeout=SAFETY)
        text = greeting.text or ""
        assert "«Присоединиться»" in text
        assert "Сесть" not in text
        assert "«Дурака щёлковского»" in text
        anna.start()
        await anna.wait_message(timeout=SAFETY)
        anna.send("/new shchelkovsky", group)
        lobby = await anna.wait_message("Ссылка-приглашение", group, timeout=SAFETY)
        assert "Дурак щёлковский" in (lobby.text or "")
        assert "🤖 Добавить компьютер" in lobby.button_texts
        # Boris never opened the private chat: Join seats him to play in the
        # group, and says so
        answer = await boris.press("Присоединиться", message=lobby, chat=group).wait_answer(SAFETY)
        assert answer["text"] == (
            "Вы сели за стол. Ваши карты я покажу здесь, только вам "
            "(их снова покажет кнопка «🎴 Мои карты» под сообщением со столом)."
        )
        # the invitation link's answer names the game and the group
        boris.follow_link(f"https://t.me/{fake.bot_user.username}?start=" + tid_of(lobby))
        joined = await boris.wait_message("Вы за столом", timeout=SAFETY)
        assert joined.text == "Вы за столом: Дурак щёлковский, группа «Карточный вечер»."
        assert any(e["type"] == "bold" for e in joined.entities)
        # refusals say why
        answer = await boris.press("▶ Начать", message=lobby, chat=group).wait_answer(SAFETY)
        assert answer["text"] == "Начать игру может только создатель лобби."
        answer = await vera.press("▶ Начать", message=lobby, chat=group).wait_answer(SAFETY)
        assert answer["text"] == "Вы не за этим столом."
        # the inline invitation names the game in the accusative
        results = await anna.inline_query("", chat=group).wait_results(SAFETY)
        assert results[0]["title"] == "Пригласить в «Дурака щёлковского»"
        card = results[0]["input_message_content"]["message_text"]
        assert "Сыграем в <b>Дурака щёлковского</b>!" in card


def tid_of(lobby: Message) -> str:
    """The lobby's code, from the invitation link in its text."""
    return (lobby.text or "").rsplit("start=", 1)[1].split()[0]


@pytest.mark.parametrize(
    ("lang", "out", "taken", "role"),
    [
        ("ru", "Анна выходит из игры: 1-е место", "Анна забирает карты со стола (2)", "1-е место"),
        ("uk", "Анна виходить з гри: 1-е місце", "Анна забирає карти зі столу (2)", "1-е місце"),
    ],
)
def test_history_tells_moves_without_a_gender(lang: str, out: str, taken: str, role: str) -> None:
    """Issue 13: «Анна забрал карты» -- the bot cannot know a player's gender, so
    moves are told in the present tense (no gender in ru/uk) or with a colon."""
    _ = Translator(lang)
    view = {"seat": 1, "variant": "chuvash", "roles": ["out", "attacker"], "out": [0]}
    names = ["Анна", "Борис"]
    assert event_line({"kind": "out", "seat": 0, "detail": 1}, view, names, _) == out
    took = {"kind": "bout_end", "seat": 0, "detail": "taken", "cards": ["6C", "7C"]}
    assert event_line(took, view, names, _) == taken
    assert role_label(view, 0, _) == role
    assert event_line(
        {"kind": "action", "seat": 0, "detail": "take", "cards": []}, view, names, _
    ) == ("Анна берёт" if lang == "ru" else "Анна бере")


CALQUES = {
    # issue #29: phrases a native speaker would not write, and what replaced them
    "Вместо них": "«за игрока {name}» / «за игроков {names}»",
    "ход → чем побита": "«карта → чем побита»",
    "хід → чим побито": "«карта → чим побита»",
    "бязательств": "«отпечаток»",
    "зобов'язан": "«відбиток»",
    "Зерно": "«ключ раздачи»",
    "Пас весь": "«Пас до конца захода»",
    "Пас увесь": "«Пас до кінця заходу»",
    "пасует сам": "«тот пасует автоматически»",
    "не має що": "«кому нічого»",
    "у стола": "«под столом»",
    "біля столу": "«під столом»",
    "Лично": "«В личку»",
    "Особисто": "«В особисті»",
    "сдаю карты": "«со мной можно сыграть»",
    "гідн": "«номінал»",
    "Защищающ": "«отбивающийся»",
    "Захисник": "«той, хто відбивається»",
    "в проигрыше": "the loser's title",
    "у програші": "the loser's title",
    "Вы добрали": "«{name} добирает»",
    "Ви добрали": "«{name} добирає»",
    # the second reading of every string (#29)
    "каждого отбоя": "«после каждого захода» (a bout is «заход», «отбой» the discard)",
    "кожного відбою": "«після кожного заходу»",
    "карт за отбой": "«за заход»",
    "карт за відбій": "«за захід»",
    "текущая позиция": "«вот что сейчас на столе»",
    "поточна позиція": "«ось що зараз на столі»",
    "просто зараз": "«одразу» («прямо сейчас» word for word)",
    "просто тут": "«тут, у групі»",
    "просто там": "«там-таки»",
    "проверить самому": "«самостоятельно» (the reader is «вы»)",
    "перевірити самому": "«самостійно»",
    "Сбросить": "«Снять выбор»: «сбросить карты» is to discard them",
    "Скинути": "«Зняти вибір»: «скинути карти» is to discard them",
    "она ходит сразу": "«сразу идёт на стол»: a card does not move by itself",
    "вона ходить одразу": "«одразу йде на стіл»",
    "«Смотреть»": "the button says «👀 Смотреть в личке»",
    "«Дивитися»": "the button says «👀 Дивитися в особистих»",
}

ENGLISH_SLIPS = {
    # the English source strings, read once more (#29)
    "already sit at": "«You are already at…»: a state, not a habit",
    "do not sit at": "«You are not at any table now»",
    "play your seat again": "«You are playing your seat again»",
    "already play your seat": "«You are already playing your seat»",
    " -- ": "an em dash",
    "hand message": "«an old message: your cards are in a newer one»",
    "cannot take that many": "«cover»: to take is to pick the cards up",
    "picked up the table": "«picks up the cards», in the present as every other move",
}


def test_english_source_strings_read_naturally() -> None:
    from tests.bot.test_i18n import code_msgids

    for msgid in code_msgids():
        for bad, instead in ENGLISH_SLIPS.items():
            assert bad not in msgid, f"{bad!r} in {msgid!r}: {instead}"


@pytest.mark.parametrize("lang", ["ru", "uk"])
def test_no_calques_left_in_the_catalog(lang: str) -> None:
    from tests.bot.test_i18n import catalog

    for m in catalog(lang):
        for bad, instead in CALQUES.items():
            assert bad not in (m.string or ""), f"{lang}: {bad!r} in {m.string!r}: {instead}"


def test_the_hint_of_a_move_is_not_the_move_again() -> None:
    """«Ваш ход: ходите» said "your move: move" (#29)."""
    for lang, lead in [("ru", "выберите, чем ходить"), ("uk", "виберіть, чим ходити")]:
        _ = Translator(lang)
        assert _("<b>Your move</b>: {what}", what=_("lead")).endswith(lead)


@pytest.mark.parametrize(
    ("lang", "drew", "covers", "loser"),
    [
        ("ru", "Анна добирает 10♥️", "Анна бьёт 6♦️ картой 10♦️", "дурак"),
        ("uk", "Анна добирає 10♥️", "Анна б'є 6♦️ картою 10♦️", "дурень"),
        ("en", "Анна draws 10♥️", "Анна covers 6♦️ with 10♦️", "the durak"),
    ],
)
def test_ones_own_history_speaks_of_him_as_of_the_others(
    lang: str, drew: str, covers: str, loser: str
) -> None:
    """«Вы добрали 10♥️» next to «Анна бьёт 6♦️ картой 10♦️»: the same person in
    the second and the third person (#29); the loser's role is his title."""
    _ = Translator(lang)
    view = {"seat": 0, "variant": "shchelkovsky", "roles": ["loser", "out"], "out": [1]}
    names = ["Анна", "Борис"]
    draw = {"kind": "draw", "seat": 0, "cards": ["10H"]}
    cover = {"kind": "action", "seat": 0, "detail": "cover", "cards": ["6D", "10D"]}
    assert event_line(draw, view, names, _) == drew
    assert event_line(cover, view, names, _) == covers
    assert role_label(view, 0, _) == loser
