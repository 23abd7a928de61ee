"""A search player: perfect-information Monte Carlo over sampled deals (PIMC).

For each decision with more than one sensible action:

1. what the seat may know is read from the public record
   (:class:`~engine.ai.public_info.PublicInfo`: own hand, counts, table, discard
   pile, the face-up trump card, cards seen when a seat took them, a shown
   pass-ticket trump) -- never from another seat's hand or the stock;
2. the unseen cards are dealt at random consistently with that knowledge
   (:class:`~engine.ai.determinize.Determinizer`), each opponent's share weighted
   by what his public play says he may hold (:class:`~engine.ai.beliefs.Beliefs`;
   ``beliefs=False``: uniformly);
3. every candidate action is tried on the same sampled deals (common random
   numbers) and each sampled game is played out on the fast representation
   (:mod:`engine.ai.fastplay`) with every seat played by the heuristic player's
   rules (:mod:`engine.ai.playout_policy`; ``playout_policy="greedy"``: the
   greedy policy of :mod:`engine.ai.rollout`); a playout that runs past ``playout_limit``
   actions is scored by hand sizes;
4. the candidate that avoids losing most often wins; the heuristic player's choice
   (:class:`~engine.ai.heuristic.HeuristicPlayer`) is kept unless another candidate
   does better by ``margin``.

Where it searches: everywhere in Chuvash; in Shchelkovsky once the stock holds
at most 40 cards (``DEFAULT_SEARCH_STOCK``: before, the heuristic's move).

The options are one value, :class:`SearchConfig`; the product's levels play its
presets ``HARD`` and ``EXPERT``, the other fields are knobs of ``bench/ai.py`` and
the tests.

Budget: at most ``iterations`` playouts and about ``steps`` simulated actions per
decision (by default 400 and 12,000, times ``BUDGET_SCALE``: twice that in
2-player Shchelkovsky), in whole rounds (deterministic: the same seed, view and public history
give the same decision) and, optionally, ``time_budget`` seconds read
from an injected :data:`~engine.clock.Clock`.  The random numbers of one decision
are seeded by the player's seed, the ply and the seat only.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from engine.actions import COVER, LEAD, Action
from engine.ai.beliefs import Beliefs
from engine.ai.determinize import Determinizer
from engine.ai.endgame import DEFAULT_NODE_LIMIT, EndgameSolver, Unsolved, solvable
from engine.ai.fastplay import FastGame, FastPolicy, PlayoutPolicy
from engine.ai.heuristic import HeuristicPlayer
from engine.ai.playout_policy import HeuristicPolicy
from engine.ai.public_info import PublicInfo
from engine.ai.values import chuvash_values, shchelkovsky_values
from engine.cards import SUIT_MASKS, iter_bits
from engine.clock import Clock
from engine.errors import IllegalAction
from engine.state import LEAD_PHASE, GameState

DEFAULT_ITERATIONS = 400
"""At most this many playouts per decision."""
DEFAULT_STEPS = 12_000
"""At most about this many simulated actions per decision (playouts stop after the
round that reaches it): measured by ``bench/ai.py`` to keep decisions within the
issue's time goals (median <= 150 ms, p99 <= 400 ms on one core)."""
DEFAULT_PLAYOUT_LIMIT = 160
"""Actions per playout before it is scored by hand sizes (long multi-deck games)."""
NODE_COST = 3
"""A solver node (a copy, a move, the legal moves, a key) costs about this many
simulated playout actions of the budget."""
PLAYOUT_POLICIES: dict[str, Callable[[GameState, float], PlayoutPolicy]] = {
    "greedy": FastPolicy,
    "heuristic": HeuristicPolicy,
}
"""The playout policies: the greedy one (:class:`FastPolicy`) or the heuristic
player's rules (:class:`HeuristicPolicy`)."""
DEFAULT_PLAYOUT_POLICY = {"chuvash": "heuristic", "shchelkovsky": "heuristic"}
"""Each variant's playout policy, as measured by ``bench/ai.py --playout-policy``
(2 players against the heuristic, the same deals, seed 26): the heuristic
policy's playouts lost 30 of 300 Chuvash games against 65 for the greedy ones,
and 19 of 100 Shchelkovsky games against 29."""
DEFAULT_SEARCH_STOCK: dict[str, float] = {"chuvash": math.inf, "shchelkovsky": 40}
"""Each variant's stock size above which the heuristic's choice is played
unsearched.  A 2-deck Shchelkovsky stock starts at 95 cards: a playout from there
runs some 300 actions, past the playout limit, and is scored by hand sizes,
which say little that early.  Searching only from 40 cards on lost 18 of the 100
games of seed 26 against the heuristic (always searching: 19), in a third of
the time (``bench/ai.py --search-stock``)."""
BUDGET_SCALE: dict[tuple[str, int], float] = {("shchelkovsky", 2): 2.0}
"""The default budget's multiplier by variant and player count.  Two-player
Shchelkovsky searches only late (``DEFAULT_SEARCH_STOCK``), where twice the
budget paid: 8 lost of the 100 seed-26 games against the heuristic (18 with the
default budget), its decisions still well within the time goals; over 1,000
(with beliefs) it lost 119 (11.9 %, 10.0-14.1 %).  Three times (#43's fourth
turn, ``bench/ai.py --budget-scale 1.5``) lost 102 of the same 1,000 (10.2 %,
8.5-12.2 %; the difference's 95 % interval -4.4 to +1.0 points) for half again
a searched decision's CPU time (p99 299 against 208 ms, every decision): not a
clear gain, so twice stays (bench/README.md)."""
DEFAULT_BELIEFS: dict[str, bool] = {"chuvash": True, "shchelkovsky": True}
"""Each variant's default for dealing hidden cards by beliefs (``engine.ai.beliefs``),
as measured by ``bench/ai.py --beliefs on|off`` on the same deals of seed 26 (2
players against the heuristic, bench/README.md): Chuvash 26 lost of 300 with
beliefs, 30 without; Shchelkovsky 32 of 280 either way -- no harm, a gain within
noise, and sampled hands closer to the real ones."""
EXPERT_SCALE = 4.0
"""The expert level's budget: this many times the hard level's (``bench/ai.py``
measures its decision times: the goal is a median under one second)."""
MAX_CANDIDATES = 12
COVERS_PER_ATTACK = 2


@dataclass(frozen=True)
class SearchConfig:
    """The search's options, one value.  The product plays two presets (``HARD``,
    ``EXPERT``); every other field is a knob that ``bench/ai.py`` and the tests
    turn to measure or pin down one behaviour."""

    iterations: int | None = None
    """At most this many playouts a decision (None: ``DEFAULT_ITERATIONS`` times
    the variant's and player count's ``BUDGET_SCALE`` and ``budget_scale``)."""
    steps: int | None = None
    """About this many simulated actions a decision (None: ``DEFAULT_STEPS``, scaled
    as ``iterations``)."""
    budget_scale: float = 1.0
    """The default budget's multiplier on top of ``BUDGET_SCALE`` (the expert level's)."""
    playout_limit: int = DEFAULT_PLAYOUT_LIMIT
    time_budget: float | None = None
    """Seconds a decision, read from ``clock`` (None: no time limit)."""
    clock: Clock | None = None
    margin: float = 0.03
    """How much better than the heuristic's choice a candidate must score."""
    z: float = 0.0
    """A candidate replaces the heuristic's choice only if it beats it, on the same
    sampled deals, by more than ``z`` standard errors of the difference."""
    endgame_nodes: int = DEFAULT_NODE_LIMIT
    """The exact endgame's nodes a decision (0: never solve exactly)."""
    solve_stock: int = 0
    """Two players, at most this many cards in the stock: sampled deals are solved
    (``solve_nodes`` nodes each) rather than played out."""
    solve_nodes: int = 300
    halving: bool = False
    """Half the budget on every candidate, the other half on the better half of them."""
    playout_policy: str | None = None
    """A key of ``PLAYOUT_POLICIES`` (None: the variant's, ``DEFAULT_PLAYOUT_POLICY``)."""
    playout_epsilon: float = 0.1
    """The share of random moves in playouts."""
    search_stock: float | None = None
    """The search runs only once the stock holds at most this many cards (None: the
    variant's, ``DEFAULT_SEARCH_STOCK``); before that the heuristic's choice."""
    beliefs: bool | None = None
    """Deal the hidden cards by what the opponents' play says (:mod:`engine.ai.beliefs`);
    False: uniformly, given what is known; None: the variant's ``DEFAULT_BELIEFS``."""

    def __post_init__(self) -> None:
        if self.iterations is not None and self.iterations < 1:
            raise ValueError("iterations must be at least 1")
        if self.time_budget is not None and self.clock is None:
            raise ValueError("a time budget needs a clock")
        if self.playout_policy is not None and self.playout_policy not in PLAYOUT_POLICIES:
            raise ValueError(f"unknown playout policy {self.playout_policy!r}")


HARD = SearchConfig()
"""The hard level (the ``search`` kind): the defaults."""
EXPERT = SearchConfig(budget_scale=EXPERT_SCALE)
"""The expert level: the hard level on ``EXPERT_SCALE`` times its budget."""


class SearchPlayer:
    """Determinized Monte Carlo search from one seat's public information."""

    name = "search"

    def __init__(
        self, seed: int | str = 0, config: SearchConfig = HARD, *, name: str = "search"
    ) -> None:
        self.seed = seed
        self.config = config
        self.name = name
        self.last_budget = (0, 0)  # the last decision's (iterations, steps)
        self._diffs: list[tuple[float, float, int]] = []  # per candidate: sum d, sum d^2, n
        self.heuristic = HeuristicPlayer(seed)
        self.last_solved: float | None = None  # the exact value of the last decision
        self.last_solved_samples = 0  # sampled deals solved exactly for it
        self._info: dict[int, PublicInfo] = {}
        self._beliefs: dict[int, Beliefs] = {}
        self.last_playouts = 0  # playouts run for the last decision (for tests, benches)
        self.last_counts: list[int] = []  # playouts per candidate, for the last decision
        self.last_candidates: list[Action] = []
        self.last_steps = 0  # actions simulated for the last decision

    def choose(self, state: GameState, seat: int) -> Action | None:
        self.last_playouts = self.last_steps = self.last_solved_samples = 0
        self.last_counts = []
        self.last_candidates = []
        self.last_solved = None
        if state.over or seat not in state.to_act():
            return None
        legal = state.legal_actions(seat)
        if not legal:
            return None
        rng_key = f"{self.seed}:{state.ply}:{seat}"
        self.heuristic.rng.seed(rng_key + ":h")  # its tie-breaks: public inputs only
        base = self.heuristic.choose(state, seat)
        if base is None or len(legal) == 1:
            return base if base is not None else legal[0]
        config = self.config
        search_stock = config.search_stock
        if search_stock is None:
            search_stock = DEFAULT_SEARCH_STOCK[state.variant.name]
        if len(state.stock) > search_stock:
            return base
        # the budget covers one round at least: no more candidates than playouts
        scale = BUDGET_SCALE.get((state.variant.name, state.players), 1.0) * config.budget_scale
        self.last_budget = (
            config.iterations or int(DEFAULT_ITERATIONS * scale),
            config.steps if config.steps is not None else int(DEFAULT_STEPS * scale),
        )
        candidates = self._candidates(state, seat, legal, base)[: self.last_budget[0]]
        if len(candidates) == 1:
            return base
        info = self._info.get(seat)
        if info is None:
            info = self._info[seat] = PublicInfo(seat)
        info.update(state)
        weights = None
        use_beliefs = config.beliefs
        if use_beliefs is None:
            use_beliefs = DEFAULT_BELIEFS[state.variant.name]
        if use_beliefs:
            beliefs = self._beliefs.get(seat)
            if beliefs is None:
                beliefs = self._beliefs[seat] = Beliefs(seat)
            beliefs.update(state)
            weights = beliefs.weights()
        det = Determinizer(state, info, weights)
        if not det.consistent:  # pragma: no cover - contradictory knowledge: play safe
            return base
        if config.endgame_nodes and det.unique and solvable(state):
            exact = self._solve(det, seat, base, random.Random(rng_key))
            if exact is not None:
                return exact
        scores = self._search(det, candidates, random.Random(rng_key))
        return self._pick(candidates, scores, base)

    # -- candidates -------------------------------------------------------------------
    def _candidates(
        self, state: GameState, seat: int, legal: list[Action], base: Action
    ) -> list[Action]:
        """The heuristic's choice first, then a pruned list of legal alternatives."""
        values = (
            chuvash_values()
            if state.variant.name == "chuvash"
            else shchelkovsky_values(state.trump, True)
        )
        out = [base]
        if state.phase == LEAD_PHASE and state.variant.lead_many_of_one_suit:
            out += _chuvash_leads(state, seat, values)
        else:
            per_attack: dict[int, int] = {}
            covers = sorted(
                (a for a in legal if a.kind == COVER), key=lambda a: (values[a.cards[0]], a)
            )
            for a in covers:
                k = per_attack.get(a.attack, 0)
                if k < COVERS_PER_ATTACK:
                    per_attack[a.attack] = k + 1
                    out.append(a)
            out += [a for a in legal if a.kind != COVER]
        seen: set[Action] = set()
        unique = []
        for a in out:
            if a not in seen:
                seen.add(a)
                unique.append(a)
        return unique[:MAX_CANDIDATES]

    # -- the exact endgame -----------------------------------------------------------
    def _solve(
        self, det: Determinizer, seat: int, base: Action, rng: random.Random
    ) -> Action | None:
        """Every card known (the one deal ``det`` allows): the exact move, the
        heuristic's when it is as good; ``None`` when the budget ran out or every
        move loses against perfect play (the sampled search then looks for the
        line most likely to trip the opponent)."""
        solver = EndgameSolver(seat, self.config.endgame_nodes)
        try:
            value, action = solver.solve(det.sample(rng), prefer=base)
        except Unsolved:
            self.last_steps += solver.nodes
            return None
        self.last_steps += solver.nodes
        if action is None or value <= 0.0:
            return None
        self.last_solved = value
        return action

    # -- search -------------------------------------------------------------------------
    def _search(
        self, det: Determinizer, candidates: list[Action], rng: random.Random
    ) -> list[float]:
        config = self.config
        clock = config.clock
        k = len(candidates)
        deadline = None
        if config.time_budget is not None and clock is not None:
            deadline = clock() + config.time_budget
        totals = [0.0] * k
        counts = [0] * k
        seat = det.seat
        d_sum = [0.0] * k
        d_sq = [0.0] * k
        rounds = 0
        self._diffs = []
        # late in a two-player game each sampled deal is solved exactly instead of
        # played out greedily (every card of a sample is known, the stock's order too)
        solver = None
        if (
            config.solve_nodes
            and sum(1 for s in det.base.sizes if s) == 2
            and det.stock_len <= config.solve_stock
        ):
            solver = EndgameSolver(seat, config.solve_nodes)
        policy: PlayoutPolicy | None = None  # the playout policy (per game)
        # whole rounds (every candidate on one sampled deal) while the budget lasts
        active = list(range(k))
        self.last_counts = counts
        self.last_candidates = candidates
        halve = config.halving and k > 2
        iterations, steps = self.last_budget
        while self.last_playouts + len(active) <= iterations and self.last_steps < steps:
            if halve and (2 * self.last_playouts >= iterations or 2 * self.last_steps >= steps):
                # half the budget spent: the rest goes to the better half (the
                # heuristic's choice always stays, so that it is compared on every deal)
                halve = False
                means = _means(totals, counts, active)
                rest = sorted(range(1, k), key=lambda i: (-means[i], i))
                active = [0, *sorted(rest[: max(1, (k - 1) // 2)])]
            sample = det.sample(rng)
            fresh = True
            if rounds:
                self._diffs = [(d_sum[i], d_sq[i], rounds) for i in range(k)]
            before = totals[:]
            for i in active:
                action = candidates[i]
                if deadline is not None and clock is not None and clock() >= deadline:
                    return _means(totals, counts, active)
                game = sample.copy()
                try:
                    game.apply(action)  # checked: a candidate is legal in every sample
                except IllegalAction:  # pragma: no cover - defensive: never seen
                    counts[i] += 1
                    continue
                if solver is not None:
                    try:
                        totals[i] += solver.value(game, fresh)
                    except Unsolved:
                        solver.table.clear()
                    else:
                        self.last_steps += 1 + NODE_COST * solver.nodes
                        self.last_solved_samples += 1
                        counts[i] += 1
                        self.last_playouts += 1
                        fresh = False
                        continue
                    fresh = True
                    self.last_steps += NODE_COST * solver.nodes
                if policy is None:
                    name = config.playout_policy or DEFAULT_PLAYOUT_POLICY[game.variant.name]
                    policy = PLAYOUT_POLICIES[name](game, config.playout_epsilon)
                fast = FastGame(game)
                self.last_steps += 1 + fast.playout(rng, policy, config.playout_limit)
                totals[i] += _score(fast, seat)
                counts[i] += 1
                self.last_playouts += 1
            got = [t - b for t, b in zip(totals, before, strict=True)]
            for i in active:
                d = got[i] - got[0]
                d_sum[i] += d
                d_sq[i] += d * d
            rounds += 1
        self._diffs = [(d_sum[i], d_sq[i], rounds) for i in range(k)]
        return _means(totals, counts, active)

    def _pick(self, candidates: list[Action], scores: list[float], base: Action) -> Action:
        best = max(range(len(candidates)), key=lambda i: (scores[i], -i))
        margin, z = self.config.margin, self.config.z
        if scores[best] - scores[0] <= margin:
            return base
        if z > 0 and len(self._diffs) == len(candidates):
            total, squares, n = self._diffs[best]
            if n < 2:
                return base
            mean = total / n
            # one pseudo-observation of spread 1: a few equal rounds prove nothing
            var = max(0.0, squares - n * mean * mean + 1.0) / n
            if mean <= z * math.sqrt(var / n):
                return base
        return candidates[best]


def _means(totals: list[float], counts: list[int], active: list[int]) -> list[float]:
    """Each candidate's mean score; -1 for one left out (by halving) or never run."""
    keep = set(active)
    return [
        t / c if c and i in keep else -1.0
        for i, (t, c) in enumerate(zip(totals, counts, strict=True))
    ]


def _score(game: GameState | FastGame, seat: int) -> float:
    """1 = not the loser, 0 = the loser, 0.5 = a draw; a playout cut short: how
    small the seat's hand is among the hands still in play."""
    if game.over:
        if game.draw:
            return 0.5
        return 0.0 if game.loser == seat else 1.0
    sizes = [s for s in game.sizes if s]
    mine = game.sizes[seat]
    if not mine:
        return 1.0
    bigger = sum(1 for s in sizes if s > mine) + 0.5 * (sum(1 for s in sizes if s == mine) - 1)
    return 0.2 + 0.8 * bigger / max(1, len(sizes) - 1)


def _chuvash_leads(state: GameState, seat: int, values: tuple[float, ...]) -> list[Action]:
    """C6 candidates: every single card, and per suit its 2..k cheapest cards."""
    mask = state.masks[seat]
    limit = state.sizes[state.defender]
    out = [Action(seat, LEAD, (c,)) for c in iter_bits(mask)]
    for suit_mask in SUIT_MASKS:
        cards = sorted(iter_bits(mask & suit_mask), key=lambda c: (values[c], c))
        for k in range(2, min(limit, len(cards)) + 1):
            out.append(Action(seat, LEAD, tuple(sorted(cards[:k]))))
    return out


__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_STEPS",
    "EXPERT",
    "EXPERT_SCALE",
    "HARD",
    "SearchConfig",
    "SearchPlayer",
]
