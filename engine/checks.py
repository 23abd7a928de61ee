"""Is an action legal now, and if not, exactly why (an :class:`IllegalAction` with
a stable code).  Checking never changes the state."""

from __future__ import annotations

from engine.actions import COVER, LEAD, PASS, SHOW_TRUMP, TAKE, THROW, TRANSFER, Action
from engine.base import BOUT_PHASE, LEAD_PHASE, OVER_PHASE, StateBase
from engine.cards import JOKER, NCARDS, Card, card_name, rank_name, rank_of, suit_of
from engine.errors import IllegalAction


class RuleChecks(StateBase):
    __slots__ = ()

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


def _names(cards: tuple[Card, ...] | list[Card]) -> list[str]:
    return [card_name(c) if 0 <= c < NCARDS else repr(c) for c in cards]
