"""The mutable state of one game and the rules that change it (RULES §0-§2).

Hands are count vectors plus a presence bitmask per seat (multi-deck games hold
identical cards), so the hot questions -- "which of my cards beat this one?", "which
of my cards match a rank on the table?" -- are one AND of two ints
(``masks[seat] & beaters[attack]``, ``masks[seat] & table_ranks``).

Checked entry point: :meth:`GameState.apply` raises :class:`IllegalAction` with a
precise code and changes nothing; :meth:`GameState.legal_actions` lists what a seat
may do now.  The rules never draw random numbers: chance (the shuffle, a lot) is an
input of :mod:`engine.setup`.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.actions import COVER, LEAD, PASS, SHOW_TRUMP, TAKE, THROW, TRANSFER, Action
from engine.cards import (
    JOKER,
    NCARDS,
    RANK_MASKS,
    SUIT_MASKS,
    Card,
    card_name,
    iter_bits,
    rank_name,
    rank_of,
    suit_of,
)
from engine.errors import IllegalAction
from engine.variants import HAND_SIZE, Options, Variant, beaters

LEAD_PHASE = "lead"  # the attacker must lead a new bout
BOUT_PHASE = "bout"  # a bout is in progress
OVER_PHASE = "over"  # game over: ``loser`` or ``draw`` is set
_NONE = -1


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


class GameState:
    """Everything that changes during one game (OpenSpiel's *State*)."""

    __slots__ = (
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

    # ------------------------------------------------------------------ small helpers
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

    # ------------------------------------------------------------------- throw-ins
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

    # --------------------------------------------------------------- legal actions
    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may take now.  Throw-ins (which may go several cards
        at once) are listed one card each; ``apply`` also accepts several at once.
        Chuvash leads (C6) are listed as every non-empty set of cards of one suit
        that the hand limit allows."""
        if not 0 <= seat < self.players or self.phase == OVER_PHASE:
            return []
        if self.phase == LEAD_PHASE:
            return self._legal_leads(seat) if seat == self.attacker else []
        out: list[Action] = []
        mask = self.masks[seat]
        if seat == self.defender:
            if not self.taking:
                if self.uncovered:
                    beat = self.beat
                    seen = 0
                    for attack, cover in self.table:
                        if cover < 0 and not seen >> attack & 1:
                            seen |= 1 << attack
                            for c in iter_bits(mask & beat[attack]):
                                out.append(Action(seat, COVER, (c,), attack))
                if not self.covered_any and self.variant.transfers and self.ticket is None:
                    out.extend(self._legal_redirects(seat))
                for c in self._self_throw_cards(seat):
                    out.append(Action(seat, THROW, (c,)))
                if self.uncovered:
                    out.append(Action(seat, TAKE))
            return out
        if mask and self._throw_open() and not self.passed >> seat & 1:
            if self.priority() == seat:
                for c in iter_bits(mask & self.table_ranks):
                    out.append(Action(seat, THROW, (c,)))
            out.append(Action(seat, PASS))
        return out

    def _legal_leads(self, seat: int) -> list[Action]:
        mask = self.masks[seat]
        if not self.variant.lead_many_of_one_suit:  # S6: exactly one card
            return [Action(seat, LEAD, (c,)) for c in iter_bits(mask)]
        limit = self.sizes[self.defender]  # C6: at most as many as the defender holds
        out: list[Action] = []
        for suit_mask in SUIT_MASKS:
            if mask & suit_mask:
                out.extend(_suit_leads(seat, mask & suit_mask, limit))
        return out

    def _legal_redirects(self, seat: int) -> list[Action]:
        """S8 transfers and pass-tickets for the defender before any cover."""
        out: list[Action] = []
        rank = self.table[0][0] >> 2
        same = self.masks[seat] & RANK_MASKS[self.table[0][0]]
        if not same:
            return out
        target = self._next_active(seat)
        # S8: the attack passes to *another* seat; none left (everyone else is out or
        # empty with the stock gone) means no transfer, not a transfer to oneself.
        if target != seat and self.sizes[target] >= len(self.table) + 1:
            for c in iter_bits(same):
                out.append(Action(seat, TRANSFER, (c,)))
        if (
            self.trump is not None
            and rank != JOKER >> 2
            and self.passer >= 0
            and self.sizes[self.passer] >= len(self.table)
        ):
            trump_card = rank * 4 + self.trump
            if self.counts[seat][trump_card]:
                out.append(Action(seat, SHOW_TRUMP, (trump_card,)))
        return out

    def _self_throw_cards(self, seat: int) -> list[Card]:
        """S10a: after a pass-ticket the defender may throw in to himself cards of its rank."""
        if self.ticket is None or self.taking or self.ticket[0] == seat:
            return []
        room = (self.sizes[seat] - self.uncovered) // 2
        cap = self.variant.throw_cap
        if cap is not None:
            room = min(room, cap - self.thrown)
        if room <= 0:
            return []
        return list(iter_bits(self.masks[seat] & RANK_MASKS[self.ticket[1]]))

    # ----------------------------------------------------------------------- apply
    def apply(self, action: Action, *, checked: bool = True) -> list[Event]:
        """Apply a legal action and return the events it produced (the action's own
        record first).  An illegal action raises :class:`IllegalAction` and changes
        nothing.  ``checked=False`` skips the check, for an action just taken from
        :meth:`legal_actions` (self-play's hot path)."""
        if checked:
            self.check(action)
        start = len(self.history)
        self.ply += 1
        cards = action.cards if action.kind != COVER else (action.attack, action.cards[0])
        self.history.append(Event("action", action.seat, cards, action.kind))
        kind = action.kind
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
        table_cards = tuple(c for pair in self.table for c in pair if c >= 0)
        if taken:
            for c in table_cards:
                self._add(defender, c)
        else:
            for c in table_cards:
                self.discard[c] += 1
        self.history.append(
            Event("bout_end", defender, table_cards, "taken" if taken else "beaten")
        )
        self._draw_cards()
        self._clear_bout()
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
        order = [(a + i) % n for i in range(n)]
        if self.variant.has_trump:  # S13: the final defender draws last
            order.remove(self.defender)
            order.append(self.defender)
        out = self.out
        for s in order:
            if s in out:
                continue
            need = HAND_SIZE - self.sizes[s]
            if need <= 0:
                continue
            drawn = []
            while need and stock:
                c = stock.pop()
                self._add(s, c)
                drawn.append(c)
                need -= 1
            self.history.append(Event("draw", s, tuple(drawn)))
            if not stock:
                break

    # ----------------------------------------------------------------------- check
    def check(self, action: Action) -> None:
        """Raise :class:`IllegalAction` if ``action`` is not legal now."""
        seat = action.seat
        kind = action.kind
        if self.phase == OVER_PHASE:
            raise IllegalAction("game_over", "the game is over")
        if not isinstance(seat, int) or not 0 <= seat < self.players:
            raise IllegalAction(
                "bad_seat", f"there is no seat {seat!r} in a {self.players}-player game"
            )
        if seat in self.out:
            raise IllegalAction("player_out", f"seat {seat} is out of the game")
        cards = action.cards
        if kind in (COVER, TRANSFER, SHOW_TRUMP) and len(cards) != 1:
            # a hand-built Action tuple; the constructors and parsers never make one
            raise IllegalAction("bad_action", f"{kind} takes exactly one card")
        if kind in (LEAD, THROW, COVER, TRANSFER, SHOW_TRUMP) and not self._has_all(seat, cards):
            raise IllegalAction(
                "card_not_in_hand", f"seat {seat} does not hold {' '.join(_names(cards))}"
            )
        if kind == LEAD:
            self._check_lead(seat, cards)
            return
        if self.phase != BOUT_PHASE:
            raise IllegalAction(
                "wrong_phase", f"no bout in progress: seat {self.attacker} must lead first"
            )
        if kind == COVER:
            self._check_cover(seat, action.attack, cards[0])
        elif kind == THROW:
            self._check_throw(seat, cards)
        elif kind == TAKE:
            self._check_defender(seat, "take")
            if self.taking:
                raise IllegalAction("already_taking", "the defender has already declared TAKE")
            if not self.uncovered:
                raise IllegalAction(
                    "nothing_to_take", "every attack card is covered: there is nothing to take"
                )
        elif kind == PASS:
            self._check_pass(seat)
        elif kind in (TRANSFER, SHOW_TRUMP):
            self._check_redirect(seat, kind, cards[0])
        else:  # pragma: no cover - Action.kind is validated by its constructors
            raise IllegalAction("bad_action", f"unknown action type {kind!r}")

    def _check_lead(self, seat: int, cards: tuple[Card, ...]) -> None:
        if self.phase != LEAD_PHASE:
            raise IllegalAction(
                "wrong_phase", "a bout is in progress: there is nothing to lead now"
            )
        if seat != self.attacker:
            raise IllegalAction("not_your_turn", f"seat {self.attacker} leads now, not seat {seat}")
        if not cards:
            raise IllegalAction("no_cards", "a lead needs at least one card")
        if not self.variant.lead_many_of_one_suit:
            if len(cards) != 1:
                raise IllegalAction("lead_one_card", "the lead is exactly one card (S6)")
            return
        if JOKER in cards or len({suit_of(c) for c in cards}) != 1:
            raise IllegalAction("lead_one_suit", "a lead is one or more cards of one suit (C6)")
        if len(cards) > self.sizes[self.defender]:
            raise IllegalAction(
                "hand_limit",
                f"the defender holds {self.sizes[self.defender]} cards: lead at most that many (C6)",
            )

    def _check_defender(self, seat: int, what: str) -> None:
        if seat != self.defender:
            raise IllegalAction(
                "not_defender", f"only the defender (seat {self.defender}) may {what}"
            )

    def _check_cover(self, seat: int, attack: Card, card: Card) -> None:
        self._check_defender(seat, "cover")
        if self.taking:
            raise IllegalAction("already_taking", "after TAKE the defender covers nothing more")
        if not any(a == attack and c < 0 for a, c in self.table):
            raise IllegalAction(
                "attack_not_on_table", f"there is no uncovered {card_name(attack)} on the table"
            )
        if not self.beat[attack] >> card & 1:
            rule = "C4" if self.variant.name == "chuvash" else "S4"
            raise IllegalAction(
                "does_not_beat", f"{card_name(card)} does not beat {card_name(attack)} ({rule})"
            )

    def _check_throw(self, seat: int, cards: tuple[Card, ...]) -> None:
        if not cards:
            raise IllegalAction("no_cards", "a throw-in needs at least one card")
        k = len(cards)
        if seat == self.defender:
            self._check_self_throw(seat, cards)
            return
        if not self._throw_open():
            rule = (
                "C10: only after the defender has covered a card"
                if self.variant.immediate_take_ends_bout
                else "S10: only after the defender has covered a card or declared TAKE"
            )
            raise IllegalAction("throw_in_closed", f"no throw-ins yet ({rule})")
        if self.passed >> seat & 1:
            raise IllegalAction(
                "already_passed", f"seat {seat} has passed since the table last changed"
            )
        if any(not self.table_ranks >> c & 1 for c in cards):
            bad = [c for c in cards if not self.table_ranks >> c & 1]
            raise IllegalAction(
                "rank_not_on_table",
                f"{' '.join(_names(bad))}: only ranks already on the table may be thrown in",
            )
        # RULES §0 hand limit / S10 cap first: when no room is left, priority() is -1
        # and the honest reason is the limit, not someone else's priority.
        self._check_room(k, self.sizes[self.defender] - self.uncovered)
        p = self.priority()
        if p != seat:
            who = f"seat {p} has" if p >= 0 else "nobody has"
            raise IllegalAction(
                "not_your_priority", f"{who} the throw-in priority, not seat {seat}"
            )

    def _check_room(self, k: int, hand_room: int) -> None:
        cap = self.variant.throw_cap
        if cap is not None and self.thrown + k > cap:
            raise IllegalAction(
                "throw_in_cap",
                f"at most {cap} cards may be thrown in per bout; {self.thrown} already were (S10)",
            )
        if k > hand_room:
            raise IllegalAction(
                "hand_limit",
                f"the defender could cover at most {max(hand_room, 0)} more card(s): "
                "uncovered attack cards may not outnumber his hand",
            )

    def _check_self_throw(self, seat: int, cards: tuple[Card, ...]) -> None:
        # S10a: only after a pass-ticket, to oneself, the ticket's rank, until TAKE.
        if self.ticket is None or self.ticket[0] == seat:
            raise IllegalAction(
                "defender_cannot_throw",
                "the defender throws in only after a pass-ticket was shown to him (S10a)",
            )
        if self.taking:
            raise IllegalAction(
                "already_taking", "after TAKE the defender throws in nothing more (S10a)"
            )
        rank = rank_of(self.ticket[1])
        if any(rank_of(c) != rank for c in cards):
            raise IllegalAction(
                "rank_not_on_table",
                "the defender may throw in only cards of the pass-ticket's rank "
                f"{rank_name(self.ticket[1])} (S10a)",
            )
        # The hand limit counts his hand after the thrown cards leave it:
        # uncovered + k <= size - k.
        self._check_room(len(cards), (self.sizes[seat] - self.uncovered) // 2)

    def _check_pass(self, seat: int) -> None:
        if seat == self.defender:
            raise IllegalAction("defender_cannot_pass", "the defender never passes: cover or take")
        if not self.sizes[seat]:
            raise IllegalAction(
                "no_cards", f"seat {seat} holds no cards and takes no part in this bout"
            )
        if not self._throw_open():
            raise IllegalAction(
                "throw_in_closed", "throw-ins are not open: there is nothing to pass"
            )
        if self.passed >> seat & 1:
            raise IllegalAction("already_passed", f"seat {seat} has already passed")

    def _check_redirect(self, seat: int, kind: str, card: Card) -> None:
        what = "transfer" if kind == TRANSFER else "show a pass-ticket"
        if not self.variant.transfers:
            raise IllegalAction(
                "transfer_not_allowed", f"{self.variant.title} has no transfers or pass-tickets"
            )
        self._check_defender(seat, what)
        if self.taking:
            raise IllegalAction("already_taking", f"after TAKE the defender cannot {what}")
        if self.covered_any:
            raise IllegalAction(
                "transfer_not_allowed", f"a card is already covered: too late to {what} (S8)"
            )
        if self.ticket is not None:
            raise IllegalAction(
                "must_defend", "after a pass-ticket the defender must cover or take (S8)"
            )
        attack = self.table[0][0]
        if rank_of(card) != rank_of(attack):
            raise IllegalAction(
                "wrong_rank",
                f"{card_name(card)} is not of the attack's rank {rank_name(attack)} (S8)",
            )
        if kind == TRANSFER:
            target = self._next_active(seat)
            if target == seat:
                raise IllegalAction(
                    "transfer_not_allowed", "no other seat can take the attack: cover or take (S8)"
                )
            if self.sizes[target] < len(self.table) + 1:
                raise IllegalAction(
                    "hand_limit",
                    f"seat {target} holds {self.sizes[target]} cards: too few for "
                    f"{len(self.table) + 1} attack cards (S8)",
                )
            return
        if card == JOKER or self.trump is None or suit_of(card) != self.trump:
            raise IllegalAction(
                "not_trump", f"{card_name(card)} is not a trump: a pass-ticket is a trump (S8)"
            )
        target = self.passer
        if self.sizes[target] < len(self.table):
            raise IllegalAction(
                "hand_limit",
                f"seat {target} holds {self.sizes[target]} cards: too few for "
                f"{len(self.table)} attack cards (S8)",
            )

    # ------------------------------------------------------------------------ copy
    def copy(self) -> GameState:
        """A deep copy sharing only immutable parts (variant, beat table, events)."""
        new = GameState.__new__(GameState)
        for name in _SHALLOW:
            setattr(new, name, getattr(self, name))
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
        from engine.serialize import state_to_json

        return state_to_json(self) == state_to_json(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<GameState {self.variant.name} {self.players}p phase={self.phase} "
            f"attacker={self.attacker} defender={self.defender} ply={self.ply}>"
        )


_SHALLOW = (
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


_SUBSETS: dict[tuple[int, int], tuple[tuple[Card, ...], ...]] = {}
_new_action = tuple.__new__  # Action(...) without the NamedTuple's Python-level __new__


def _suit_leads(seat: int, suit_cards: int, limit: int) -> list[Action]:
    """C6: every non-empty set of the given cards of one suit, at most ``limit`` of
    them.  The sets are memoised per (cards, limit): leads are the only action list
    that grows exponentially with the hand."""
    limit = min(limit, suit_cards.bit_count())
    key = (suit_cards, limit)
    subsets = _SUBSETS.get(key)
    if subsets is None:
        cards = list(iter_bits(suit_cards))
        k = len(cards)
        subsets = tuple(
            tuple(cards[i] for i in range(k) if subset >> i & 1)
            for subset in range(1, 1 << k)
            if subset.bit_count() <= limit
        )
        if len(_SUBSETS) > 20_000:
            _SUBSETS.clear()
        _SUBSETS[key] = subsets
    return [_new_action(Action, (seat, LEAD, t, -1)) for t in subsets]


def _names(cards: tuple[Card, ...] | list[Card]) -> list[str]:
    return [card_name(c) if 0 <= c < NCARDS else repr(c) for c in cards]
