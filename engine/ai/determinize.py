"""Determinization: a full game state sampled from what one seat may know.

The search player (:mod:`engine.ai.search`) never reads another seat's hand or the
order of the stock.  It reads a :class:`~engine.ai.public_info.PublicInfo` (its own
hand, every seat's card count, the table, the discard pile, the face-up trump card,
cards seen when a seat took them, a shown pass-ticket trump) and deals the cards
whose place it does not know -- the *unseen* pool -- at random among the other
hands and the stock, keeping every known card where it is known to be.  Every
sampled state is one the seat cannot tell apart from the real one.
"""

from __future__ import annotations

import math
import random

from engine.ai.public_info import PublicInfo
from engine.cards import NCARDS, Card, iter_bits
from engine.state import BOUT_PHASE, GameState

_PUBLIC_FIELDS = (
    "variant",
    "options",
    "players",
    "beat",
    "trump",
    "trump_card",
    "phase",
    "attacker",
    "defender",
    "passer",
    "table_ranks",
    "uncovered",
    "taking",
    "covered_any",
    "passed",
    "thrown",
    "ticket",
    "loser",
    "draw",
    "ply",
)
"""The public scalar fields of a state: copied as they are (RULES §0: the table,
the roles, passes and counts are visible to everybody)."""


_ALL = (1 << NCARDS) - 1
"""Every card's bit (a table-ranks mask holds the joker's rank: bits past the deck)."""


class Determinizer:
    """Samples states consistent with ``info`` (one seat's knowledge of ``state``).

    Only public fields of ``state`` are read: counts (``sizes``), the table, the
    discard pile, the stock's length, roles and flags.  The hidden cards come from
    ``info``'s unseen pool, never from ``state.counts`` of another seat."""

    __slots__ = (
        "base",
        "fixed",
        "need",
        "no_throw",
        "pool",
        "seat",
        "stock_bottom",
        "stock_len",
        "weights",
    )

    def __init__(
        self,
        state: GameState,
        info: PublicInfo,
        weights: dict[int, list[float]] | None = None,
    ) -> None:
        seat = info.seat
        self.seat = seat
        n = state.players
        self.stock_len = len(state.stock)
        # S3: the face-up trump card lies at the bottom of the stock while it lasts
        bottom = state.trump_card if (self.stock_len and state.variant.has_trump) else None
        self.stock_bottom = bottom
        unseen = info.unseen[:]
        if bottom is not None and unseen[bottom] > 0:
            unseen[bottom] -= 1
        self.fixed: list[list[Card]] = []  # per seat: the cards known to be held
        self.need = [0] * n  # per seat: how many unknown cards to deal
        for s in range(n):
            if s == seat:
                self.fixed.append(_cards(info.hand))
                continue
            known = _cards(info.known_of(s))[: state.sizes[s]]
            self.fixed.append(known)
            self.need[s] = state.sizes[s] - len(known)
        self.pool: list[Card] = _cards(unseen)  # canonical order: card index
        self.no_throw = _no_throw_seats(state, seat)
        self.base = _public_copy(state)
        # beliefs (engine.ai.beliefs): per seat that still needs cards, each pool
        # card's weight, the priority rule's forbidden ranks at 0 (RULES §0)
        self.weights: dict[int, list[float]] = {}
        if weights:
            for s in sorted({*weights, *self.no_throw}):
                if s != seat and self.need[s]:
                    row = weights.get(s)
                    w = row[:] if row is not None else [1.0] * NCARDS
                    for c in iter_bits(self.no_throw.get(s, 0) & _ALL):
                        w[c] = 0.0
                    self.weights[s] = w

    @property
    def consistent(self) -> bool:
        """The pool holds exactly the cards to deal (always, unless the knowledge
        is contradictory -- then the caller falls back to a simpler player)."""
        stock_need = self.stock_len - (self.stock_bottom is not None)
        return len(self.pool) == sum(self.need) + stock_need

    @property
    def unique(self) -> bool:
        """Only one deal is consistent: the stock holds no unknown card and at most
        one seat holds unknown cards (it holds the whole pool)."""
        stock_need = self.stock_len - (self.stock_bottom is not None)
        return stock_need == 0 and sum(1 for n in self.need if n) <= 1

    def sample(self, rng: random.Random) -> GameState:
        """One state the seat cannot tell from the real one (a fresh object)."""
        pool = self.pool[:]
        rng.shuffle(pool)
        if self.weights:
            pool = self._weighted(pool, rng)
        elif self.no_throw:
            pool = self._constrained(pool)
        state = self.base.copy()
        counts = state.counts
        masks = state.masks
        i = 0
        for s, known in enumerate(self.fixed):
            row = counts[s]
            mask = 0
            for c in known:
                row[c] += 1
                mask |= 1 << c
            for c in pool[i : i + self.need[s]]:
                row[c] += 1
                mask |= 1 << c
            i += self.need[s]
            masks[s] = mask
        stock = pool[i:]
        if self.stock_bottom is not None:
            stock.insert(0, self.stock_bottom)  # stock[0] is the bottom (S3)
        state.stock = stock
        return state

    def _weighted(self, pool: list[Card], rng: random.Random) -> list[Card]:
        """Reorder a shuffled pool so that each seat with beliefs gets its cards by
        weighted sampling without replacement (a card of weight w comes with key
        Exp(1)/w, the smallest keys win; weight 0 only when nothing else is left),
        the seats in a random order; the others and the stock share the rest in its
        shuffled order."""
        seats = list(self.weights)
        rng.shuffle(seats)
        first: dict[int, list[Card]] = {}
        rest = pool
        inf = math.inf
        rand = rng.random
        for s in seats:
            w = self.weights[s]
            keyed = sorted(
                (-math.log(1.0 - rand()) / w[c] if w[c] > 0.0 else inf, i)
                for i, c in enumerate(rest)
            )
            take = {i for _, i in keyed[: self.need[s]]}
            first[s] = [rest[i] for i in sorted(take)]
            rest = [c for i, c in enumerate(rest) if i not in take]
        # the rest keeps its shuffled order (what is left of a shuffle is shuffled)
        out: list[Card] = []
        for s in range(len(self.need)):
            if s in first:
                out += first[s]
            else:
                out += rest[: self.need[s]]
                rest = rest[self.need[s] :]
        return out + rest

    def _constrained(self, pool: list[Card]) -> list[Card]:
        """Reorder a shuffled pool so that the seats known to hold no throw-in
        (``no_throw``) get none: they take the first allowed cards of the pool, in
        seat order; the rest keeps its shuffled order (uniform given the facts)."""
        first: dict[int, list[Card]] = {}
        rest = pool
        for s, ranks in self.no_throw.items():
            mine: list[Card] = []
            left: list[Card] = []
            for c in rest:
                if len(mine) < self.need[s] and not ranks >> c & 1:
                    mine.append(c)
                else:
                    left.append(c)
            first[s] = mine
            rest = left
        out: list[Card] = []
        for s in range(len(self.need)):
            if s in first:
                out += first[s]
            else:
                out += rest[: self.need[s]]
                rest = rest[self.need[s] :]
        return out + rest


def _no_throw_seats(state: GameState, seat: int) -> dict[int, int]:
    """RULES §0 throw-in priority is public: every seat that comes before the
    priority holder in the order and has not passed holds no card of a rank on the
    table (else *he* would hold the priority).  Seat -> the forbidden ranks' mask."""
    if state.phase != BOUT_PHASE or not state._throw_open() or state._room() <= 0:
        return {}
    p = state.priority()
    n = state.players
    out: dict[int, int] = {}
    for i in range(n):
        s = (state.attacker + i) % n
        if s == p:
            break
        if s != state.defender and s != seat and not state.passed >> s & 1 and state.sizes[s]:
            out[s] = state.table_ranks
    return out


def _cards(counts: list[int]) -> list[Card]:
    return [c for c in range(NCARDS) for _ in range(counts[c])]


def _public_copy(state: GameState) -> GameState:
    """A state with the public fields of ``state``, empty hands of the right sizes
    to be filled, an empty stock of the right length and no history."""
    new = GameState.__new__(GameState)
    for name in _PUBLIC_FIELDS:
        setattr(new, name, getattr(state, name))
    n = state.players
    new.counts = [[0] * NCARDS for _ in range(n)]
    new.masks = [0] * n
    new.sizes = state.sizes[:]
    new.stock = []
    new.discard = state.discard[:]
    new.table = [pair[:] for pair in state.table]
    new.out = state.out[:]
    new.emptied_at = state.emptied_at[:]
    new.history = []
    new._prio = -2  # _UNKNOWN: recomputed from the sampled hands
    return new
