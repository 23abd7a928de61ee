"""End to end, the bot's hooks and menus, with the real dispatcher against the
fake Bot API and a real Redis:

* a player who blocks the bot mid-game: the 403 of the bot's next write to him
  (or Telegram's ``my_chat_member`` update) gives his seat to the AI, the game
  goes on to the end without him, and the group's table message and the other
  players' hand messages say that the AI plays for him;
* ``/lang`` in a group: the group's lobby and table messages speak the group's
  language while each player's hand message keeps his own;
* the command menus published at start-up per language and scope.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits
from tables import OVER
from telegram_bot.buttons.callbacks import LangCb, LobbyOp
from telegram_bot.views import texts
from telegram_bot.views.i18n import (
    COMMANDS,
    GROUP_COMMANDS,
    LANGUAGES,
    PRIVATE_COMMANDS,
    Translator,
)
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import (
    SAFETY,
    Harness,
    assert_no_hidden_cards,
    choose,
    has_game_buttons,
    is_over,
    op,
    play_out,
    press,
    running,
)

CYRILLIC = re.compile("[а-яА-ЯёЁіІїЇєЄґҐ]")


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def table_message(fake: FakeTelegram, group: Chat) -> Message | None:
    """The group's table message (the one that lists the players), once sent."""
    found = [m for m in fake.messages(group) if m.text and "Players" in m.text]
    return found[-1] if found else None


async def takeover_of(h: Harness, tid: str, seat: int) -> None:
    """Until the service says the AI plays ``seat``."""
    deadline = time.monotonic() + SAFETY
    while not (await h.svc.tables.get(tid))[0].seats[seat].ai_controlled:
        assert time.monotonic() < deadline, f"the AI never took seat {seat}"
        await asyncio.sleep(0.02)


async def ai_moved_for(h: Harness, tid: str, seat: int) -> int:
    """Until the event log shows the AI moving for ``seat`` after it took the seat;
    the number of such moves."""
    deadline = time.monotonic() + SAFETY
    while True:
        events = await h.svc.admin.event_page(tid, 0, 100_000)
        taken = [i for i, e in enumerate(events) if e.kind == "takeover" and e.seat == seat]
        moves = (
            [e for e in events[taken[-1] :] if e.kind == "ai" and e.seat == seat] if taken else []
        )
        if moves:
            return len(moves)
        assert time.monotonic() < deadline, f"the AI never moved for seat {seat}"
        await asyncio.sleep(0.02)


async def wait_text(fake: FakeTelegram, message: Message | None, text: str) -> None:
    assert message is not None
    await fake.world.wait_for(
        lambda: text in (message.text or "") or None, SAFETY, f"{text!r} in {message.text!r}"
    )


# ------------------------------------------------------------------ 403 hook
@pytest.mark.slow
async def test_a_player_blocks_the_bot_mid_game_the_403_gives_his_seat_to_the_ai(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(n, language_code="en") for n in ("Ann", "Bob", "Cy")]
        tid, group = await group_lobby(h, "chuvash", humans, 1)
        assert isinstance(group, Chat)
        board = await fake.world.wait_for(lambda: table_message(fake, group), SAFETY)
        await play_out(h, tid, humans, rng=random.Random(11), stop_after=3)
        assert not fake.stats.errors

        # someone who can move now; the victim is another player, whose hand message
        # the bot edits after that move (every move changes what each seat sees)
        mover, victim = None, None
        for u in humans:
            m = await h.hand_message(u, tid)
            if m is not None and choose(m) is not None:
                mover = u
                break
        assert mover is not None, "nobody can move"
        victim = next(u for u in humans if u is not mover)
        others = [u for u in humans if u is not victim]
        table, _s, _v = await h.svc.tables.get(tid)
        seat = table.seat_of(victim.id)
        assert seat is not None
        assert not table.seats[seat].ai_controlled
        # he blocks the bot, and the bot is not told (no my_chat_member update): it
        # learns it from the 403 of its next write to him
        victim.user.blocked = True
        deadline = time.monotonic() + SAFETY
        while not (await h.svc.tables.get(tid))[0].seats[seat].ai_controlled:
            assert time.monotonic() < deadline, "the 403 never gave his seat to the AI"
            for u in others:  # a selection toggle changes nothing: press on
                m = await h.hand_message(u, tid)
                b = choose(m) if m is not None else None
                if b is not None:
                    assert m is not None
                    await press(u, m, b)
                    break
            else:
                await asyncio.sleep(0.02)
        assert ("editMessageText", 403) in fake.stats.errors
        assert {code for _method, code in fake.stats.errors} == {403}

        # the service: the AI plays his seat (he is still seated, may take it back)
        table, _s, _v = await h.svc.tables.get(tid)
        assert table.seats[seat].ai_controlled
        assert table.seats[seat].user == victim.id
        assert not table.seats[seat].left
        events = await h.svc.admin.event_page(tid, 0, 100_000)
        taken = [e for e in events if e.kind == "takeover" and e.seat == seat]
        assert len(taken) == 1
        assert "forbidden" in taken[0].text
        assert not (await h.ui.prefs(victim.id)).started

        # the table is told: the group's table message and the others' hand messages
        told = f"The AI plays for {victim.user.first_name} 🤖"
        await wait_text(fake, board, told)
        for u in others:
            await wait_text(fake, await h.hand_message(u, tid), told)

        # the bot stops writing to him: his hand message is forgotten
        failed = fake.stats.errors[("editMessageText", 403)]
        assert victim.id not in (await h.ui.table(tid)).hands

        # the game goes on without him to the end
        await play_out(h, tid, others, rng=random.Random(12))
        assert await ai_moved_for(h, tid, seat) >= 1
        table, _s, _v = await h.svc.tables.get(tid)
        assert table.status == OVER
        for u in others:
            assert is_over(await h.hand_message(u, tid))
        await wait_text(fake, board, "Game over")
        assert await assert_no_hidden_cards(h, tid, others) > 5
        # only writes to the blocked player failed, and none after his seat went
        assert {code for _method, code in fake.stats.errors} == {403}
        assert sum(fake.stats.errors.values()) == failed


async def test_a_player_blocks_the_bot_while_the_game_waits_for_him(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """Telegram's ``my_chat_member`` update (member -> kicked) hands his seat to
    the AI at once: no 403 would ever come when the game waits for his move only
    (and his turn timer -- the rated lobby's 60 s, #38 -- would hand the seat
    over only after two timeouts, longer than the test waits: SAFETY)."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(n, language_code="en") for n in ("Dee", "Eve")]
        tid, group = await group_lobby(h, "chuvash", humans, 1)
        assert isinstance(group, Chat)
        board = await fake.world.wait_for(lambda: table_message(fake, group), SAFETY)
        table, _s, _v = await h.svc.tables.get(tid)
        by_seat = {table.seat_of(u.id): u for u in humans}
        assert None not in by_seat
        # play until the game waits for one human alone
        deadline = time.monotonic() + SAFETY
        while True:
            _t, state, _v = await h.svc.tables.get(tid)
            assert state is not None
            assert not state.over
            waiting = state.to_act()
            if len(waiting) == 1 and waiting[0] in by_seat:
                seat = waiting[0]
                break
            assert time.monotonic() < deadline, "the game never waited for one player"
            for u in humans:
                m = await h.hand_message(u, tid)
                b = choose(m) if m is not None else None
                if b is not None:
                    assert m is not None
                    await press(u, m, b)
                    break
            else:
                await asyncio.sleep(0.02)
        victim = by_seat[seat]
        other = next(u for u in humans if u is not victim)
        take_back = Translator("en")(texts.TAKE_BACK)
        victim.block()
        await takeover_of(h, tid, seat)
        # the AI made his move for him: the game moved on without anyone else pressing
        assert await ai_moved_for(h, tid, seat) >= 1
        events = await h.svc.admin.event_page(tid, 0, 100_000)
        assert any(e.kind == "takeover" and e.seat == seat for e in events)
        assert not (await h.ui.prefs(victim.id)).started
        told = f"The AI plays for {victim.user.first_name} 🤖"
        table, _s, _v = await h.svc.tables.get(tid)
        if table.status != OVER:
            await wait_text(fake, board, told)
            await wait_text(fake, await h.hand_message(other, tid), told)
        # he unblocks the bot: a new hand message, and he takes his seat back
        assert table.status != OVER
        seen = len(fake.messages(victim.chat))
        victim.unblock()
        back = await fake.world.wait_for(
            lambda: next(
                (
                    m
                    for m in fake.messages(victim.chat)[seen:]
                    if any(take_back in t for t in m.button_texts)
                ),
                None,
            ),
            SAFETY,
            "a new hand message with the take-back button",
        )
        # its id is known once the send returns: recorded right after (by
        # compare-and-set, #28), not the moment he sees it
        for _ in range(int(SAFETY / 0.05)):
            if (await h.ui.table(tid)).hands.get(victim.id) == back.message_id:
                break
            await asyncio.sleep(0.05)
        assert (await h.ui.table(tid)).hands.get(victim.id) == back.message_id
        answer = await victim.press(text=take_back, message=back).wait_answer(SAFETY)
        assert not answer.get("show_alert"), answer
        table, _s, _v = await h.svc.tables.get(tid)
        assert not table.seats[seat].ai_controlled
        await play_out(h, tid, humans, rng=random.Random(5))
        assert is_over(await h.hand_message(other, tid))
        assert is_over(await h.hand_message(victim, tid))
        assert (await h.svc.tables.get(tid))[0].status == OVER


# ------------------------------------------------------------------ /lang in a group
async def test_lang_in_a_group_sets_the_groups_language_hands_keep_their_own(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann = fake.add_user("Ann", language_code="en")  # the group's creator
        bob = fake.add_user("Bob", language_code="uk")  # a plain member
        group = ann.create_group("Card night", bob)
        ann.add_bot_to(group)
        await ann.wait_message("/new", group, timeout=SAFETY)  # the how-to, in English
        for u in (ann, bob):
            u.start()
            await u.wait_message(timeout=SAFETY)

        # only the group's admins set its language (issue 13); his own stays his
        bob.send("/lang ru", group)
        await bob.wait_message("адміністратори", group, timeout=SAFETY)
        assert (await h.ui.prefs(group.id)).lang is None
        ann.send("/lang ru", group)
        await ann.wait_message("Язык группы теперь русский", group, timeout=SAFETY)
        assert (await h.ui.prefs(group.id)).lang == "ru"
        assert (await h.ui.prefs(ann.id)).lang is None
        ann.send("/help", group)
        await ann.wait_message("Играйте здесь в Чувашского петуха", group, timeout=SAFETY)
        ann.send("/help")
        await ann.wait_message("Play Chuvash Rooster", timeout=SAFETY)
        ann.send("how do I play?")  # plain text in private gets a short help (issue 13)
        await ann.wait_message("I play by commands and buttons", timeout=SAFETY)

        # a lobby opened now speaks Russian, whoever opens it
        ann.send("/new", group)
        lobby = await ann.wait_message("Ссылка-приглашение", group, timeout=SAFETY)
        code = (lobby.text or "").rsplit("start=", 1)[1].split()[0]
        answer = await bob.press(data=op(code, LobbyOp.JOIN), message=lobby).wait_answer(SAFETY)
        assert answer["text"] == Translator("uk")(texts.JOINED)  # his own language
        assert CYRILLIC.search(answer["text"])
        await wait_text(fake, lobby, "Bob")
        # an admin changes it while the lobby is open: the lobby message follows
        ann.send("/lang uk", group)
        await ann.wait_message("Мова групи тепер українська", group, timeout=SAFETY)
        await wait_text(fake, lobby, "Посилання-запрошення")
        assert "Ссылка-приглашение" not in (lobby.text or "")

        await ann.press(data=op(code, LobbyOp.START), message=lobby).wait_answer(SAFETY)
        await h.wait_hands(code, [ann, bob])
        board = await fake.world.wait_for(
            lambda: next(
                (m for m in fake.messages(group) if m.text and "Гравці" in m.text and m.buttons),
                None,
            ),
            SAFETY,
            "the table message in Ukrainian",
        )
        ann_hand, bob_hand = await h.hand_message(ann, code), await h.hand_message(bob, code)
        assert ann_hand is not None
        assert bob_hand is not None
        assert "Players" in (ann_hand.text or "")
        assert "Гравці" in (bob_hand.text or "")
        assert not CYRILLIC.search(ann_hand.text or "")
        assert "My cards" not in " ".join(b["text"] for b in board.buttons)

        # mid-game, the /lang keyboard in the group: the table message turns English,
        # the hands stay as they were
        ann.send("/lang", group)
        choice = await ann.wait_message(
            lambda m: any(b.get("callback_data") == LangCb(lang="en").pack() for b in m.buttons),
            group,
            timeout=SAFETY,
        )
        answer = await ann.press(data=LangCb(lang="en").pack(), message=choice).wait_answer(SAFETY)
        assert answer["text"] == "The group's language is now English."
        assert (await h.ui.prefs(group.id)).lang == "en"
        await wait_text(fake, board, "Players")
        assert "Гравці" not in (board.text or "")
        assert "Players" in (ann_hand.text or "")
        assert "Гравці" in (bob_hand.text or "")

        await play_out(h, code, [ann, bob], rng=random.Random(2))
        await wait_text(fake, board, "Game over")
        assert "Гру закінчено" in (bob_hand.text or "")
        assert "Game over" in (ann_hand.text or "")
    assert not fake.stats.errors, fake.stats.error_texts


# ------------------------------------------------------------------ command menus
def _expected(lang: str) -> dict[str, str]:
    """Command -> description for ``lang`` as the catalogs have it."""
    _ = Translator(lang)
    return {name: _(text) for name, text in COMMANDS}


async def test_command_menus_per_language_and_scope(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False):
        menus = fake.world.commands
        every = [name for name, _text in COMMANDS]
        in_groups = [name for name in every if name in GROUP_COMMANDS]
        assert set(in_groups) == set(GROUP_COMMANDS)
        # private chats: every command; groups: those that work there (/play is a
        # private game, /start a private welcome)
        assert "play" not in in_groups
        assert "start" not in in_groups
        expected_keys = {("default", "")} | {
            (scope, lang)
            for scope in ("all_private_chats", "all_group_chats")
            for lang in (*LANGUAGES, "")
        }
        assert set(menus) == expected_keys
        for lang in (*LANGUAGES, ""):
            private = menus[("all_private_chats", lang)]
            grouped = menus[("all_group_chats", lang)]
            # /top works only in a group: not in the private menu (issue 13)
            assert [c["command"] for c in private] == list(PRIVATE_COMMANDS)
            assert "top" not in PRIVATE_COMMANDS
            assert [c["command"] for c in grouped] == in_groups
            want = _expected(lang or "en")
            assert all(c["description"] == want[c["command"]] for c in private)
            assert all(c["description"] == want[c["command"]] for c in grouped)
        assert menus[("default", "")] == menus[("all_private_chats", "")]

        english = {c["command"]: c["description"] for c in menus[("all_private_chats", "en")]}
        assert english["lang"] == "Change the language"
        assert menus[("all_private_chats", "")] == menus[("all_private_chats", "en")]
        for lang in ("ru", "uk"):
            menu = {c["command"]: c["description"] for c in menus[("all_private_chats", lang)]}
            for name, text in menu.items():
                assert CYRILLIC.search(text), (lang, name, text)
                assert text != english[name], (lang, name)
        ru = {c["command"]: c["description"] for c in menus[("all_private_chats", "ru")]}
        uk = {c["command"]: c["description"] for c in menus[("all_private_chats", "uk")]}
        assert ru["lang"] == "Сменить язык"
        assert uk["lang"] == "Змінити мову"
        assert ru != uk

        # what people see (Telegram's scope order): by chat type and app language
        ru_user = fake.add_user("Rita", language_code="ru")
        de_user = fake.add_user("Dirk", language_code="de")
        uk_user = fake.add_user("Yulia", language_code="uk")
        group = ru_user.create_group("G", de_user, uk_user)
        ru_user.add_bot_to(group)
        seen = fake.world.commands_for
        assert seen(ru_user.user, group) == menus[("all_group_chats", "ru")]
        assert seen(de_user.user, group) == menus[("all_group_chats", "")]
        assert seen(uk_user.user, uk_user.chat) == menus[("all_private_chats", "uk")]
        assert seen(de_user.user, de_user.chat) == menus[("all_private_chats", "")]

        # every command of the group menu answers in a group, in the group's language
        await ru_user.wait_message(has_text, group, timeout=SAFETY)  # the how-to
        for name in in_groups:
            ru_user.send(f"/{name}", group)
            reply = await ru_user.wait_message(has_text, group, timeout=SAFETY)
            assert CYRILLIC.search(reply.text or ""), (name, reply.text)
        # and /play (private only) starts a game in the private chat
        uk_user.start()
        await uk_user.wait_message(timeout=SAFETY)
        uk_user.send("/play chuvash")
        await uk_user.wait_message(has_game_buttons, timeout=SAFETY)
    assert not fake.stats.errors, fake.stats.error_texts


def has_text(message: Message) -> bool:
    return bool(message.text)
