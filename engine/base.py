"""The fields of a game state and the small queries every rule module shares.

Hands are count vectors plus a presence bitmask per seat (multi-deck games hold
identical cards), so the hot questions -- "which of my cards beat this one?", "which
of my cards match a rank on the table?" -- are one AND of two ints
(``masks[seat] & beaters[attack]``, ``masks[seat] & table_ranks``).

:class:`engine.state.GameState` is assembled from :class:`StateBase` (this module),
:class:`engine.checks.RuleChecks` (is an action legal, and if not, why) and
:class:`engine.legal.LegalActions` (what may a seat do now).
"""

from __future__ import annotations

from typing import NamedTuple

from engine.cards import NCARDS, Card, iter_bits
from engine.variants import Options, Variant

LEAD_PHASE = "lead"  # the attacker must lead a new bout
BOUT_PHASE = "bout"  # a bout is in progress
OVER_PHASE = "over"  # game over: ``loser`` or ``draw`` is set
NO_SEAT = -1
_NONE = NO_SEAT
_UNKNOWN = -2  # the cached throw-in priority must be computed again


class Event(NamedTuple):
    """One entry of the append-only history: an applied action or what followed it.

    ``kind``: ``action`` (``detail`` = the action type; ``cards`` = its cards, for a
    cover the attack card then the covering card), ``bout_end``
    (``detail`` = ``beaten`` or ``taken``, ``seat`` = the defender, ``cards`` = the
    table), ``draw`` (``seat`` drew ``cards``), ``out`` (``seat`` finished, ``detail``
    = his place, 1-based), ``game_over`` (``seat`` = the loser or -1, ``detail`` =
    ``loser`` or ``draw``).
    """

    kind: str
    seat: int
    cards: tuple[Card, ...] = ()
    detail: str = ""


class StateBase:
    """Fields (declared here, stored in :class:`engine.state.GameState`'s slots) and
    shared queries."""

    __slots__ = ()

    variant: Variant
    options: Options
    players: int
    beat: tuple[int, ...]
    counts: list[list[int]]
    masks: list[int]
    sizes: list[int]
    stock: list[Card]  # bottom first: stock[0] is the face-up trump card (S3); pop() draws
    trump: int | None
    trump_card: Card | None
    discard: list[int]
    phase: str
    attacker: int  # the leader (lead phase) or the bout's first attacker
    defender: int
    passer: int  # the seat that led or transferred the attack to the defender (S8)
    table: list[list[int]]  # [attack, cover or -1]
    table_ranks: int
    uncovered: int
    taking: bool
    covered_any: bool
    passed: int  # bitmask of seats that passed since the table last changed
    thrown: int  # thrown-in cards this bout (S10 cap)
    ticket: tuple[int, Card] | None  # (seat that showed, trump shown) this bout (S8)
    out: list[int]
    emptied_at: list[int]
    loser: int | None
    draw: bool
    history: list[Event]
    ply: int  # number of applied actions
    _prio: int  # cached priority(); _UNKNOWN after any change

    def _add(self, seat: int, card: Card) -> None:
        row = self.counts[seat]
        row[card] += 1
        self.masks[seat] |= 1 << card
        self.sizes[seat] += 1

    def _remove(self, seat: int, card: Card) -> None:
        row = self.counts[seat]
        row[card] -= 1
        if not row[card]:
            self.masks[seat] &= ~(1 << card)
        self.sizes[seat] -= 1
        if not self.sizes[seat]:
            self.emptied_at[seat] = self.ply  # finish places follow this order (RULES §0)

    def _has_all(self, seat: int, cards: tuple[Card, ...]) -> bool:
        row = self.counts[seat]
        if len(cards) == 1:
            return 0 <= cards[0] < NCARDS and row[cards[0]] > 0
        need: dict[int, int] = {}
        for c in cards:
            if not 0 <= c < NCARDS:
                return False
            need[c] = need.get(c, 0) + 1
        return all(row[c] >= k for c, k in need.items())

    def _next_active(self, seat: int) -> int:
        """RULES §0 "next": the next seat clockwise that holds cards or can still draw."""
        n = self.players
        sizes = self.sizes
        stock = bool(self.stock)
        for i in range(1, n):
            s = (seat + i) % n
            if sizes[s] or (stock and s not in self.out):
                return s
        return seat

    def _next_holder(self, seat: int, include_self: bool) -> int:
        """The seat clockwise from ``seat`` (``seat`` itself first if asked) that holds
        cards -- "who leads next skips seats that are out" (RULES §0)."""
        n = self.players
        for i in range(0 if include_self else 1, n + 1):
            s = (seat + i) % n
            if self.sizes[s]:
                return s
        return seat

    def hand(self, seat: int) -> list[Card]:
        """The seat's cards, lowest first (a multiset: repeated cards repeat)."""
        row = self.counts[seat]
        return [c for c in iter_bits(self.masks[seat]) for _ in range(row[c])]

    def stock_top_first(self) -> list[Card]:
        return self.stock[::-1]

    def discard_cards(self) -> list[Card]:
        return [c for c in range(NCARDS) for _ in range(self.discard[c])]

    @property
    def over(self) -> bool:
        return self.phase == OVER_PHASE

    def _throw_open(self) -> bool:
        # C10: only after a cover (C8: an immediate take ends the bout); S10: after a
        # cover or a TAKE.
        return self.covered_any or (self.taking and not self.variant.immediate_take_ends_bout)

    def _room(self) -> int:
        """How many more cards may be thrown in now: the hand limit (RULES §0) and the
        S10 cap."""
        room = self.sizes[self.defender] - self.uncovered
        cap = self.variant.throw_cap
        if cap is not None:
            room = min(room, cap - self.thrown)
        return room

    def priority(self) -> int:
        p = self._prio
        if p == _UNKNOWN:
            # the slot lives in GameState; mypy only sees this class's empty __slots__
            p = self._prio = self._compute_priority()  # type: ignore[misc]
        return p

    def _compute_priority(self) -> int:
        """RULES §0 throw-in priority: the first attacker first, then the others
        clockwise, the defender excluded; the first who has not passed and has a legal
        throw-in.  ``-1`` when nobody may throw (S10: when the first attacker is now
        the defender, the order starts at the next seat clockwise, which skipping the
        defender gives)."""
        if self.phase != BOUT_PHASE or not self._throw_open() or self._room() <= 0:
            return _NONE
        ranks = self.table_ranks
        masks = self.masks
        n = self.players
        defender = self.defender
        passed = self.passed
        start = self.attacker
        for i in range(n):
            s = (start + i) % n
            if s != defender and not passed >> s & 1 and masks[s] & ranks:
                return s
        return _NONE

    def to_act(self) -> list[int]:
        """Seats whose move the game is waiting for: the defender while he must cover
        or take, and the throw-in priority holder.  Empty once the game is over."""
        if self.phase == LEAD_PHASE:
            return [self.attacker]
        if self.phase != BOUT_PHASE:
            return []
        seats = []
        if self.uncovered and not self.taking:
            seats.append(self.defender)
        p = self.priority()
        if p >= 0:
            seats.append(p)
        return seats
