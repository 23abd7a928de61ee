"""The exact two-player endgame (issue 26): the solver's value equals exhaustive
minimax on small endings of both variants, its move keeps that value, and the
search player uses it only when every card is known to its seat.

The endings are reached by seeded random play (the seed is in each test's id):
a two-player game is played at random until its stock is empty and the hands
are small, so they hold everything real endings hold (an open discard pile, a
bout in progress, a shown trump, S8 transfers).
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from engine import GameState, new_game
from engine.ai import HeuristicPlayer, SearchConfig, SearchPlayer
from engine.ai.endgame import EndgameSolver, Unsolved, exhaustive_value, solvable
from engine.cards import SUIT_MASKS
from engine.state import OVER_PHASE

# one worker runs these one after another (#37): the soak's three bot processes
# never share the two cores with the CPU-bound solver and tournament tests
pytestmark = pytest.mark.xdist_group("heavy")

VARIANTS = [("chuvash", {}), ("shchelkovsky", {"decks": 2})]


def ending(variant: str, options: dict[str, object], seed: int, cards: int) -> GameState | None:
    """A solvable two-player position with at most ``cards`` cards in hands and on
    the table, reached by random play from the deal of ``seed`` (None if the game
    ended first)."""
    rng = random.Random(seed)
    state = new_game(variant, 2, seed, options)
    while state.phase != OVER_PHASE:
        if solvable(state) and sum(state.sizes) + in_play(state) <= cards:
            return state
        seats = state.to_act()
        seat = seats[int(rng.random() * len(seats))]
        action = state.sample_action(seat, rng.random())
        assert action is not None
        state.apply(action, checked=False)
    return None


def in_play(state: GameState) -> int:
    return sum(1 + (cover >= 0) for _attack, cover in state.table)


def endings(
    variant: str,
    options: dict[str, object],
    cards: int,
    count: int,
    keep: Callable[[GameState], bool] | None = None,
) -> list[GameState]:
    out: list[GameState] = []
    seed = 0
    while len(out) < count:
        state = ending(variant, options, seed, cards)
        if state is not None and (keep is None or keep(state)):
            out.append(state)
        seed += 1
    return out


def no_trump_in_hand(state: GameState) -> bool:
    """No S8 pass-ticket can be shown: the exhaustive reference stays small (a
    pass-ticket may send an attack back and forth, and a line through a loop is
    not remembered)."""
    return state.trump is None or not any(m & SUIT_MASKS[state.trump] for m in state.masks)


CASES = [
    ("chuvash", {}, 8, 12, None),
    ("shchelkovsky", {"decks": 2}, 7, 20, no_trump_in_hand),
    ("shchelkovsky", {"decks": 2}, 5, 30, None),
]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("variant", "options", "cards", "count", "keep"),
    CASES,
    ids=["chuvash-8-cards", "shchelkovsky-7-cards-no-trumps", "shchelkovsky-5-cards"],
)
def test_the_solver_agrees_with_exhaustive_play_on_small_endings(
    variant: str,
    options: dict[str, object],
    cards: int,
    count: int,
    keep: Callable[[GameState], bool] | None,
) -> None:
    seen_values: set[float] = set()
    for state in endings(variant, options, cards, count, keep):
        for seat in range(2):
            memo: dict[object, float] = {}  # positions' values, shared by the calls below
            expected = exhaustive_value(state, seat, memo)
            value, action = EndgameSolver(seat, node_limit=10**7).solve(state)
            assert value == expected, (state.sizes, state.table, seat)
            seen_values.add(value)
            if action is not None:
                # the move it gives keeps the value: the opponent may still move
                # first where he can, so compare with the value of moving now
                child = state.copy()
                child.apply(action)
                moving_now = exhaustive_value(child, seat, memo)
                others = [
                    exhaustive_value(_after(state, a), seat, memo)
                    for a in state.legal_actions(seat)
                ]
                assert moving_now == max(others)
    assert {0.0, 1.0} <= seen_values  # both wins and losses were covered


def _after(state: GameState, action: object) -> GameState:
    child = state.copy()
    child.apply(action)  # type: ignore[arg-type]
    return child


def test_the_solver_gives_up_past_its_budget_and_changes_nothing() -> None:
    state = next(
        s
        for s in (ending("shchelkovsky", {"decks": 2}, seed, cards=30) for seed in range(200))
        if s is not None and sum(s.sizes) >= 14
    )
    before = state.copy()
    with pytest.raises(Unsolved):
        EndgameSolver(0, node_limit=50).solve(state)
    assert state == before


def test_the_solver_is_not_used_while_a_card_is_hidden() -> None:
    state = new_game("chuvash", 2, 7)
    assert not solvable(state)  # a full stock
    three = new_game("chuvash", 3, 7)
    assert not solvable(three)


@pytest.mark.slow
@pytest.mark.parametrize(("variant", "options"), VARIANTS, ids=[v for v, _ in VARIANTS])
def test_the_search_player_plays_the_exact_move_in_a_known_ending(
    variant: str, options: dict[str, object]
) -> None:
    solved = 0
    for state in endings(variant, options, 8, 25, no_trump_in_hand):
        for seat in state.to_act():
            player = SearchPlayer(f"e{seat}", SearchConfig(iterations=12, steps=400))
            action = player.choose(state, seat)
            assert action in state.legal_actions(seat)
            if player.last_solved is None:
                continue
            solved += 1
            assert player.last_playouts == 0  # no sampling once solved
            child = _after(state, action)
            memo: dict[object, float] = {}
            assert exhaustive_value(child, seat, memo) == max(
                exhaustive_value(_after(state, a), seat, memo) for a in state.legal_actions(seat)
            )
    assert solved >= 10


@pytest.mark.slow
def test_a_won_ending_is_won_against_the_heuristic() -> None:
    """Every ending the solver calls won (value 1) for the side to move is won
    when it then plays the solver's moves against the heuristic player."""
    checked = 0
    for state in endings("chuvash", {}, 10, 40):
        seat = state.to_act()[0]
        value, _ = EndgameSolver(seat, node_limit=10**6).solve(state)
        if value != 1.0:
            continue
        checked += 1
        game = state.copy()
        other = HeuristicPlayer(1)
        while game.phase != OVER_PHASE:
            actors = game.to_act()
            s = actors[0]
            if s == seat:
                _, action = EndgameSolver(seat, node_limit=10**6).solve(game)
            else:
                action = other.choose(game, s)
            assert action is not None
            game.apply(action)
        assert game.loser != seat
    assert checked >= 5


@pytest.mark.slow
def test_solving_sampled_deals_late_in_the_game_is_legal_and_deterministic() -> None:
    """``solve_stock`` (an option, off by default): with a few cards left in the
    stock the search solves each sampled deal instead of playing it out; it still
    proposes legal moves only and the same seed gives the same move.  (Chuvash
    with full hands rarely solves within the per-deal budget: C6's many leads.)"""
    variant, options = "shchelkovsky", {"decks": 2}
    decided = solved = 0
    for seed in range(40):
        rng = random.Random(seed)
        state = new_game(variant, 2, seed, options)
        while state.phase != OVER_PHASE and len(state.stock) > 4:
            seats = state.to_act()
            action = state.sample_action(seats[int(rng.random() * len(seats))], rng.random())
            assert action is not None
            state.apply(action, checked=False)
        if state.phase == OVER_PHASE or not state.stock:
            continue
        for seat in state.to_act():
            players = [
                SearchPlayer(f"s{seed}", SearchConfig(iterations=24, steps=3000, solve_stock=6))
                for _ in range(2)
            ]
            moves = [p.choose(state, seat) for p in players]
            assert moves[0] == moves[1]
            solved += players[0].last_solved_samples
            assert moves[0] in state.legal_actions(seat)
            decided += 1
    assert decided >= 10
    assert solved > 0  # the solving path ran


def test_a_huge_z_keeps_the_heuristics_move() -> None:
    """``z``: a deviation must beat the heuristic's move by z standard errors of
    the paired difference; with a huge z it never does, so the move is the one
    a search player that never deviates (a huge margin) plays."""
    compared = 0
    for seed in range(6):
        rng = random.Random(seed)
        state = new_game("chuvash", 2, seed)
        while state.phase != OVER_PHASE and compared < 60:
            seat = state.to_act()[int(rng.random() * len(state.to_act()))]
            strict = SearchPlayer(
                seed, SearchConfig(iterations=24, steps=1500, z=1e9, endgame_nodes=0)
            )
            never = SearchPlayer(
                seed, SearchConfig(iterations=24, steps=1500, margin=10.0, endgame_nodes=0)
            )
            assert strict.choose(state, seat) == never.choose(state, seat)
            compared += 1
            action = state.sample_action(seat, rng.random())
            assert action is not None
            state.apply(action, checked=False)
    assert compared >= 30
