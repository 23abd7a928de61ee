"""Names users chose, however hostile, in every screen: the HTML parses the way
Telegram parses it (the fake Bot API's parser) and shows the name literally."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from aiogram.types import InlineKeyboardMarkup

import engine
from sandbox.fake_api.text import parse_text
from tables import OPEN, OVER, PLAYING, Loaded, Seat, Table
from tables.ratings import BoardRow, PlayerRatings
from telegram_bot.buttons.moves import Selection
from telegram_bot.state.chat_state import TableUi
from telegram_bot.state.snapshot import Snapshot
from telegram_bot.views.format import short_name
from telegram_bot.views.hand import hand_screen
from telegram_bot.views.lobby import (
    VariantStats,
    lobby_screen,
    render_rating_top,
    render_ratings,
    render_stats,
    started_lobby_screen,
)
from telegram_bot.views.table import table_screen

HOSTILE = [
    "Carl <3",
    "Tom & Jerry",
    "</b>",
    "<a href=x>",
    "<b>bold</b>",
    "&lt;not an entity&gt;",
    "x" * 63 + "<",
    "שלום עליכם",  # right to left
    "Eve \u202eevil",  # RIGHT-TO-LEFT OVERRIDE: would reverse the rest of the line
    "Ana 🃏👩‍👩‍👧",
]
GROUP, ME, OTHER = -100_500, 7, 8

Screen = tuple[str, InlineKeyboardMarkup | None]


def snapshot(name: str, status: str, *, ai_plays_me: bool = False) -> Snapshot:
    seats = (
        Seat(user=ME, name=name, ai="heuristic" if ai_plays_me else None),
        Seat(user=OTHER, name=name + " 2"),
        Seat(user=None, name=name + " AI", ai="heuristic"),
    )
    table = Table(
        id="Abc_-123456",
        chat=GROUP,
        creator=ME,
        variant="chuvash",
        options={},
        max_seats=4,
        timer=60,
        seats=seats,
        status=status,
        game_no=0 if status == OPEN else 1,
    )
    state = None
    if status != OPEN:
        state = engine.new_game("chuvash", 3, seed=5)
        if status == OVER:
            while not state.over:
                seat = state.to_act()[0]
                state.apply(state.legal_actions(seat)[0])
    loaded = Loaded(version=3, table=table, state=state, deadline=None, result=None)
    ui = TableUi(hands={ME: 10, OTHER: 11}, lobby_messages={GROUP: 1, ME: 2}, group_lang="en")
    return Snapshot(loaded, ui)


SCREENS: dict[str, Callable[[str], Screen]] = {
    "lobby": lambda n: lobby_screen(snapshot(n, OPEN), GROUP, "bot"),
    "started lobby (group)": lambda n: started_lobby_screen(snapshot(n, PLAYING), GROUP, "bot"),
    "started lobby (private)": lambda n: started_lobby_screen(snapshot(n, PLAYING), ME, "bot"),
    "hand": lambda n: hand_screen(snapshot(n, PLAYING), 1, "en", Selection()),
    "hand, the AI plays": lambda n: hand_screen(
        snapshot(n, PLAYING, ai_plays_me=True), 0, "en", Selection()
    ),
    "table": lambda n: table_screen(snapshot(n, PLAYING, ai_plays_me=True), "bot"),
    "game over (hand)": lambda n: hand_screen(snapshot(n, OVER), 1, "ru", Selection()),
    "game over (table)": lambda n: table_screen(snapshot(n, OVER), "bot"),
    "stats": lambda n: (render_stats(n, [VariantStats("chuvash", 3, 1)], locale="en"), None),
    "top": lambda n: (
        render_rating_top(
            {
                "chuvash": [BoardRow(1, n, 1200, False, 30), BoardRow(2, n + " 2", 990, True, 2)],
                "shchelkovsky": [],
            },
            locale="en",
        ),
        None,
    ),
    "rating": lambda n: (
        render_ratings(PlayerRatings(1, n, {}, None, 0, None, 0), n, locale="en", now_ms=0),
        None,
    ),
}


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("screen", list(SCREENS))
def test_a_hostile_name_is_shown_literally(screen: str, name: str) -> None:
    text, _markup = SCREENS[screen](name)
    plain, entities = parse_text(text, "HTML")  # raises as Telegram would answer 400
    assert short_name(name) in plain
    # the fair deal's commitment and seed (issue #16) are code in a quote: no name there
    fair = [e for e in entities if e["type"] in ("code", "expandable_blockquote")]
    for e in fair:
        assert short_name(name) not in plain[e["offset"] : e["offset"] + e["length"]]
    assert all(e["type"] in ("bold", "italic") for e in entities if e not in fair), entities


BIDI = {"שלום עליכם", "Eve \u202eevil"}


@pytest.mark.parametrize("name", HOSTILE)
@pytest.mark.parametrize("screen", list(SCREENS))
def test_a_name_cannot_reorder_the_text_around_it(screen: str, name: str) -> None:
    """A name that could change the direction of its line (an override, a
    right-to-left script) is shown in a bidi isolate, closed right after it; any
    other name as it is."""
    text, _markup = SCREENS[screen](name)
    plain, _entities = parse_text(text, "HTML")
    if name in BIDI:
        assert "\u2068" + short_name(name) in plain
        for line in plain.splitlines():  # each isolate is closed on its own line
            assert line.count("\u2068") == line.count("\u2069"), line
    else:
        assert "\u2068" not in plain
        assert "\u2069" not in plain
