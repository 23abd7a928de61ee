"""The live page's words (#42), pure: its last moves are the bot's own
sentences in the reader's language, as plain text (a hostile name stays
text, never markup nor an escaped entity), a spectator's name no card
beyond the public ones; the title in his language; Chuvash's suit order
(C3) where trumps would be; the face ranks as his language names them."""

from __future__ import annotations

import json
import random

import pytest

import engine
from engine import public_view
from engine.cards import card_name
from tables import PLAYING, Loaded, Seat, Table
from telegram_bot.views.cards import glyph
from telegram_bot.views.fair import table_commitment
from telegram_bot.views.page import faces, may_watch, page_view

HOSTILE = "<b>Ann</b> & co"


def loaded(variant: str, moves: int, seed: int = 5) -> Loaded:
    seats = (Seat(user=1, name=HOSTILE), Seat(user=2, name="Bob"), Seat(user=None, name="AI 1"))
    table = Table(
        id="Tbl_-012345", chat=-100, creator=1, variant=variant, options={}, max_seats=4,
        timer=0, seats=seats, status=PLAYING, game_no=1, seed=seed, spectators=True,
    )  # fmt: skip
    state = engine.new_game(variant, 3, seed)
    rng = random.Random(seed)
    for _ in range(moves):
        if state.over:
            break
        seat = state.to_act()[0]
        state.apply(rng.choice(state.legal_actions(seat)))
    return Loaded(version=3, table=table, state=state, deadline=None, result=None)


def test_last_moves_are_the_bots_words_as_plain_text() -> None:
    read = loaded("chuvash", 30)
    mine = page_view(read, 1, "ru")
    assert mine["title"] == "Чувашский петух"
    assert mine["suit_order"] == ["S", "H", "D", "C"]  # C3: ♠ > ♥ > ♦ > ♣
    assert 1 <= len(mine["lines"]) <= 4
    words = " ".join(mine["lines"])
    assert "&lt;" not in words
    assert "&amp;" not in words
    assert any(w in words for w in ("ходит", "кроет", "подкидывает", "берёт", "Бито", "пас"))
    en = page_view(read, 1, "en")["lines"]
    assert en != mine["lines"]
    said = [
        line
        for moves in range(1, 12)
        for line in page_view(loaded("chuvash", moves), 2, "en")["lines"]
        if line.startswith(HOSTILE)  # the name as he chose it: text, not markup
    ]
    assert said


def test_a_spectators_lines_name_only_public_cards() -> None:
    for seed in range(6):
        read = loaded("shchelkovsky", 40, seed)
        seen = page_view(read, 99, "ru")  # not seated: the public view
        assert seen["you"] is None
        state = read.state
        assert state is not None
        shown = public_view(state)
        public = {c for pair in shown["table"] for c in pair if c} | {shown["trump_card"]}
        for e in shown["events"]:
            if e["kind"] != "draw":
                public |= set(e.get("cards", ()))
        hidden = {card_name(c) for seat in range(3) for c in state.hand(seat)} - public
        words = " ".join(seen["lines"])
        for card in hidden:
            assert f" {glyph(card, 'ru')}" not in words, (seed, card, words)


def test_shchelkovsky_has_no_suit_order_and_faces_follow_the_language() -> None:
    assert page_view(loaded("shchelkovsky", 0), 1, "uk")["suit_order"] is None
    assert faces("ru") == {"J": "В", "Q": "Д", "K": "К", "A": "Т"}
    assert faces("en") == {}


@pytest.mark.parametrize(
    ("chat", "spectators", "watcher_may"),
    [(-100_5, True, True), (-100_5, False, False), (None, True, False), (77, True, False)],
)
def test_only_a_groups_game_has_spectators_in_the_page(
    chat: int | None, spectators: bool, watcher_may: bool
) -> None:
    """As ``/watch`` says (issue #16): a private game is watched by nobody --
    the page let anyone with its code watch it (hostile review)."""
    table = Table(
        id="T1",
        chat=chat,
        creator=1,
        variant="chuvash",
        options={},
        max_seats=2,
        timer=0,
        seats=(Seat(user=1, name="Ann"), Seat(user=2, name="Bob")),
        spectators=spectators,
    )
    assert may_watch(table, 1)  # a player, always
    assert may_watch(table, 3) is watcher_may


def test_the_page_shows_the_deals_commitment_never_its_key() -> None:
    """Issue #42 point 5: the fair-deal commitment, as the game's first message
    shows it -- a hash of the key; the key itself only with the replay."""
    read = loaded("shchelkovsky", 10, seed=987_654_321_123)
    for user in (1, 3):  # a player, a spectator
        shown = page_view(read, user, "en")
        assert shown["fair"] == table_commitment(read.table)
        assert "987654321123" not in json.dumps(shown)
