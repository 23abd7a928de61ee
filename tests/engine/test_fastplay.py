"""The fast playout representation (issue #26) agrees with the rules engine.

:class:`engine.ai.fastplay.FastGame` inlines the rules for speed; the rules engine
(:class:`engine.state.GameState`) stays the reference.  Each test plays a fast
playout -- random, or greedy as the search player's (:class:`FastPolicy`) -- then
replays its actions through ``GameState.apply`` (checked) with the same random
numbers, and requires at every move that the engine (with
:class:`engine.ai.rollout.Policy` for the greedy ones) would have made the same
choice, and at the end the same result (loser or draw, finishing order, hands,
stock).

Coverage (#39): :data:`FASTPLAY_RULES` lists every rule id of RULES.md the fast
representation writes a second time, with the situations of each; one test
replays fixed seeds of every configuration and requires every situation to
occur (a rule fastplay starts to implement must be listed: the ids its source
cites are checked against the list).

Randomness: hypothesis draws the variant, player count, options, seed and how far
the game is played (by the engine) before the fast playout takes over; a failure
prints them.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from engine import GameState, from_deal, new_game, parse_cards
from engine.actions import Action
from engine.ai import fastplay
from engine.ai.fastplay import FastGame, FastPolicy
from engine.ai.playout_policy import HeuristicPolicy
from engine.ai.rollout import Policy, playout, random_playout
from engine.base import Event
from engine.state import BOUT_PHASE, OVER_PHASE
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


# --------------------------------------------------------------- rule coverage

FASTPLAY_RULES: dict[str, tuple[str, ...]] = {
    # RULES.md §0, the common model (by its headings)
    "§0 Seats": ("a lead at a seat further than the next one, the next being out",),
    "§0 Hand limit": ("a bout whose uncovered cards reach the defender's hand",),
    "§0 Throw-in priority": ("a throw-in by a seat after the first attacker",),
    "§0 End of a bout": ("beaten off", "taken"),
    "§0 Leaving the game": ("a seat out",),
    "§0 Who leads next": ("a lead that skips a seat out",),
    "§0 Game over": ("a loser", "a draw"),
    "§0 Passing": ("a pass",),
    # Chuvash Rooster
    "C6": ("a lead of several cards of one suit",),
    "C8": ("a take before any cover ends the bout",),
    "C9": ("a cover",),
    "C10": ("a throw-in after a cover",),
    "C11": ("a throw-in after a late take",),
    "C12": ("beaten off: the defender leads", "taken: the seat after him leads"),
    "C13": ("a draw where the defender is not the last to draw",),
    "C14": ("a loser",),
    # Durak Shchelkovsky
    "S6": ("a lead of one card",),
    "S8": ("a transfer", "a pass-ticket"),
    "S9": ("a cover",),
    "S10": ("a throw-in", "a throw-in after a take", "the cap of ten reached"),
    "S10a": ("a self-throw",),
    "S11": ("a take",),
    "S12": ("beaten off: the defender leads", "taken: the seat after him leads"),
    "S13": ("a draw where the final defender draws last, out of clockwise order",),
    "S14": ("a loser",),
}
"""Every rule of RULES.md that :mod:`engine.ai.fastplay` writes a second time, and
the situations of it the differential replays below must meet.  What fastplay
reads from the engine's own tables is not written twice and not listed: the
beating relation (C4 / S4: ``GameState.beat``, ``engine.variants.beaters``), the
hand size, the throw-in cap's size, the variant's switches (``Variant``: C6 / S6
leads, S8, C8, S13 drawing order) and the C6 lead patterns (``engine.legal``)."""

DERIVED_RULES = frozenset({"C4", "S4"})
"""Rules fastplay reads from the engine's tables (the beating relation) and does
not write again: cited in its source, not in :data:`FASTPLAY_RULES`."""


def situations(ref: GameState, action: Action) -> set[tuple[str, str]]:
    """Apply ``action`` to ``ref`` (checked) and name the (rule, situation) pairs of
    :data:`FASTPLAY_RULES` it shows, read off the rules engine's state and events."""
    before = (ref.attacker, ref.defender, ref.covered_any, ref.taking)
    first = len(ref.history)
    ref.apply(action)
    seen = _move_situations(ref, action, *before)
    if ref.phase == BOUT_PHASE and ref.uncovered and ref.uncovered == ref.sizes[ref.defender]:
        seen.add(("§0 Hand limit", "a bout whose uncovered cards reach the defender's hand"))
    return seen | _event_situations(ref, ref.history[first:], before[0])


def _move_situations(
    ref: GameState, action: Action, attacker: int, defender: int, covered_any: bool, taking: bool
) -> set[tuple[str, str]]:
    """What the move itself shows (``ref``: the state after it)."""
    chuvash = ref.variant.name == "chuvash"
    v = "C" if chuvash else "S"
    seat, kind = action.seat, action.kind
    seen: set[tuple[str, str]] = set()
    if kind == "lead":
        if chuvash and len(action.cards) > 1:
            seen.add(("C6", "a lead of several cards of one suit"))
        if not chuvash:
            seen.add(("S6", "a lead of one card"))
        if ref.defender != (seat + 1) % ref.players:
            seen.add(("§0 Seats", "a lead at a seat further than the next one, the next being out"))
    elif kind == "throw":
        seen.add(_throw_situation(chuvash, seat == defender, taking))
        if seat not in (defender, attacker):
            seen.add(("§0 Throw-in priority", "a throw-in by a seat after the first attacker"))
        if ref.thrown == ref.variant.throw_cap:
            seen.add(("S10", "the cap of ten reached"))
    elif kind == "take" and (not chuvash or not covered_any):
        seen.add(
            ("S11", "a take") if not chuvash else ("C8", "a take before any cover ends the bout")
        )
    else:
        seen |= {
            "cover": {(f"{v}9", "a cover")},
            "transfer": {("S8", "a transfer")},
            "show_trump": {("S8", "a pass-ticket")},
            "pass": {("§0 Passing", "a pass")},
        }.get(kind, set())
    return seen


def _throw_situation(chuvash: bool, self_throw: bool, taking: bool) -> tuple[str, str]:
    if self_throw:
        return "S10a", "a self-throw"
    if chuvash:
        return (
            ("C11", "a throw-in after a late take")
            if taking
            else ("C10", "a throw-in after a cover")
        )
    return "S10", "a throw-in after a take" if taking else "a throw-in"


def _event_situations(ref: GameState, events: list[Event], attacker: int) -> set[tuple[str, str]]:
    """What followed the move (the bout's end, drawing, seats out, the game's end)."""
    v = "C" if ref.variant.name == "chuvash" else "S"
    n = ref.players
    seen: set[tuple[str, str]] = set()
    drawers = [e.seat for e in events if e.kind == "draw"]
    for e in events:
        if e.kind == "bout_end":
            taken = e.detail == "taken"
            seen.add(("§0 End of a bout", "taken" if taken else "beaten off"))
            if not ref.over:
                seen.add(
                    (f"{v}12", "taken: the seat after him leads")
                    if taken
                    else (f"{v}12", "beaten off: the defender leads")
                )
                if ref.attacker != ((e.seat + 1) % n if taken else e.seat):
                    seen.add(("§0 Who leads next", "a lead that skips a seat out"))
            # C13 / S13: the defender among the drawers, not last clockwise
            if e.seat in drawers and e.seat != (attacker - 1) % n:
                if v == "C" and drawers[-1] != e.seat:
                    seen.add(("C13", "a draw where the defender is not the last to draw"))
                if v == "S" and drawers[-1] == e.seat and len(drawers) > 1:
                    seen.add(
                        (
                            "S13",
                            "a draw where the final defender draws last, out of clockwise order",
                        )
                    )
        elif e.kind == "out":
            seen.add(("§0 Leaving the game", "a seat out"))
        elif e.kind == "game_over" and e.detail == "draw":
            seen.add(("§0 Game over", "a draw"))
        elif e.kind == "game_over":
            seen |= {("§0 Game over", "a loser"), (f"{v}14", "a loser")}
    return seen


COVERAGE_GAMES = {"chuvash": 16, "shchelkovsky": 3}
"""Fast playouts per configuration, random and greedy (as the search player's) in
turn: a Chuvash game costs a few milliseconds, a Shchelkovsky one far more."""


def coverage_games() -> list[tuple[GameState, int, bool]]:
    """(start, seed, greedy) of the replays the coverage test runs: every
    configuration from its deal, and a last bout that ends in a draw (RULES §0:
    the last attacker leads his last card, the last defender covers it with his)."""
    games = [
        (new_game(variant, players, f"cover:{g}", options), 1000 * i + g, g % 2 == 1)
        for i, (variant, players, options) in enumerate(CONFIGS)
        for g in range(COVERAGE_GAMES[variant])
    ]
    last = from_deal(
        "chuvash", {}, [parse_cards(["6C"]), parse_cards(["7C"])], [], first_attacker=0
    )
    return [*games, (last, 0, True)]


def test_the_differential_replays_meet_every_rule_fastplay_writes_again() -> None:
    # the ids are RULES.md's, and those fastplay.py cites are all listed
    rules_md = (Path(__file__).resolve().parents[2] / "docs" / "RULES.md").read_text(
        encoding="utf-8"
    )
    for rule in FASTPLAY_RULES:
        heading = rule.removeprefix("§0 ")
        assert f"**{heading}" in rules_md, rule
    source = Path(fastplay.__file__).read_text(encoding="utf-8")
    cited = set(re.findall(r"\b[CS]\d{1,2}a?\b", source))
    assert cited <= {*FASTPLAY_RULES, *DERIVED_RULES}, cited - {*FASTPLAY_RULES, *DERIVED_RULES}
    # every situation of every listed rule happens in replays that check fastplay
    seen: set[tuple[str, str]] = set()
    for state, seed, greedy in coverage_games():
        fast = FastGame(state)
        trace: list[Action] = []
        policy = FastPolicy(state, 0.3) if greedy else None
        fast.playout(random.Random(seed), policy, 10_000, trace)
        if policy is None:
            replay(state, trace, seed)  # the engine's own choices, checked
        ref = state.copy()
        for action in trace:
            seen |= situations(ref, action)  # checked: an illegal move raises
        assert_same(fast, ref)
    wanted = {(rule, case) for rule, cases in FASTPLAY_RULES.items() for case in cases}
    assert not wanted - seen, sorted(wanted - seen)
