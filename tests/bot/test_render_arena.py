"""What an arena shows (#27, telegram_bot/views/arena.py): the set-up, the
arena's message in each of its states, the podium; every label whole on a
phone, in every language; times as date_time entities; names escaped."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

import engine
from tables import OVER, PLAYING, GameResult, LiveError, Loaded, Seat, Table
from tables.arena_rules import CANCELLED, FINISHED, RUNNING, SCHEDULED, Arena, ArenaPlayer
from tables.ratings import Settlement
from telegram_bot.buttons.callbacks import (
    ArenaCb,
    ArenaOp,
    ArenaSetupCb,
    LobbyOp,
    ReplayCb,
    parse_lobby,
)
from telegram_bot.buttons.moves import Selection
from telegram_bot.state.chat_state import TableUi
from telegram_bot.state.snapshot import Snapshot
from telegram_bot.views.arena import (
    ARENA_ABOUT,
    MINUTES_CHOICES,
    SEATS_CHOICES,
    START_CHOICES,
    Setup,
    arena_screen,
    message_link,
    podium_screen,
    setup_screen,
    standings_screen,
)
from telegram_bot.views.hand import hand_screen
from telegram_bot.views.i18n import LANGUAGES, Translator
from telegram_bot.views.table import table_screen
from telegram_bot.views.texts import ARENA_RESULT, NOT_ALLOWED, refusal
from tests.bot.test_render_labels import too_wide

T0 = 1_800_000_000_000


def arena(status: str = RUNNING, players: int = 20) -> Arena:
    ps = tuple(
        ArenaPlayer(u, f"Player {u}", score=40 - 2 * u, games=u % 7, streak=2 if u == 1 else 0)
        for u in range(1, players + 1)
    )
    return Arena(
        id="abcDEF12",
        chat=-5,
        creator=1,
        variant="shchelkovsky",
        seats=3,
        starts=T0,
        ends=T0 + 45 * 60_000,
        status=status,
        players=ps,
        games=17,
    )


@pytest.mark.parametrize("locale", LANGUAGES)
def test_no_label_is_cut_on_a_phone(locale: str) -> None:
    _ = Translator(locale)
    cut = []
    for variant in ("chuvash", "shchelkovsky"):
        for seats in SEATS_CHOICES:
            for minutes in MINUTES_CHOICES:
                for start in START_CHOICES:
                    _text, kb = setup_screen(Setup(variant, seats, minutes, start), _)
                    cut += too_wide(locale, kb)
    for status in (SCHEDULED, RUNNING):
        cut += too_wide(locale, arena_screen(arena(status), _, T0 + 1)[1])
        live = "https://t.me/c/1234567890/77"
        cut += too_wide(locale, standings_screen(arena(status), _, T0 + 1, live)[1])
    assert cut == []


def test_the_set_up_carries_every_choice_in_its_buttons() -> None:
    text, kb = setup_screen(Setup("shchelkovsky", 3, 60, 15), Translator("en"))
    assert "Durak Shchelkovsky" in text
    assert "Players per table: 3" in text
    assert "in 15 min" in text
    datas = [ArenaSetupCb.unpack(b.callback_data or "") for row in kb.inline_keyboard for b in row]
    assert all(len((b.callback_data or "").encode()) <= 64 for r in kb.inline_keyboard for b in r)
    go = datas[-1]
    assert (go.op, go.v, go.n, go.m, go.s) == ("go", "s", 3, 60, 15)
    marked = [b.text for row in kb.inline_keyboard for b in row if b.text.startswith("✓")]
    assert marked == ["✓ Durak Shchelkovsky", "✓ 3 seats", "✓ 60 min", "✓ +15 min"]
    assert Setup.of(go) == Setup("shchelkovsky", 3, 60, 15)


def test_the_arena_message_in_each_state() -> None:
    _ = Translator("en")
    text, kb = arena_screen(arena(SCHEDULED), _, T0 - 60_000)
    assert f'<tg-time unix="{T0 // 1000}" format="t">' in text
    assert kb is not None
    ops = [ArenaCb.unpack(b.callback_data or "").op for b in kb.inline_keyboard[0]]
    assert ops == [ArenaOp.JOIN, ArenaOp.LEAVE]
    text, kb = arena_screen(arena(RUNNING), _, T0 + 60_000)
    assert 'format="r"' in text  # the end, relative in each reader's words
    assert "1. Player 1 — <b>38</b> 🔥" in text  # on fire
    assert "… and 5 more" in text  # 15 shown
    assert "Players: 20" in text
    text, kb = arena_screen(arena(RUNNING), _, T0 + 46 * 60_000)
    assert kb is None  # time is up: nobody joins any more
    assert "Time is up" in text
    for status, words in ((FINISHED, "The arena is over."), (CANCELLED, "was cancelled")):
        text, kb = arena_screen(arena(status), _, T0 + 50 * 60_000)
        assert words in text
        assert kb is None


def test_a_copy_of_the_standings_says_when_it_was_true_and_links_the_live_one() -> None:
    """#41: a member's ``/arena`` answer said «Nobody has joined yet.» long after
    people joined: a copy says as of when, and links to the arena's message
    where Telegram has a link for it (a supergroup's message; a basic group's
    has none)."""
    _ = Translator("en")
    asked = T0 + 60_000
    empty = replace(arena(RUNNING), players=())
    text, kb = standings_screen(empty, _, asked)
    assert f'As of <tg-time unix="{asked // 1000}" format="t">' in text
    assert "Nobody had joined by then." in text
    assert "Nobody has joined yet." not in text
    assert "Join, and the bot seats you" not in text  # no Join button to press here
    assert kb is None  # no link without one
    assert "Nobody has joined yet." in arena_screen(empty, _, asked)[0]  # the live one
    assert message_link(-5, 9) is None  # a basic group's message has no link
    assert message_link(-100234567, 9) is None  # nor one whose id reads «-100…»
    link = message_link(-1001234567890, 9)
    assert link == "https://t.me/c/1234567890/9"
    _text, kb = standings_screen(arena(RUNNING), Translator("ru"), asked, link)
    assert kb is not None
    assert [(b.text, b.url) for b in kb.inline_keyboard[0]] == [("🏟 Текущая таблица", link)]


def test_names_are_escaped_and_the_podium_lists_the_best_three() -> None:
    a = arena(FINISHED, players=4)
    a = a.with_player(replace(a.players[0], name="<b>Eve</b>"))
    text = podium_screen(a, Translator("ru"))
    assert "&lt;b&gt;Eve&lt;/b&gt;" in text
    medals = re.findall(r"^(🥇|🥈|🥉) ", text, re.M)
    assert medals == ["🥇", "🥈", "🥉"]
    assert "Арена завершена" in text
    empty = podium_screen(replace(a, players=()), Translator("uk"))
    assert "Ніхто не зіграв" in empty


@pytest.mark.parametrize("locale", LANGUAGES)
def test_arena_refusals_say_why(locale: str) -> None:
    _ = Translator(locale)
    generic = refusal(LiveError("busy?", "x"), _)
    for code in ("arena_running", "arena_over", "no_arena"):
        assert refusal(LiveError(code, "x"), _) != generic, code


def game_over(arena: str) -> Snapshot:
    """A finished 2-player game in a group, seated by ``arena`` ('' = none)."""
    seats = (Seat(user=1, name="Ann"), Seat(user=2, name="Bob"))
    table = Table(
        id="Abc_-123456", chat=-5, creator=1, variant="chuvash", options={}, max_seats=2,
        timer=60, seats=seats, status=OVER, game_no=1, seed=7, arena=arena,
    )  # fmt: skip
    state = engine.new_game("chuvash", 2, 7)
    while not state.over:
        state.apply(state.legal_actions(state.to_act()[0])[0])
    res = GameResult(table.id, 1, "chuvash", -5, (1, 2), 1, False, (), 0)
    return Snapshot(Loaded(5, table, state, None, res), TableUi(group_lang="en"))


def ops(markup: object) -> tuple[list[object], list[object]]:
    """The lobby ops (*Rematch*) and the replay ops of a keyboard."""
    datas = [b.callback_data or "" for row in getattr(markup, "inline_keyboard", []) for b in row]
    lobby: list[object] = [cb.op for d in datas if (cb := parse_lobby(d)) is not None]
    return lobby, [ReplayCb.unpack(d).op for d in datas if d.startswith("rp:")]


def test_an_arena_game_over_offers_no_rematch() -> None:
    """#38: an arena's table has no rematch (docs/ARENA.md): its result -- in a
    hand, or on a table message -- shows no *Rematch*, whose press only drew
    «A rematch is possible once the game is over.» under "Game over"; *Replay*
    and *Check the deal* stay."""
    plain = game_over("")
    assert ops(hand_screen(plain, 0, "en", Selection())[1])[0] == [LobbyOp.REMATCH]
    arena = game_over("abcDEF12")
    for text, markup in (
        hand_screen(arena, 0, "en", Selection()),
        hand_screen(arena, 1, "ru", Selection()),
        table_screen(arena, "bot"),
    ):
        assert "Game over" in text or "Игра окончена" in text
        lobby, replay = ops(markup)
        assert lobby == []
        assert len(replay) == 2


@pytest.mark.parametrize("locale", LANGUAGES)
def test_an_arena_rematch_refusal_says_the_arena_seats_again(locale: str) -> None:
    """#38: the service's refusal of an arena table's rematch has words of its
    own, not those of a rematch asked before the game is over."""
    _ = Translator(locale)
    said = refusal(LiveError("not_allowed", "x", action="arena_rematch"), _)
    assert said == _(NOT_ALLOWED["arena_rematch"])
    assert said != refusal(LiveError("not_allowed", "x", action="rematch"), _)
    assert said != refusal(LiveError("not_allowed", "x"), _)


def test_an_arena_games_hand_says_it_is_one() -> None:
    """#41: an arena game's hand never said it was one, nor whose points are at
    stake: its first line does, in every language; an ordinary game's does not."""
    from telegram_bot.views import texts
    from tests.bot.test_render_fair import snap

    for locale in LANGUAGES:
        _ = Translator(locale)
        first = hand_screen(snap(PLAYING, arena="abcDEF12"), 0, locale, Selection())[0]
        assert first.splitlines()[0] == "🏟 " + _(texts.ARENA_HAND)
        plain = hand_screen(snap(PLAYING), 0, locale, Selection())[0]
        assert "🏟" not in plain


@pytest.mark.parametrize("locale", ["en", "ru", "uk"])
def test_the_arena_set_up_says_its_start_with_the_ticked_button_s_word(locale: str) -> None:
    """#41 (sandbox journeys): «Начало: сразу» over a ticked «✓ сейчас»; the
    summary line uses the word of the start button that is ticked."""
    from telegram_bot.views.arena import Setup, setup_screen
    from telegram_bot.views.i18n import Translator

    _ = Translator(locale)
    text, markup = setup_screen(Setup(), _)
    assert "✓ " + _("now") in [b.text for row in markup.inline_keyboard for b in row]
    [start] = [line for line in text.splitlines() if line.startswith(_("Start: now")[:4])]
    assert start.endswith(" " + _("now")), start


@pytest.mark.parametrize("locale", LANGUAGES)
def test_the_standings_say_what_the_fire_means_when_it_shows(locale: str) -> None:
    """#41 (sandbox journeys): «1. Dave — 8 🔥 (games: 3)» and nothing said what
    🔥 is; a line under the standings does, only while someone is on fire."""
    from telegram_bot.views.arena import FIRE_LEGEND

    _ = Translator(locale)
    legend = _(FIRE_LEGEND)
    assert legend.startswith("🔥")
    assert legend in arena_screen(arena(RUNNING), _, T0 + 60_000)[0].splitlines()
    cold = replace(arena(RUNNING), players=tuple(replace(p, streak=0) for p in arena().players))
    assert "🔥" not in arena_screen(cold, _, T0 + 60_000)[0]


@pytest.mark.parametrize(
    ("locale", "seats"), [("en", "3 per table"), ("ru", "по 3 за столом"), ("uk", "по 3 за столом")]
)
def test_the_arena_says_how_many_sit_at_a_table_not_a_table_s_number(
    locale: str, seats: str
) -> None:
    """#41 (sandbox journeys): «за столом 2 · 45 мин» read as «at table No 2»."""
    text = arena_screen(arena(RUNNING), Translator(locale), T0 + 60_000)[0]
    assert text.splitlines()[1].startswith(seats + " · ")


@pytest.mark.parametrize(("locale", "who"), [("en", "/arena"), ("ru", "/arena"), ("uk", "/arena")])
def test_the_set_up_does_not_tell_its_admin_how_to_start_an_arena(locale: str, who: str) -> None:
    """#41 (the sandbox journeys): the set-up, which only the admin who typed
    /arena sees, told him «A group admin starts one with /arena»; the rules of
    an arena stay."""
    _ = Translator(locale)
    text, _kb = setup_screen(Setup("chuvash", 2, 45, 0), _)
    assert who not in text
    assert _(ARENA_ABOUT) in text  # the scoring is still explained


@pytest.mark.parametrize("locale", LANGUAGES)
def test_an_arena_games_result_says_its_places_score_arena_points(locale: str) -> None:
    """#41 (the sandbox journeys): an arena game's result said only «🎲 Not
    rated…», never that it was an arena game whose places score points; it
    says so where the ratings would be, in a hand and on the table message."""
    _ = Translator(locale)
    settled = Settlement("Abc_-123456", 1, "chuvash", False, "operator")
    arena = replace(game_over("abcDEF12"), settlement=settled)
    shown = (  # his hand in his language; the table message in the group's (en)
        (hand_screen(arena, 0, locale, Selection())[0], _),
        (table_screen(arena, "bot")[0], Translator("en")),
    )
    for text, said in shown:
        assert said(ARENA_RESULT) in text
        assert "🎲" not in text
    plain = replace(game_over(""), settlement=settled)
    assert _(ARENA_RESULT) not in hand_screen(plain, 0, locale, Selection())[0]
