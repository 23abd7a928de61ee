"""The fast playout representation (issue #26) agrees with the rules engine.

:class:`engine.ai.fastplay.FastGame` inlines the rules for speed; the rules engine
(:class:`engine.state.GameState`) stays the reference.  Each test plays a fast
playout -- random, or greedy as the search player's (:class:`FastPolicy`) -- then
replays its actions through ``GameState.apply`` (checked) with the same random
numbers, and requires at every move that the engine (with
:class:`engine.ai.rollout.Policy` for the greedy ones) would have made the same
choice, and at the end the same result (loser or draw, finishing order, hands,
stock).

Randomness: hypothesis draws the variant, player count, options, seed and how far
the game is played (by the engine) before the fast playout takes over; a failure
prints them.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from engine import GameState, new_game
from engine.actions import Action
from engine.ai.fastplay import FastGame, FastPolicy
from engine.ai.playout_policy import HeuristicPolicy
from engine.ai.rollout import Policy, playout, random_playout
from engine.state import OVER_PHASE
from tests.profiles import budget

CONFIGS: list[tuple[str, int, dict[str, Any]]] = [
    *(("chuvash", n, {}) for n in range(2, 7)),
    *(("shchelkovsky", n, {"decks": 2}) for n in range(2, 11)),
    *(("shchelkovsky", n, {"decks": 2, "remove_joker": False}) for n in (2, 3, 6)),
    *(("shchelkovsky", n, {"decks": 4, "remove_joker": False}) for n in (2, 5, 10)),
    *(("shchelkovsky", n, {"decks": 4}) for n in (3, 7)),
]


def advance(state: GameState, steps: int, seed: int) -> None:
    """``steps`` random actions of the rules engine (checked), fewer if it ends."""
    rand = random.Random(f"pre:{seed}").random
    for _ in range(steps):
        if state.phase == OVER_PHASE:
            return
        seats = state.to_act()
        seat = seats[int(rand() * len(seats))]
        action = state.sample_action(seat, rand())
        assert action is not None
        state.apply(action)


def replay(state: GameState, trace: list[Action], seed: int) -> GameState:
    """Replay ``trace`` on a copy of ``state`` with the draws the fast playout used,
    checking every move against the engine's own choice."""
    ref = state.copy()
    rand = random.Random(seed).random
    for i, action in enumerate(trace):
        seats = ref.to_act()
        assert action.seat in seats, (i, action, seats)
        seat = seats[0] if len(seats) == 1 else seats[int(rand() * len(seats))]
        expected = ref.sample_action(seat, rand())
        assert action == expected, (i, action, expected)
        if action.kind != "lead":  # C6 leads are sampled, not all listed
            assert action in ref.legal_actions(seat), (i, action)
        ref.apply(action)  # checked: an illegal move raises
    return ref


def assert_same(fast: FastGame, ref: GameState) -> None:
    assert fast.over == ref.over
    assert (fast.loser, fast.draw) == (ref.loser, ref.draw)
    assert fast.out == ref.out
    assert fast.masks == ref.masks
    assert fast.sizes == ref.sizes
    assert fast.stock == ref.stock
    assert fast.ply == ref.ply
    if fast.counts is not None:
        assert fast.counts == ref.counts
    assert fast.att == [a for a, _ in ref.table]
    assert fast.cov == [c for _, c in ref.table]
    assert (fast.attacker, fast.defender, fast.passer) == (ref.attacker, ref.defender, ref.passer)
    assert (fast.uncovered, fast.taking, fast.covered_any) == (
        ref.uncovered,
        ref.taking,
        ref.covered_any,
    )
    assert (fast.passed, fast.thrown, fast.ranks) == (ref.passed, ref.thrown, ref.table_ranks)
    ticket = None if fast.ticket_seat < 0 else (fast.ticket_seat, fast.ticket_card)
    assert ticket == ref.ticket


@pytest.mark.slow
@budget(3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=st.sampled_from(CONFIGS),
    seed=st.integers(0, 10**9),
    pre=st.integers(0, 200),
)
def test_fast_playouts_agree_with_the_rules_engine(
    config: tuple[str, int, dict[str, Any]], seed: int, pre: int
) -> None:
    variant, players, options = config
    state = new_game(variant, players, seed, options)
    advance(state, pre, seed)
    fast = FastGame(state)
    trace: list[Action] = []
    n = fast.random_playout(random.Random(seed), trace=trace)
    assert n == len(trace)
    assert fast.over
    assert_same(fast, replay(state, trace, seed))


@budget(1, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=st.sampled_from(CONFIGS),
    seed=st.integers(0, 10**9),
    cut=st.integers(1, 120),
)
def test_a_playout_cut_short_leaves_the_engines_state_and_goes_on(
    config: tuple[str, int, dict[str, Any]], seed: int, cut: int
) -> None:
    # mid-bout states (priority, passes, S8 tickets, S10 counts) survive the write-back
    variant, players, options = config
    state = new_game(variant, players, seed, options)
    fast = FastGame(state)
    rng = random.Random(seed)
    trace: list[Action] = []
    fast.random_playout(rng, max_actions=cut, trace=trace)
    assert len(trace) <= cut
    ref = replay(state, trace, seed)
    assert_same(fast, ref)
    # both play on from there with the same generator: the same game
    saved = rng.getstate()
    fast.random_playout(rng)
    again = random.Random()
    again.setstate(saved)
    random_playout(ref, again)
    assert ref.over
    assert_same(fast, ref)


@pytest.mark.parametrize(("variant", "players", "options"), CONFIGS[::3])
def test_the_fast_playout_matches_the_engines_own_playout(
    variant: str, players: int, options: dict[str, Any]
) -> None:
    # the same random numbers give the same game as rollout.random_playout
    for g in range(5):
        slow = new_game(variant, players, f"fp:{g}", options)
        fast = FastGame(slow)
        n_fast = fast.random_playout(random.Random(g))
        n_slow = random_playout(slow, random.Random(g))
        assert n_fast == n_slow
        assert_same(fast, slow)


def test_the_copy_leaves_the_engines_state_alone() -> None:
    state = new_game("shchelkovsky", 3, 5, {"decks": 2})
    before = state.copy()
    FastGame(state).random_playout(random.Random(5))
    assert state == before


@pytest.mark.slow
@budget(2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=st.sampled_from(CONFIGS),
    seed=st.integers(0, 10**9),
    pre=st.integers(0, 200),
    epsilon=st.sampled_from([0.0, 0.1, 0.5]),
    limit=st.sampled_from([40, 160, 10_000]),
)
def test_greedy_fast_playouts_agree_with_the_engines_playouts(
    config: tuple[str, int, dict[str, Any]], seed: int, pre: int, epsilon: float, limit: int
) -> None:
    # the search player's playouts: FastPolicy on FastGame makes the moves that
    # rollout.Policy makes on the rules engine, for the same random numbers
    variant, players, options = config
    state = new_game(variant, players, seed, options)
    advance(state, pre, seed)
    fast = FastGame(state)
    trace: list[Action] = []
    n = fast.playout(random.Random(seed), FastPolicy(state, epsilon), limit, trace)
    ref = state.copy()
    rng = random.Random(seed)
    policy = Policy(ref, rng, epsilon)
    for i, action in enumerate(trace):
        seats = ref.to_act()
        seat = seats[0] if len(seats) == 1 else seats[int(rng.random() * len(seats))]
        expected = policy.choose(ref, seat)
        assert action == expected, (i, action, expected)
        ref.apply(action)  # checked
    assert n == len(trace) == ref.ply - state.ply
    assert ref.over or n == limit
    assert_same(fast, ref)
    # and rollout.playout itself gets there too
    again = state.copy()
    playout(again, Policy(again, random.Random(seed), epsilon), limit)
    assert again == ref


@budget(1.5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    config=st.sampled_from(CONFIGS),
    seed=st.integers(0, 10**9),
    pre=st.integers(0, 200),
    epsilon=st.sampled_from([0.0, 0.1]),
)
def test_heuristic_playouts_play_legal_moves_to_the_engines_result(
    config: tuple[str, int, dict[str, Any]], seed: int, pre: int, epsilon: float
) -> None:
    # HeuristicPolicy has no twin on the rules engine: its moves are replayed
    # through GameState.apply, checked, and must reach the same state
    variant, players, options = config
    state = new_game(variant, players, seed, options)
    advance(state, pre, seed)
    fast = FastGame(state)
    trace: list[Action] = []
    fast.playout(random.Random(seed), HeuristicPolicy(state, epsilon), 3000, trace)
    ref = state.copy()
    for i, action in enumerate(trace):
        assert action.seat in ref.to_act(), (i, action)
        ref.apply(action)  # checked: an illegal move raises
    assert_same(fast, ref)
