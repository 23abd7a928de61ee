"""A viewer's own view is enough to play (#24 item 1): a player's hand shown in
the group carries what he needs of the table -- the cards on it, whose move it
is, the move's deadline -- so nobody waits for the group's table message (which
the group's flood limit may hold back) to know what to do.  Pure: real engine
states of both variants, rendered as each seat's in-group hand."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

import engine
from sandbox.fake_api.text import parse_text
from tables import PLAYING, Loaded, Seat, Table
from telegram_bot.buttons.moves import Selection
from telegram_bot.state.chat_state import TableUi
from telegram_bot.state.snapshot import Snapshot, group_of
from telegram_bot.views.cards import glyph
from telegram_bot.views.hand import hand_screen

GROUP = -100_777
USERS = (11, 12, 13)
NAMES = ("Ann", "Bob", "Cid")
DEADLINE_MS = (int(time.time()) + 45) * 1000  # a move's deadline, 45 s from now
OPTIONS = {"chuvash": {}, "shchelkovsky": {"decks": 2, "remove_joker": True}}


def in_group_snapshot(variant: str, moves: int) -> Snapshot:
    """A group game of three humans after ``moves`` moves, each hand in the group
    (negative ids: ephemeral messages), the move's deadline set."""
    seats = tuple(Seat(user=u, name=n) for u, n in zip(USERS, NAMES, strict=True))
    table = Table(
        id="Own_-view01", chat=GROUP, creator=USERS[0], variant=variant,
        options=OPTIONS[variant], max_seats=4, timer=60, seats=seats, status=PLAYING,
        game_no=1, seed=24,
    )  # fmt: skip
    state = engine.new_game(variant, 3, 24, OPTIONS[variant])
    for _ in range(moves):
        state.apply(state.legal_actions(state.to_act()[0])[0])
    loaded = Loaded(version=9, table=table, state=state, deadline=DEADLINE_MS, result=None)
    ui = TableUi(hands={u: -(i + 1) for i, u in enumerate(USERS)}, group_lang="en")
    return Snapshot(loaded, ui)


@pytest.mark.parametrize("variant", ["chuvash", "shchelkovsky"])
@pytest.mark.parametrize("moves", [1, 3])
def test_an_in_group_hand_shows_the_table_whose_move_and_the_deadline(
    variant: str, moves: int
) -> None:
    snap = in_group_snapshot(variant, moves)
    assert group_of(snap.table) == GROUP
    state = snap.loaded.state
    assert state is not None
    public = engine.public_view(state)
    on_table = [c for pair in public["table"] for c in pair if c is not None]
    assert on_table, "the test wants cards on the table"
    to_act = list(public["to_act"])
    at = datetime.fromtimestamp(DEADLINE_MS / 1000, UTC)
    for seat, user in enumerate(USERS):
        assert snap.ui.hands[user] < 0  # his hand is the ephemeral one, in the group
        text, _markup = hand_screen(snap, seat, "en", Selection())
        plain, entities = parse_text(text, "HTML")
        # the cards on the table
        for card in on_table:
            assert glyph(card, "en") in plain, (seat, card)
        # whose move: the seats that must act are marked, and the status says it
        for s in to_act:
            name = NAMES[s] + (" (you)" if s == seat else "")
            assert f"▶ {name}:" in plain, (seat, plain)
        if seat in to_act:
            assert "Your move" in plain
        else:
            waiting = ", ".join(NAMES[s] for s in to_act)
            assert f"Waiting for {waiting}" in plain, plain
        # the deadline: Telegram's date_time entity, each client shows it relative
        times = [e for e in entities if e["type"] == "date_time"]
        assert [e["unix_time"] for e in times] == [int(at.timestamp())]
        assert "the move ends" in plain
