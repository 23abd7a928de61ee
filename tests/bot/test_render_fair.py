"""The fair deal and spectators in the screens (issue #16, pure): the commitment
while the game is played, the seed and the check command once it is over, the
*Replay* and *Watch* buttons, a spectator's screen without any hand."""

from __future__ import annotations

from dataclasses import replace

import pytest

import engine
from engine.fairness import commitment
from sandbox.fake_api.text import parse_text
from tables import OVER, PLAYING, GameResult, Loaded, Seat, Table
from telegram_bot.buttons.callbacks import ReplayCb, WatchCb
from telegram_bot.buttons.moves import Selection
from telegram_bot.state.chat_state import TableUi
from telegram_bot.state.snapshot import Snapshot
from telegram_bot.views.hand import hand_screen
from telegram_bot.views.table import table_screen, watch_screen
from tests.bot.e2e_kit import cards_in

SEED = 424242


def snap(
    status: str, *, chat: int | None = -100, spectators: bool = True, result: bool = True
) -> Snapshot:
    seats = (Seat(user=1, name="Ann"), Seat(user=2, name="Bob"), Seat(name="AI", ai="heuristic"))
    table = Table(
        id="Abc_-123456", chat=chat, creator=1, variant="chuvash", options={}, max_seats=4,
        timer=0, seats=seats, status=status, game_no=1, seed=SEED, spectators=spectators,
    )  # fmt: skip
    state = engine.new_game("chuvash", 3, SEED)
    if status == OVER:
        while not state.over:
            state.apply(state.legal_actions(state.to_act()[0])[0])
    res = GameResult(table.id, 1, "chuvash", chat, (1, 2, 3), 2, False, (), 0) if result else None
    loaded = Loaded(version=5, table=table, state=state, deadline=None, result=res)
    return Snapshot(loaded, TableUi(group_lang="en"))


def data(markup: object) -> list[str]:
    rows = getattr(markup, "inline_keyboard", None) or []
    return [b.callback_data or "" for row in rows for b in row]


DIGEST = commitment(SEED, "chuvash", 3, {})


def test_table_shows_the_commitment_and_watch() -> None:
    text, markup = table_screen(snap(PLAYING), "bot")
    plain, entities = parse_text(text, "HTML")
    assert DIGEST in plain
    assert str(SEED) not in plain  # the seed stays secret while the game is played
    assert any(e["type"] == "expandable_blockquote" for e in entities)
    assert WatchCb(table="Abc_-123456").pack() in data(markup)
    _text, markup = table_screen(snap(PLAYING, spectators=False), "bot")
    assert not any(d.startswith("w:") for d in data(markup))


def test_game_over_reveals_the_seed_and_offers_replay() -> None:
    for text, markup in (
        table_screen(snap(OVER), "bot"),
        hand_screen(snap(OVER), 0, "en", Selection()),
    ):
        plain, _e = parse_text(text, "HTML")
        assert f"Seed of the deal: {SEED}" in plain
        assert f"python -m engine verify {SEED} {DIGEST} --variant chuvash --players 3" in plain
        assert ReplayCb.unpack(data(markup)[-1]).game == 1
    # ended by an operator: no result, so no record to replay
    _text, markup = table_screen(snap(OVER, result=False), "bot")
    assert not any(d.startswith("rp:") for d in data(markup))


@pytest.mark.parametrize("chat", [None, 5])
def test_a_private_game_shows_the_commitment_in_the_hand(chat: int | None) -> None:
    text, _m = hand_screen(snap(PLAYING, chat=chat), 0, "en", Selection())
    assert DIGEST in parse_text(text, "HTML")[0]
    text, _m = hand_screen(snap(PLAYING), 0, "en", Selection())  # a group's: on the table
    assert DIGEST not in parse_text(text, "HTML")[0]


def test_a_spectator_sees_no_hand() -> None:
    s = snap(PLAYING)
    state = s.loaded.state
    assert state is not None
    text, markup = watch_screen(s, "en")
    public, _m = table_screen(s, "bot")
    assert cards_in(text) == cards_in(public)
    hands = {engine.card_name(c) for seat in range(3) for c in state.hand(seat)}
    assert not cards_in(text) & hands - cards_in(public)
    assert markup is None
    over = replace(s, loaded=snap(OVER).loaded)
    _text, markup = watch_screen(over, "en")
    assert [d[:3] for d in data(markup)] == ["rp:"]  # Replay, never Rematch
