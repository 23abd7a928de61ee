"""Fast playouts for the search player: a greedy policy on a determinized state.

A playout plays a *sampled* state (:mod:`engine.ai.determinize`) to its end, so the
policy may look at every hand: they are guesses, not the real hidden cards.  It is
the heuristic player's ideas (:mod:`engine.ai.heuristic`) reduced to bitmask
look-ups: lead the cheapest card, cover with the cheapest beater or take, throw in
cheap cards, and it proposes only legal actions, so actions are applied with
``checked=False`` (the rules' checks stay on every public path: ``GameState.apply``
checks by default).  A small share of moves is uniformly random, so that playouts
of one sampled deal do not all follow a single line.

The search player runs this policy on the fast representation
(:class:`engine.ai.fastplay.FastPolicy` on :class:`~engine.ai.fastplay.FastGame`);
this module, on the rules engine's own state, is its reference:
``tests/engine/test_fastplay.py`` requires the same moves from both.
"""

from __future__ import annotations

import random

from engine.actions import COVER, LEAD, PASS, SHOW_TRUMP, TAKE, THROW, TRANSFER, Action
from engine.ai.values import CHUVASH_PRECIOUS, SHCH_PRECIOUS, chuvash_values, shchelkovsky_values
from engine.cards import NCARDS, RANK_MASKS, SUIT_MASKS, Card
from engine.state import LEAD_PHASE, OVER_PHASE, GameState

_ONE: tuple[tuple[Card], ...] = tuple((c,) for c in range(NCARDS))
_MAX_SEATS = 16
_TAKE = tuple(Action(s, TAKE) for s in range(_MAX_SEATS))
_PASS = tuple(Action(s, PASS) for s in range(_MAX_SEATS))
_new_action = tuple.__new__


class Policy:
    """The greedy playout policy for one sampled game (values fixed per game)."""

    __slots__ = ("chuvash", "epsilon", "order", "precious", "rng", "values")

    def __init__(self, state: GameState, rng: random.Random, epsilon: float = 0.1) -> None:
        self.chuvash = state.variant.name == "chuvash"
        if self.chuvash:
            self.values = chuvash_values()
            self.precious = CHUVASH_PRECIOUS
        else:
            self.values = shchelkovsky_values(state.trump, True)
            self.precious = SHCH_PRECIOUS
        # cards cheapest first: the lowest set bit of ``mask`` in this order is a scan
        self.order = tuple(sorted(range(NCARDS), key=lambda c: (self.values[c], c)))
        self.rng = rng
        self.epsilon = epsilon

    def cheapest(self, mask: int) -> Card:
        """The cheapest card of a non-empty presence mask."""
        for c in self.order:
            if mask >> c & 1:
                return c
        raise ValueError("empty mask")  # pragma: no cover - callers pass non-empty masks

    def choose(self, state: GameState, seat: int) -> Action:
        if self.rng.random() < self.epsilon:
            action = state.sample_action(seat, self.rng.random())
            if action is not None:
                return action
        if state.phase == LEAD_PHASE:
            return self.lead(state, seat)
        if seat == state.defender:
            return self.defend(state, seat)
        return self.throw(state, seat)

    def lead(self, state: GameState, seat: int) -> Action:
        mask = state.masks[seat]
        c = self.cheapest(mask)
        if not self.chuvash:
            return _new_action(Action, (seat, LEAD, _ONE[c], -1))  # S6: one card
        # C6: the cheap cards of the cheapest card's suit, at most what he holds
        limit = state.sizes[state.defender]
        same = mask & SUIT_MASKS[c & 3]
        cards = [c]
        cap = self.precious * 0.6
        for x in self.order:
            if len(cards) >= limit:
                break
            if x != c and same >> x & 1 and self.values[x] <= cap:
                cards.append(x)
        return _new_action(Action, (seat, LEAD, tuple(sorted(cards)), -1))

    def defend(self, state: GameState, seat: int) -> Action:
        mask = state.masks[seat]
        beat = state.beat
        plan: list[tuple[Card, Card]] = []
        used = 0
        # hardest attack first; one beater each (a greedy cover plan, C9 / S9)
        attacks = sorted((a for a, cv in state.table if cv < 0), key=self.values.__getitem__)
        for a in reversed(attacks):
            m = mask & beat[a] & ~used
            if not m:
                plan = []
                break
            c = self.cheapest(m)
            used |= 1 << c
            plan.append((a, c))
        if not state.covered_any and state.variant.transfers and state.ticket is None:
            redirect = self._redirect(state, seat, plan)  # S8
            if redirect is not None:
                return redirect
        if not plan or self._should_take(state, plan):
            return _TAKE[seat]
        a, c = plan[0]
        return _new_action(Action, (seat, COVER, _ONE[c], a))

    def _redirect(
        self, state: GameState, seat: int, plan: list[tuple[Card, Card]]
    ) -> Action | None:
        if not state.masks[seat] & RANK_MASKS[state.table[0][0]]:
            return None
        best: Action | None = None
        for action in state.legal_actions(seat):
            if action.kind == SHOW_TRUMP:
                return action  # S8: costs nothing
            if action.kind == TRANSFER and (best is None or action.cards[0] < best.cards[0]):
                best = action
        if best is None:
            return None
        cover_cost = sum(self.values[c] for _, c in plan) if plan else 1e9
        return best if self.values[best.cards[0]] <= cover_cost else None

    def _should_take(self, state: GameState, plan: list[tuple[Card, Card]]) -> bool:
        """Take rather than spend precious cards while the stock is still big."""
        stock = len(state.stock)
        if stock < 2 * state.players:
            return False
        dear = sum(1 for _, c in plan if self.values[c] >= self.precious)
        return dear > 0 and dear * 10 + stock > 40

    def throw(self, state: GameState, seat: int) -> Action:
        m = state.masks[seat] & state.table_ranks
        if m and state.priority() == seat:
            c = self.cheapest(m)
            if not state.stock or self.values[c] < self.precious:
                return _new_action(Action, (seat, THROW, _ONE[c], -1))
        return _PASS[seat]


def playout(state: GameState, policy: Policy, max_actions: int) -> int:
    """Play ``state`` on (in place) with ``policy`` at every seat, at most
    ``max_actions`` actions; returns the number of actions applied."""
    rng = policy.rng
    n = 0
    while state.phase != OVER_PHASE and n < max_actions:
        seats = state.to_act()
        seat = seats[0] if len(seats) == 1 else seats[int(rng.random() * len(seats))]
        state.apply(policy.choose(state, seat), checked=False)
        n += 1
    return n


def random_playout(state: GameState, rng: random.Random, max_actions: int = 1_000_000) -> int:
    """Play ``state`` on (in place) with uniformly random legal actions (the random
    player's policy, :meth:`GameState.sample_action`), unchecked; returns the number
    of actions applied.  The fast path of random self-play (``bench/reference_speed.py``)."""
    rand = rng.random
    n = 0
    while state.phase != OVER_PHASE and n < max_actions:
        seats = state.to_act()
        seat = seats[0] if len(seats) == 1 else seats[int(rand() * len(seats))]
        action = state.sample_action(seat, rand())
        if action is None:  # pragma: no cover - to_act() seats always have a move
            raise RuntimeError(f"seat {seat} has no move in {state!r}")
        state.apply(action, checked=False)
        n += 1
    return n
