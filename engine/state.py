"""The mutable state of one game and the rules that change it (RULES §0-§2).

Checked entry point: :meth:`GameState.apply` raises :class:`IllegalAction` with a
precise code and changes nothing; :meth:`GameState.legal_actions` lists what a seat
may do now.  The rules never draw random numbers: chance (the shuffle, a lot) is an
input of :mod:`engine.setup`.
"""

from __future__ import annotations

from engine.actions import COVER, LEAD, PASS, TAKE, THROW, TRANSFER, Action
from engine.base import _NONE, _UNKNOWN, BOUT_PHASE, LEAD_PHASE, NO_SEAT, OVER_PHASE, Event
from engine.cards import NCARDS, RANK_MASKS, Card
from engine.checks import RuleChecks
from engine.legal import LegalActions
from engine.variants import HAND_SIZE, Options, Variant, beaters

__all__ = ["BOUT_PHASE", "LEAD_PHASE", "NO_SEAT", "OVER_PHASE", "Event", "GameState"]

_new_event = tuple.__new__  # Event(...) without the NamedTuple's Python-level __new__


class GameState(RuleChecks, LegalActions):
    """Everything that changes during one game (OpenSpiel's *State*)."""

    __slots__ = (
        "_prio",
        "attacker",
        "beat",
        "counts",
        "covered_any",
        "defender",
        "discard",
        "draw",
        "emptied_at",
        "history",
        "loser",
        "masks",
        "options",
        "out",
        "passed",
        "passer",
        "phase",
        "players",
        "ply",
        "sizes",
        "stock",
        "table",
        "table_ranks",
        "taking",
        "thrown",
        "ticket",
        "trump",
        "trump_card",
        "uncovered",
        "variant",
    )

    def __init__(
        self,
        variant: Variant,
        options: Options,
        hands: list[list[Card]],
        stock_top_first: list[Card],
        trump: int | None,
        first_attacker: int,
    ) -> None:
        n = len(hands)
        self.variant = variant
        self.options = options
        self.players = n
        self.trump = trump
        self.beat = beaters(variant.name, trump)
        self.counts = [[0] * NCARDS for _ in range(n)]
        self.masks = [0] * n
        self.sizes = [0] * n
        for seat, hand in enumerate(hands):
            for card in hand:
                self._add(seat, card)
        self.stock = list(reversed(stock_top_first))
        self.trump_card = self.stock[0] if (self.stock and variant.has_trump) else None
        self.discard = [0] * NCARDS
        self.out = []
        self.emptied_at = [0] * n
        self.loser = None
        self.draw = False
        self.history = []
        self.ply = 0
        self._clear_bout()
        self.phase = LEAD_PHASE
        self.attacker = first_attacker
        self.defender = self._next_active(first_attacker)

    def _clear_bout(self) -> None:
        self.table = []
        self.table_ranks = 0
        self.uncovered = 0
        self.taking = False
        self.covered_any = False
        self.passed = 0
        self.thrown = 0
        self.ticket = None
        self.passer = _NONE
        self._prio = _UNKNOWN

    def apply(self, action: Action, *, checked: bool = True) -> list[Event]:
        """Apply a legal action and return the events it produced (the action's own
        record first).  An illegal action raises :class:`IllegalAction` and changes
        nothing.  ``checked=False`` skips the check, for an action just taken from
        :meth:`legal_actions` (self-play's hot path)."""
        if checked:
            self.check(action)
        start = len(self.history)
        self.ply += 1
        kind = action.kind
        cards = action.cards if kind != COVER else (action.attack, action.cards[0])
        self._prio = _UNKNOWN
        self.history.append(_new_event(Event, ("action", action.seat, cards, kind)))
        seat = action.seat
        if kind == LEAD:
            self._do_lead(seat, action.cards)
        elif kind == COVER:
            self._do_cover(seat, action.attack, action.cards[0])
        elif kind == THROW:
            self._do_throw(seat, action.cards)
        elif kind == TAKE:
            self.taking = True
        elif kind == PASS:
            self.passed |= 1 << seat
        elif kind == TRANSFER:
            self._do_transfer(seat, action.cards[0])
        else:
            self._do_show_trump(seat, action.cards[0])
        self._settle()
        return self.history[start:]

    def _do_lead(self, seat: int, cards: tuple[Card, ...]) -> None:
        for c in cards:
            self._remove(seat, c)
            self.table.append([c, _NONE])
            self.table_ranks |= RANK_MASKS[c]
        self.uncovered = len(cards)
        self.passer = seat
        self.phase = BOUT_PHASE

    def _do_cover(self, seat: int, attack: Card, card: Card) -> None:
        for pair in self.table:
            if pair[0] == attack and pair[1] < 0:
                pair[1] = card
                break
        self._remove(seat, card)
        self.table_ranks |= RANK_MASKS[card]
        self.uncovered -= 1
        self.covered_any = True
        self.passed = 0  # a change of the table clears all passes (RULES §0)

    def _do_throw(self, seat: int, cards: tuple[Card, ...]) -> None:
        for c in cards:
            self._remove(seat, c)
            self.table.append([c, _NONE])
        self.uncovered += len(cards)
        self.thrown += len(cards)
        self.passed = 0

    def _do_transfer(self, seat: int, card: Card) -> None:
        # S8 transfer: all attack cards pass on clockwise.
        self._remove(seat, card)
        self.table.append([card, _NONE])
        self.uncovered += 1
        self.passer = seat
        self.defender = self._next_active(seat)
        self.passed = 0

    def _do_show_trump(self, seat: int, card: Card) -> None:
        # S8 pass-ticket: the shown trump stays in hand; the attack goes back.
        self.ticket = (seat, card)
        self.defender = self.passer
        self.passer = seat

    def _settle(self) -> None:
        """End the bout when nothing more can happen in it (RULES §0 end of a bout)."""
        if self.phase != BOUT_PHASE:
            return
        if self.taking:
            if self.priority() < 0:
                self._end_bout(taken=True)
        elif not self.uncovered and self.priority() < 0:
            self._end_bout(taken=False)

    def _end_bout(self, taken: bool) -> None:
        defender = self.defender
        table_cards: list[Card] = []
        for attack, cover in self.table:
            table_cards.append(attack)
            if cover >= 0:
                table_cards.append(cover)
        if taken:
            for c in table_cards:
                self._add(defender, c)
        else:
            for c in table_cards:
                self.discard[c] += 1
        self.history.append(
            _new_event(
                Event, ("bout_end", defender, tuple(table_cards), "taken" if taken else "beaten")
            )
        )
        self._draw_cards()
        self._clear_bout()
        self._prio = _NONE  # no bout: nobody throws in
        n = self.players
        if not self.stock:
            out_set = set(self.out)
            newly = sorted(
                (s for s in range(n) if s not in out_set and not self.sizes[s]),
                key=lambda s: self.emptied_at[s],
            )
            for s in newly:
                self.out.append(s)
                self.history.append(Event("out", s, (), str(len(self.out))))
            holders = [s for s in range(n) if self.sizes[s]]
            if len(holders) <= 1:
                self.phase = OVER_PHASE
                self.loser = holders[0] if holders else None
                self.draw = not holders
                self.history.append(
                    Event(
                        "game_over",
                        self.loser if self.loser is not None else _NONE,
                        (),
                        "loser" if holders else "draw",
                    )
                )
                return
        # C12 / S12: beaten off -> the defender leads; taken -> the seat after him.
        leader = self._next_holder(defender, include_self=not taken)
        self.phase = LEAD_PHASE
        self.attacker = leader
        self.defender = self._next_active(leader)

    def _draw_cards(self) -> None:
        """Everyone draws up to six: C13 the first attacker, then clockwise from him;
        S13 likewise but the final defender last."""
        stock = self.stock
        if not stock:
            return
        n = self.players
        a = self.attacker
        order = [*range(a, n), *range(a)]
        if self.variant.final_defender_draws_last:  # S13
            order.remove(self.defender)
            order.append(self.defender)
        out = self.out
        sizes = self.sizes
        masks = self.masks
        history = self.history
        for s in order:
            need = HAND_SIZE - sizes[s]
            if need <= 0 or s in out:
                continue
            if need > len(stock):
                need = len(stock)
            drawn = stock[-need:][::-1]  # the top of the stock is its end
            del stock[-need:]
            row = self.counts[s]
            for c in drawn:
                row[c] += 1
                masks[s] |= 1 << c
            sizes[s] += need
            history.append(_new_event(Event, ("draw", s, tuple(drawn), "")))
            if not stock:
                break

    def copy(self) -> GameState:
        """A deep copy sharing only immutable parts (variant, beat table, events)."""
        new = GameState.__new__(GameState)
        # one assignment per field (a loop over the names costs a getattr and a
        # setattr each: the copy is the search's and the endgame solver's hot path)
        new.variant = self.variant
        new.options = self.options
        new.players = self.players
        new.beat = self.beat
        new.trump = self.trump
        new.trump_card = self.trump_card
        new.phase = self.phase
        new.attacker = self.attacker
        new.defender = self.defender
        new.passer = self.passer
        new.table_ranks = self.table_ranks
        new.uncovered = self.uncovered
        new.taking = self.taking
        new.covered_any = self.covered_any
        new.passed = self.passed
        new.thrown = self.thrown
        new.ticket = self.ticket
        new.loser = self.loser
        new.draw = self.draw
        new.ply = self.ply
        new._prio = self._prio
        new.counts = [row[:] for row in self.counts]
        new.masks = self.masks[:]
        new.sizes = self.sizes[:]
        new.stock = self.stock[:]
        new.discard = self.discard[:]
        new.table = [pair[:] for pair in self.table]
        new.out = self.out[:]
        new.emptied_at = self.emptied_at[:]
        new.history = self.history[:]
        return new

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GameState):
            return NotImplemented
        return self._identity() == other._identity()

    def _identity(self) -> tuple[object, ...]:
        """What two equal states share: everything ``state_to_json`` keeps (the
        derived fields -- masks, sizes, table ranks, priorities -- follow)."""
        return (
            self.variant.name,
            self.options,
            self.players,
            self.counts,
            self.stock,
            self.trump,
            self.trump_card,
            self.discard,
            self.phase,
            self.attacker,
            self.defender,
            self.passer,
            self.table,
            self.taking,
            self.covered_any,
            self.passed,
            self.thrown,
            self.ticket,
            self.out,
            self.emptied_at,
            self.loser,
            self.draw,
            self.ply,
            self.history,
        )

    def __repr__(self) -> str:
        return (
            f"<GameState {self.variant.name} {self.players}p phase={self.phase} "
            f"attacker={self.attacker} defender={self.defender} ply={self.ply}>"
        )
