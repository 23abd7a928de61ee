"""Small helpers for the rule tests: deals written as card names, actions in the
short text form (``"0:L6C7C"`` = seat 0 leads 6C 7C), and a checker that an illegal
action raises the right code and changes nothing."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from engine import Action, GameState, IllegalAction, from_deal, parse_card, state_to_json
from engine.cards import card_names, parse_cards, suit_index


def cards(text: str) -> list[int]:
    return parse_cards(text.split())


def deal(
    variant: str,
    hands: Sequence[str],
    stock: str = "",
    *,
    first: int | None = 0,
    trump: str | None = None,
    options: dict[str, object] | None = None,
    previous_loser: int | None = None,
) -> GameState:
    """A game from an explicit deal; ``hands`` and ``stock`` (top first) as
    space-separated card names."""
    return from_deal(
        variant,
        options,
        [cards(h) for h in hands],
        cards(stock),
        trump=suit_index(trump) if trump else None,
        first_attacker=first,
        previous_loser=previous_loser,
    )


def act(text: str) -> Action:
    seat, _, rest = text.partition(":")
    return Action.from_text(int(seat), rest)


def play(state: GameState, *moves: str) -> GameState:
    """Apply each move; every one must also be offered by ``legal_actions`` (throw-ins
    of several cards are checked card by card)."""
    for move in moves:
        a = act(move)
        legal = state.legal_actions(a.seat)
        if a.kind == "throw":
            for c in a.cards:
                assert Action.throw(a.seat, c) in legal, (move, legal)
        else:
            assert a in legal, (move, legal)
        state.apply(a)
    return state


def illegal(state: GameState, move: str, code: str) -> IllegalAction:
    """``move`` must raise IllegalAction(code), change nothing, and not be listed as legal."""
    a = act(move)
    before = state_to_json(state)
    with pytest.raises(IllegalAction) as info:
        state.apply(a)
    assert info.value.code == code, info.value.message
    assert state_to_json(state) == before
    with pytest.raises(IllegalAction):
        state.check(a)
    assert a not in state.legal_actions(a.seat)
    return info.value


def hand(state: GameState, seat: int) -> list[str]:
    return card_names(state.hand(seat))


def table(state: GameState) -> list[list[str | None]]:
    return [[card_names([a])[0], card_names([c])[0] if c >= 0 else None] for a, c in state.table]


def c(name: str) -> int:
    return parse_card(name)
