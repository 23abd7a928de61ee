"""What a seat may do now: the legal actions, generated from bitmasks."""

from __future__ import annotations

from functools import cache

from engine.actions import COVER, LEAD, PASS, SHOW_TRUMP, TAKE, THROW, TRANSFER, Action
from engine.base import LEAD_PHASE, OVER_PHASE, StateBase
from engine.cards import JOKER, NCARDS, RANK_MASKS, SUIT_MASKS, Card, iter_bits

_new_action = tuple.__new__  # Action(...) without the NamedTuple's Python-level __new__
_ONE: tuple[tuple[Card], ...] = tuple((c,) for c in range(NCARDS))
_MAX_SEATS = 16
_TAKE: tuple[Action, ...] = tuple(Action(s, TAKE) for s in range(_MAX_SEATS))
_PASS: tuple[Action, ...] = tuple(Action(s, PASS) for s in range(_MAX_SEATS))


class LegalActions(StateBase):
    __slots__ = ()

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action ``seat`` may take now.  Throw-ins (which may go several cards
        at once) are listed one card each; ``apply`` also accepts several at once.
        Chuvash leads (C6) are listed as every non-empty set of cards of one suit
        that the hand limit allows."""
        phase = self.phase
        if phase == OVER_PHASE or not 0 <= seat < self.players:
            return []
        if phase == LEAD_PHASE:
            return self._legal_leads(seat) if seat == self.attacker else []
        if seat == self.defender:
            return self._legal_defence(seat)
        return self._legal_throws(seat)

    def forced_pass(self, seat: int) -> bool:
        """PASS is all ``seat`` may do now and until the table changes: a thrower
        whose legal actions are PASS alone and who has no legal throw-in even once
        priority reaches him -- no card of a rank on the table, or no room left
        (hand limit, S10 cap).  RULES §0 Passing / Throw-in priority: such a
        player counts as passed; a seat that merely waits for priority (it holds
        a rank on the table) is not forced."""
        legal = self.legal_actions(seat)
        if len(legal) != 1 or legal[0].kind != PASS:
            return False
        return not self.masks[seat] & self.table_ranks or self._room() <= 0

    def forced_pass_in_sight(self, seat: int) -> bool:
        """:meth:`forced_pass` for a reason every player sees -- no room left (the
        hand limit, the S10 cap: counts on the table) -- never for the cards he
        holds: a seat shown as passed because it has no rank on the table would
        tell the table what its hidden hand lacks before priority reaches it
        (RULES §0 Throw-in priority skips it anyway)."""
        return self.forced_pass(seat) and self._room() <= 0

    def _legal_defence(self, seat: int) -> list[Action]:
        """The defender during a bout: covers (C9 / S9), S8 redirects, S10a
        self-throws, TAKE."""
        out: list[Action] = []
        if self.taking:  # C11 / S11: after TAKE he covers, transfers and self-throws nothing
            return out
        if self.uncovered:  # C9 / S9: cover any uncovered attack card
            mask = self.masks[seat]
            beat = self.beat
            seen = 0
            for attack, cover in self.table:
                if cover < 0 and not seen >> attack & 1:
                    seen |= 1 << attack
                    m = mask & beat[attack]
                    while m:
                        low = m & -m
                        m ^= low
                        out.append(
                            _new_action(Action, (seat, COVER, _ONE[low.bit_length() - 1], attack))
                        )
        if not self.covered_any and self.variant.transfers and self.ticket is None:
            out.extend(self._legal_redirects(seat))  # S8
        if self.ticket is not None:
            for c in self._self_throw_cards(seat):  # S10a
                out.append(_new_action(Action, (seat, THROW, _ONE[c], -1)))
        if self.uncovered:  # TAKE only while an attack card is uncovered (§0 Take)
            out.append(_TAKE[seat])
        return out

    def _legal_throws(self, seat: int) -> list[Action]:
        """A non-defender during a bout: throw-ins of a rank on the table, by the
        priority holder only (C10 / S10), and PASS while throw-ins are open."""
        out: list[Action] = []
        mask = self.masks[seat]
        if mask and self._throw_open() and not self.passed >> seat & 1:
            if self.priority() == seat:
                m = mask & self.table_ranks
                while m:
                    low = m & -m
                    m ^= low
                    out.append(_new_action(Action, (seat, THROW, _ONE[low.bit_length() - 1], -1)))
            out.append(_PASS[seat])
        return out

    def sample_action(self, seat: int, u: float) -> Action | None:
        """``legal_actions(seat)[int(u * n)]`` for ``0 <= u < 1`` (``None`` when there
        is none), without building every C6 multi-card lead: uniform sampling for
        random players at the cost of one action."""
        if self.phase != LEAD_PHASE:
            if self.phase != OVER_PHASE and 0 <= seat < self.players and seat != self.defender:
                return self._sample_throw(seat, u)
            if (
                seat == self.defender
                and self.uncovered
                and not self.taking
                and self.ticket is None
                and (self.covered_any or not self.variant.transfers)
            ):
                return self._sample_cover_or_take(seat, u)
            actions = self.legal_actions(seat)
            return actions[int(u * len(actions))] if actions else None
        if seat != self.attacker or not self.variant.lead_many_of_one_suit:
            actions = self.legal_actions(seat)
            return actions[int(u * len(actions))] if actions else None
        mask = self.masks[seat]
        limit = self.sizes[self.defender]
        groups: list[tuple[int, tuple[int, ...]]] = []
        total = 0
        for suit_mask in SUIT_MASKS:
            m = mask & suit_mask
            if m:
                k = m.bit_count()
                patterns = lead_patterns(k, limit if limit < k else k)
                groups.append((m, patterns))
                total += len(patterns)
        i = int(u * total)
        for m, patterns in groups:
            if i < len(patterns):
                # the i-th subset in the order of _suit_subsets, built alone
                pattern = patterns[i]
                cards = tuple(c for b, c in enumerate(iter_bits(m)) if pattern >> b & 1)
                return _new_action(Action, (seat, LEAD, cards, -1))
            i -= len(patterns)
        return None

    def _sample_throw(self, seat: int, u: float) -> Action | None:
        """``_legal_throws(seat)[int(u * n)]``, counted before building one."""
        mask = self.masks[seat]
        if not mask or not self._throw_open() or self.passed >> seat & 1:
            return None
        m = mask & self.table_ranks if self.priority() == seat else 0
        k = m.bit_count()
        i = int(u * (k + 1))
        if i == k:
            return _PASS[seat]  # listed last
        for _ in range(i):
            m &= m - 1  # drop the lowest card: the i-th throw-in, lowest first
        low = m & -m
        return _new_action(Action, (seat, THROW, _ONE[low.bit_length() - 1], -1))

    def _sample_cover_or_take(self, seat: int, u: float) -> Action:
        """``_legal_defence(seat)[int(u * n)]`` when it holds only covers and TAKE
        (no S8 redirect, no S10a self-throw possible), counted before building one."""
        mask = self.masks[seat]
        beat = self.beat
        seen = 0
        groups: list[tuple[int, int]] = []
        total = 1  # TAKE, listed last
        for attack, cover in self.table:
            if cover < 0 and not seen >> attack & 1:
                seen |= 1 << attack
                m = mask & beat[attack]
                if m:
                    groups.append((attack, m))
                    total += m.bit_count()
        i = int(u * total)
        for attack, m in groups:
            k = m.bit_count()
            if i < k:
                for _ in range(i):
                    m &= m - 1  # drop the lowest card: the i-th beater, lowest first
                low = m & -m
                return _new_action(Action, (seat, COVER, _ONE[low.bit_length() - 1], attack))
            i -= k
        return _TAKE[seat]

    def _legal_leads(self, seat: int) -> list[Action]:
        mask = self.masks[seat]
        if not self.variant.lead_many_of_one_suit:  # S6: exactly one card
            return [_new_action(Action, (seat, LEAD, (c,), -1)) for c in iter_bits(mask)]
        limit = self.sizes[self.defender]  # C6: at most as many as the defender holds
        out: list[Action] = []
        for suit_mask in SUIT_MASKS:
            m = mask & suit_mask
            if m:
                k = m.bit_count()
                key = (m << 8) | (limit if limit < k else k)
                subsets = _SUBSETS.get(key) or _suit_subsets(m, limit, key)
                out += [_new_action(Action, (seat, LEAD, cards, -1)) for cards in subsets]
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
                out.append(_new_action(Action, (seat, TRANSFER, (c,), -1)))
        if (
            self.trump is not None
            and rank != JOKER >> 2
            and self.passer >= 0
            and self.sizes[self.passer] >= len(self.table)
        ):
            trump_card = rank * 4 + self.trump
            if self.counts[seat][trump_card]:
                out.append(_new_action(Action, (seat, SHOW_TRUMP, (trump_card,), -1)))
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


@cache
def lead_patterns(k: int, limit: int) -> tuple[int, ...]:
    """The bit patterns of the non-empty subsets of ``k`` cards with at most
    ``limit`` of them, in increasing order (the order of :func:`_suit_subsets`)."""
    return tuple(p for p in range(1, 1 << k) if p.bit_count() <= limit)


_SUBSETS: dict[int, tuple[tuple[Card, ...], ...]] = {}
_SUBSETS_MAX = 8192  # measured: ~20 MB when full after thousands of random games;
# a bot process holds only the suits its players actually hold


def _suit_subsets(suit_cards: int, limit: int, key: int) -> tuple[tuple[Card, ...], ...]:
    """C6: every non-empty set of the given cards of one suit, at most ``limit`` of
    them.  Memoised (bounded) per (cards, limit): leads are the only action list that
    grows exponentially with the hand, and suit holdings recur."""
    cards = list(iter_bits(suit_cards))
    k = len(cards)
    subsets = tuple(
        tuple(cards[i] for i in range(k) if subset >> i & 1)
        for subset in range(1, 1 << k)
        if subset.bit_count() <= limit
    )
    if len(_SUBSETS) >= _SUBSETS_MAX:
        _SUBSETS.clear()
    _SUBSETS[key] = subsets
    return subsets
