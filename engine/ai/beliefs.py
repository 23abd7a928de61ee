"""Beliefs: which hidden cards each opponent may hold, read from his public play.

:class:`~engine.ai.public_info.PublicInfo` knows where some cards *are* (taken and
kept, a shown pass-ticket, the drawn face-up trump).  :class:`Beliefs` adds what a
seat's play says about the cards nobody has seen: a weight per opponent and card
(1 = no evidence, 0 = he cannot hold it) that the determinizer
(:class:`~engine.ai.determinize.Determinizer`) uses to deal the unseen pool.

Only public facts are read -- the public record of ``state.history`` (actions, the
table, bout ends, *who* drew *how many* cards: never which) and the public fields of
the state (sizes, the stock's length, the trump) -- never another seat's hand.

Evidence (the factors are the tuning knobs below):

* **no throw-in** (hard, RULES §0 throw-in priority): a bout ends, or a later seat in
  the priority order throws in, while throw-ins are open and there is room;
  every non-defender seat holding cards that had not passed since the table last
  changed holds no card of a rank on the table (else he would hold the priority);
* **take** (soft, S11 / C8 / C11): the defender takes with attack cards uncovered:
  the cards that beat them are less likely in his hand;
* **cover** (soft, S9 / C9): he covered with a card when a cheaper one beat the
  attack card too: the cheaper ones are less likely (much less for the last card);
* **no pass-ticket / no transfer** (soft, S8): a Shchelkovsky defender who could
  have shown the trump of the attack's rank, or transferred, and did not;
* **lead** (soft, S6 / C6): a lead with cheaper cards of the led suit kept back;
* **throw-in** (soft, S10 / C10): a seat that threw some cards of the table's
  ranks, or passed, probably holds no cheap card of those ranks;
* **draw** (C13 / S13): a seat's fresh cards carry no evidence: every weight moves
  towards 1 by the share of his hand just drawn.
"""

from __future__ import annotations

from engine.actions import COVER, LEAD, PASS, SHOW_TRUMP, TAKE, THROW, TRANSFER
from engine.ai.values import (
    CHUVASH_PRECIOUS,
    SHCH_PRECIOUS,
    chuvash_values,
    shchelkovsky_values,
)
from engine.cards import JOKER, NCARDS, RANK_MASKS, Card, iter_bits, suit_of
from engine.state import Event, GameState

NO_THROW = 0.0
"""Weight of a card of a rank the seat could not throw in (hard: the priority rule)."""
TAKE_ONE = 0.1
"""Weight factor of the cheap (not precious) cards beating the one uncovered card a
defender took: a precious one he may keep on purpose."""
TAKE_MANY = 0.3
"""Weight factor of the cards beating each of several uncovered cards he took."""
COVER_LAST = 0.1
"""Weight factor of the cards cheaper than the one that covered the last uncovered card
and beating it too."""
COVER_ONE = 0.4
"""The same, while other attack cards were still uncovered (his plan may have needed
the cheaper card elsewhere)."""
NO_TICKET = 0.02
"""Weight factor of the trump of the attack's rank when he could show it and did not."""
NO_TRANSFER = 0.3
"""Weight factor of the attack's rank when he could transfer and did not."""
LEAD_SUIT = 0.2
"""Weight factor of a led suit's cards cheaper than the lead (Shchelkovsky, S6)."""
LEAD_CHUVASH = 0.1
"""Weight factor of a led suit's cards cheaper than the dearest led card (C6)."""
LEAD_OTHER = 0.4
"""Weight factor of the other suits' cards cheaper than a Shchelkovsky lead by more
than ``LEAD_SLACK`` (a pair is worth keeping for throw-ins)."""
LEAD_SLACK = 1.5
THREW = 0.1
"""Weight factor of the table ranks' cards cheaper than the dearest card thrown in."""
PASSED_CHEAP = 0.3
"""Weight factor of the table ranks' cheap cards when he passed (S10 / C10)."""

_ALL = (1 << NCARDS) - 1  # the joker's rank mask runs past the deck's bits


class Beliefs:
    """Per opponent of ``seat``, a weight for each card (see the module docstring).

    ``update(state)`` reads the public events not yet read; ``weights()`` gives the
    seats with evidence.  A light public replay of the bout (the table, the roles,
    passes, sizes) stands in for the past states, which the history does not keep."""

    __slots__ = (
        "attacker",
        "cheap",
        "covered",
        "defender",
        "has_trump",
        "history_ref",
        "out",
        "passed",
        "passer",
        "pos",
        "seat",
        "sizes",
        "stock",
        "table",
        "taking",
        "thrown",
        "ticket",
        "values",
        "w",
    )

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.w: dict[int, list[float]] = {}
        self.history_ref: list[Event] | None = None
        self.pos = 0
        self.values: tuple[float, ...] = ()
        self.has_trump = False
        self.cheap = 0
        self._reset_bout()
        self.attacker = self.defender = self.passer = -1
        self.sizes: list[int] = []
        self.stock = 0
        self.out: set[int] = set()

    def _reset_bout(self) -> None:
        self.table: list[list[Card]] = []  # [attack, cover or -1]
        self.covered = False
        self.taking = False
        self.passed = 0
        self.thrown = 0
        self.ticket = False

    # -- reading the record ------------------------------------------------------------
    def update(self, state: GameState) -> None:
        hist = state.history
        if self.history_ref is not hist or self.pos > len(hist):
            self.history_ref = hist
            self.pos = 0
            self.w = {}
            self.out = set()
            self._reset_bout()
        if not self.values:
            self.has_trump = state.variant.has_trump
            self.values = (
                chuvash_values()
                if state.variant.name == "chuvash"
                else shchelkovsky_values(state.trump, True)
            )
        new = hist[self.pos :]
        if not new:
            return
        # the sizes and the stock before the new events: today's, with the new events'
        # public effects undone (how many cards each action, take and draw moved)
        sizes = state.sizes[:]
        stock = len(state.stock)
        for ev in new:
            if ev.kind == "action":
                if ev.detail == COVER:
                    sizes[ev.seat] += 1
                elif ev.detail in (LEAD, THROW, TRANSFER):
                    sizes[ev.seat] += len(ev.cards)
            elif ev.kind == "bout_end" and ev.detail == "taken":
                sizes[ev.seat] -= len(ev.cards)
            elif ev.kind == "draw":
                sizes[ev.seat] -= len(ev.cards)
                stock += len(ev.cards)
        self.sizes = sizes
        self.stock = stock
        for ev in new:
            self._event(state, ev)
        self.pos = len(hist)

    def weights(self) -> dict[int, list[float]]:
        """Seat -> its card weights, for the seats with evidence (never ``seat``)."""
        return self.w

    def _row(self, s: int) -> list[float] | None:
        if s == self.seat:
            return None  # our own hand is known
        row = self.w.get(s)
        if row is None:
            row = self.w[s] = [1.0] * NCARDS
        return row

    def _scale(self, s: int, cards: int, factor: float) -> None:
        """Multiply the weights of the cards of mask ``cards`` of seat ``s``."""
        row = self._row(s)
        if row is None:
            return
        for c in iter_bits(cards & _ALL):
            row[c] *= factor

    def _next_active(self, seat: int, n: int) -> int:
        """RULES §0 "next", as ``GameState._next_active`` from public facts."""
        for i in range(1, n):
            s = (seat + i) % n
            if self.sizes[s] or (self.stock and s not in self.out):
                return s
        return seat

    def _ranks(self) -> int:
        ranks = 0
        for attack, cover in self.table:
            ranks |= RANK_MASKS[attack]
            if cover >= 0:
                ranks |= RANK_MASKS[cover]
        return ranks & _ALL

    def _uncovered(self) -> list[Card]:
        return [a for a, c in self.table if c < 0]

    def _throw_room(self, state: GameState) -> bool:
        """Throw-ins are open and there is room (RULES §0 hand limit, S10 cap, C10)."""
        if not (self.covered or (self.taking and not state.variant.immediate_take_ends_bout)):
            return False
        room = self.sizes[self.defender] - len(self._uncovered())
        cap = state.variant.throw_cap
        if cap is not None:
            room = min(room, cap - self.thrown)
        return room > 0

    def _skipped(self, state: GameState, upto: int | None) -> None:
        """RULES §0 priority: the seats before ``upto`` in the order (every seat when
        ``None``: nobody holds the priority) that hold cards and have not passed hold
        no card of a table rank."""
        if not self._throw_room(state):
            return
        n = state.players
        ranks = self._ranks()
        for i in range(n):
            s = (self.attacker + i) % n
            if s == upto:
                break
            if s != self.defender and not self.passed >> s & 1 and self.sizes[s]:
                self._scale(s, ranks, NO_THROW)

    def _event(self, state: GameState, ev: Event) -> None:
        kind = ev.kind
        if kind == "action":
            self._action(state, ev)
        elif kind == "bout_end":
            self._skipped(state, None)  # nobody held the priority any more
            if ev.detail == "taken":
                self.sizes[ev.seat] += len(ev.cards)
            self._reset_bout()
        elif kind == "draw":
            k = len(ev.cards)  # how many: public; which: never read
            s = ev.seat
            self.sizes[s] += k
            self.stock -= k
            row = self.w.get(s)
            if row is not None and self.sizes[s] > 0:
                share = min(1.0, k / self.sizes[s])
                for c in range(NCARDS):
                    row[c] += (1.0 - row[c]) * share
        elif kind == "out":
            self.out.add(ev.seat)

    def _action(self, state: GameState, ev: Event) -> None:
        s = ev.seat
        kind = ev.detail
        values = self.values
        beat = state.beat
        if kind == LEAD:
            self._lead(state, s, ev.cards)
            return
        if kind == COVER:
            attack, card = ev.cards
            self._redirect_evidence(state, s)
            last = len(self._uncovered()) == 1
            cheaper = sum(
                1 << c for c in iter_bits(beat[attack]) if values[c] < values[card] and c != card
            )
            self._scale(s, cheaper, COVER_LAST if last else COVER_ONE)
            for pair in self.table:
                if pair[0] == attack and pair[1] < 0:
                    pair[1] = card
                    break
            self.sizes[s] -= 1
            self.covered = True
            self.passed = 0
            return
        if kind == TAKE:
            self._redirect_evidence(state, s)
            uncovered = self._uncovered()
            factor = TAKE_ONE if len(uncovered) == 1 else TAKE_MANY
            cheap = self._cheap()
            for a in uncovered:
                self._scale(s, beat[a] & cheap, factor)
            self.taking = True
            return
        if kind == THROW:
            if s != self.defender:  # S10a: a self-throw says nothing of priority
                self._skipped(state, s)
                room_left = self._room_after(state, len(ev.cards))
                if room_left > 0:
                    top = max(values[c] for c in ev.cards)
                    ranks = self._ranks()
                    cheap = sum(1 << c for c in iter_bits(ranks) if values[c] <= top)
                    self._scale(s, cheap, THREW)
            for c in ev.cards:
                self.table.append([c, -1])
            self.sizes[s] -= len(ev.cards)
            self.thrown += len(ev.cards)
            self.passed = 0
            return
        if kind == PASS:
            # any thrower may pass, not only the priority holder (legal.py): no skip
            self._scale(s, self._ranks() & self._cheap(), PASSED_CHEAP)
            self.passed |= 1 << s
            return
        if kind == TRANSFER:
            self.table.append([ev.cards[0], -1])
            self.sizes[s] -= 1
            self.passer = s
            self.defender = self._next_active(s, state.players)
            self.passed = 0
            return
        if kind == SHOW_TRUMP:
            self.ticket = True
            self.defender = self.passer
            self.passer = s

    def _cheap(self) -> int:
        """The mask of the cards a player gives up without regret (not precious)."""
        if not self.cheap:
            limit = SHCH_PRECIOUS if self.has_trump else CHUVASH_PRECIOUS
            self.cheap = sum(1 << c for c in range(NCARDS) if self.values[c] < limit)
        return self.cheap

    def _lead(self, state: GameState, s: int, cards: tuple[Card, ...]) -> None:
        """A new bout (C6 / S6); while the stock lasts a lead is the cheapest card
        (of its suit in Chuvash, of the hand in Shchelkovsky): cheaper ones are rare."""
        self._reset_bout()
        self.attacker = self.passer = s
        self.sizes[s] -= len(cards)
        self.defender = self._next_active(s, state.players)
        self.table = [[c, -1] for c in cards]
        if not self.stock or cards[0] == JOKER:  # endgame leads follow other aims
            return
        values = self.values
        top = max(values[c] for c in cards)
        suit = suit_of(cards[0])
        cheaper = sum(
            1 << c for c in range(NCARDS) if c != JOKER and suit_of(c) == suit and values[c] < top
        )
        self._scale(s, cheaper, LEAD_SUIT if state.variant.has_trump else LEAD_CHUVASH)
        if state.variant.has_trump:  # S6: one card, the cheapest of any suit
            other = sum(
                1 << c
                for c in range(NCARDS)
                if c != JOKER and suit_of(c) != suit and values[c] < top - LEAD_SLACK
            )
            self._scale(s, other, LEAD_OTHER)

    def _room_after(self, state: GameState, more: int) -> int:
        room = self.sizes[self.defender] - len(self._uncovered()) - more
        cap = state.variant.throw_cap
        if cap is not None:
            room = min(room, cap - self.thrown - more)
        return room

    def _redirect_evidence(self, state: GameState, s: int) -> None:
        """S8: a defender who covers or takes before any cover, all attack cards of one
        rank, could have shown that rank's trump or transferred (hand limit)."""
        if (
            self.covered
            or self.ticket
            or self.taking
            or not state.variant.has_trump
            or state.trump is None
            or not self.table
        ):
            return
        first = self.table[0][0]
        if first == JOKER or any(RANK_MASKS[a] != RANK_MASKS[first] for a, _ in self.table):
            return
        k = len(self.table)
        trump_card = (first & ~3) | state.trump
        if self.passer >= 0 and self.sizes[self.passer] >= k:
            self._scale(s, 1 << trump_card, NO_TICKET)
        nxt = self._next_active(s, state.players)
        if nxt != s and self.sizes[nxt] >= k + 1:
            self._scale(s, RANK_MASKS[first] & ~(1 << trump_card), NO_TRANSFER)
