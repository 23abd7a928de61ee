"""A playout representation made for speed (issue #26).

:class:`FastGame` holds only what a playout needs to reach the end of a game --
hands as presence masks (with counts in multi-deck games), the stock, the table as
two parallel lists, the bout's flags as plain ints -- and no history, no events, no
discard pile.  Its playout loop keeps all of that in local variables and inlines
the rules of :mod:`engine.state` (every branch names its rule), so that one action
costs a few bit operations instead of a dozen method calls.

What differs between the games is read from the engine's own tables, never
written again: the :class:`~engine.variants.Variant` switches (C6 / S6 leads, S8,
C8, the S10 cap, S13's drawing order), the beating relation
(:func:`~engine.variants.beaters`, C4 / S4), the hand size and the C6 lead
patterns (:func:`engine.legal.lead_patterns`).  The procedure itself -- who acts,
what a move does, how a bout ends -- is the part written twice.

The rules engine stays the reference: :meth:`FastGame.random_playout` makes the
same choices as :func:`engine.ai.rollout.random_playout` for the same random
numbers (the same seat among :meth:`~engine.state.GameState.to_act`, the same
``legal_actions(seat)[int(u * n)]``), and ``tests/engine/test_fastplay.py`` replays
its actions through :meth:`GameState.apply <engine.state.GameState.apply>`,
checked, and compares every move and the result; its ``FASTPLAY_RULES`` lists
every rule id this module implements, and a test requires each one's situations
to occur in those replays.
"""

from __future__ import annotations

import random
from functools import cache
from typing import Protocol

from engine.actions import COVER, LEAD, PASS, SHOW_TRUMP, TAKE, THROW, TRANSFER, Action
from engine.ai.values import CHUVASH_PRECIOUS, SHCH_PRECIOUS, chuvash_values, shchelkovsky_values
from engine.cards import JOKER, JOKER_RANK, NCARDS, RANK_MASKS, SUIT_MASKS
from engine.legal import lead_patterns
from engine.state import BOUT_PHASE, LEAD_PHASE, OVER_PHASE, GameState
from engine.variants import HAND_SIZE

_LEAD, _BOUT, _OVER = 0, 1, 2
_PHASES = {LEAD_PHASE: _LEAD, BOUT_PHASE: _BOUT, OVER_PHASE: _OVER}
_NO_CAP = 1 << 30
_new_action = tuple.__new__


class FastGame:
    """One game's state for playouts, copied from a :class:`GameState`."""

    __slots__ = (
        "att",
        "attacker",
        "beat",
        "cap",
        "counts",
        "cov",
        "covered_any",
        "defender",
        "defender_last",
        "draw",
        "emptied",
        "immediate_take",
        "lead_many",
        "loser",
        "masks",
        "n",
        "out",
        "passed",
        "passer",
        "phase",
        "ply",
        "ranks",
        "sizes",
        "stock",
        "taking",
        "thrown",
        "ticket_card",
        "ticket_seat",
        "transfers",
        "trump",
        "uncovered",
    )

    def __init__(self, state: GameState) -> None:
        variant = state.variant
        self.n = state.players
        self.lead_many = variant.lead_many_of_one_suit
        self.transfers = variant.transfers
        self.defender_last = variant.final_defender_draws_last  # S13 / C13
        self.immediate_take = variant.immediate_take_ends_bout
        self.cap = variant.throw_cap if variant.throw_cap is not None else _NO_CAP
        self.beat = state.beat
        self.trump = state.trump
        self.masks = state.masks[:]
        self.sizes = state.sizes[:]
        # one deck: a card is held at most once and the mask says it all
        self.counts = [row[:] for row in state.counts] if state.options.decks > 1 else None
        self.stock = state.stock[:]
        self.att = [a for a, _ in state.table]
        self.cov = [c for _, c in state.table]
        self.ranks = state.table_ranks
        self.uncovered = state.uncovered
        self.taking = state.taking
        self.covered_any = state.covered_any
        self.passed = state.passed
        self.thrown = state.thrown
        ticket = state.ticket
        self.ticket_seat = ticket[0] if ticket is not None else -1
        self.ticket_card = ticket[1] if ticket is not None else -1
        self.phase = _PHASES[state.phase]
        self.attacker = state.attacker
        self.defender = state.defender
        self.passer = state.passer
        self.out = state.out[:]
        self.emptied = state.emptied_at[:]
        self.loser = state.loser
        self.draw = state.draw
        self.ply = state.ply

    @property
    def over(self) -> bool:
        return self.phase == _OVER

    def random_playout(
        self, rng: random.Random, max_actions: int = 1_000_000, trace: list[Action] | None = None
    ) -> int:
        """Play on with uniformly random legal actions, as
        :func:`engine.ai.rollout.random_playout` does on a :class:`GameState` for the
        same ``rng``; returns the number of actions applied.  ``trace`` (when given)
        receives every action."""
        return self.playout(rng, None, max_actions, trace)

    def playout(  # noqa: C901 - one hot loop on purpose (see the docstring)
        self,
        rng: random.Random,
        policy: PlayoutPolicy | None,
        max_actions: int = 1_000_000,
        trace: list[Action] | None = None,
    ) -> int:
        """Play on, at most ``max_actions`` actions, every seat by ``policy`` (the
        greedy playout policy, as :func:`engine.ai.rollout.playout` plays it on a
        :class:`GameState` for the same ``rng``) or uniformly at random (``None``);
        returns the number of actions applied.  ``trace`` (when given) receives every
        action.

        One function on purpose: the state lives in local variables while it runs
        (written back at the end), which is most of the speed-up."""
        rand = rng.random
        eps = policy.epsilon if policy is not None else 1.0
        rot = self._rotations()
        masks = self.masks
        sizes = self.sizes
        counts = self.counts
        att = self.att
        cov = self.cov
        emptied = self.emptied
        beat = self.beat
        cap = self.cap
        late_throw = not self.immediate_take  # C8 / S10: throw-ins also after a TAKE
        transfers = self.transfers
        easy_defence = not transfers  # no S8: covers and TAKE only
        phase = self.phase
        attacker = self.attacker
        defender = self.defender
        passer = self.passer
        ranks = self.ranks
        uncovered = self.uncovered
        taking = self.taking
        covered_any = self.covered_any
        passed = self.passed
        thrown = self.thrown
        tseat = self.ticket_seat
        tcard = self.ticket_card
        ply = self.ply
        steps = 0
        prio = self._priority() if phase == _BOUT else -1
        while phase != _OVER and steps < max_actions:
            steps += 1
            ply += 1
            if phase == _LEAD:  # C6 cards of one suit / S6 one card
                seat = attacker
                if policy is not None and rand() >= eps:
                    cards = policy.lead(self, seat, defender)
                else:
                    cards = _sample_lead(masks[seat], sizes[defender], rand(), self.lead_many)
                if trace is not None:
                    trace.append(_new_action(Action, (seat, LEAD, tuple(cards), -1)))
                for c in cards:
                    _remove(masks, counts, sizes, seat, c)
                    att.append(c)
                    cov.append(-1)
                    ranks |= RANK_MASKS[c]
                if not sizes[seat]:  # RULES §0: the finishing order follows this
                    emptied[seat] = ply
                uncovered = len(cards)
                passer = seat
                phase = _BOUT
            else:
                # the defender (cover / take / S8) or the throw-in priority holder
                if uncovered and not taking:
                    seat = defender if prio < 0 or rand() < 0.5 else prio
                else:
                    seat = prio
                if policy is not None and rand() >= eps:
                    if seat != defender:
                        kind, c, a = policy.throw(self, seat, defender, uncovered, thrown, ranks)
                    else:
                        # S8 before any cover, with a card of the attack's rank
                        redirect = (
                            not covered_any
                            and transfers
                            and tseat < 0
                            and masks[seat] & RANK_MASKS[att[0]]
                        )
                        kind, c, a = policy.defend(
                            self,
                            seat,
                            self._defence(seat, passer, thrown, tseat, tcard, covers=False)
                            if redirect
                            else None,
                        )
                elif seat != defender:
                    u = rand()
                    # C10 / S10: a throw-in of a rank on the table, or PASS (listed last)
                    m = masks[seat] & ranks
                    k = m.bit_count()
                    i = int(u * (k + 1))
                    if i == k:
                        kind = PASS
                    else:
                        for _ in range(i):
                            m &= m - 1
                        c = (m & -m).bit_length() - 1
                        kind = THROW
                        a = -1
                elif tseat < 0 and (covered_any or easy_defence):
                    # C9 / S9: each beater of each uncovered attack card, then TAKE
                    a, c = _sample_cover(att, cov, masks[seat], beat, rand())
                    kind = COVER if c >= 0 else TAKE
                else:
                    # the full list: covers, S8 redirects, S10a self-throws, TAKE
                    moves = self._defence(seat, passer, thrown, tseat, tcard)
                    kind, c, a = moves[int(rand() * len(moves))]
                if kind == PASS:
                    if trace is not None:
                        trace.append(_new_action(Action, (seat, PASS, (), -1)))
                    passed |= 1 << seat
                elif kind == TAKE:
                    if trace is not None:
                        trace.append(_new_action(Action, (seat, TAKE, (), -1)))
                    taking = True
                elif kind == SHOW_TRUMP:
                    # S8 pass-ticket: the trump stays in hand; the attack goes back
                    if trace is not None:
                        trace.append(_new_action(Action, (seat, kind, (c,), a)))
                    tseat = seat
                    tcard = c
                    defender = passer
                    passer = seat
                else:
                    if trace is not None:
                        trace.append(_new_action(Action, (seat, kind, (c,), a)))
                    _remove(masks, counts, sizes, seat, c)
                    if not sizes[seat]:
                        emptied[seat] = ply
                    passed = 0  # a change of the table clears all passes (RULES §0)
                    if kind == COVER:
                        j = att.index(a)
                        while cov[j] >= 0:
                            j = att.index(a, j + 1)
                        cov[j] = c
                        ranks |= RANK_MASKS[c]
                        uncovered -= 1
                        covered_any = True
                    else:
                        att.append(c)
                        cov.append(-1)
                        uncovered += 1
                        if kind == THROW:  # S10 counts self-throws (S10a) too
                            thrown += 1
                        else:  # S8 transfer: the attack passes on clockwise
                            passer = seat
                            defender = self._next_active(seat)
            # RULES §0 throw-in priority; with nobody to act the bout ends
            prio = -1
            if covered_any or (taking and late_throw):
                room = sizes[defender] - uncovered
                if cap - thrown < room:
                    room = cap - thrown
                if room > 0:
                    for s in rot[attacker]:
                        if s != defender and not passed >> s & 1 and masks[s] & ranks:
                            prio = s
                            break
            if prio >= 0 or (uncovered and not taking):
                continue
            phase, attacker, defender = self._end_bout(attacker, defender, taking, rot)
            ranks = uncovered = thrown = passed = 0
            covered_any = taking = False
            tseat = tcard = passer = -1
        self.phase = phase
        self.attacker = attacker
        self.defender = defender
        self.passer = passer
        self.ranks = ranks
        self.uncovered = uncovered
        self.taking = taking
        self.covered_any = covered_any
        self.passed = passed
        self.thrown = thrown
        self.ticket_seat = tseat
        self.ticket_card = tcard
        self.ply = ply
        return steps

    def _rotations(self) -> tuple[tuple[int, ...], ...]:
        """``[a]``: every seat clockwise from ``a``."""
        n = self.n
        return tuple(tuple((a + i) % n for i in range(n)) for a in range(n))

    def _next_active(self, seat: int) -> int:
        """RULES §0 "next": the next seat clockwise that holds cards or can still draw
        (nobody is out while the stock lasts)."""
        n = self.n
        if self.stock:
            return (seat + 1) % n
        for i in range(1, n):
            s = (seat + i) % n
            if self.sizes[s]:
                return s
        return seat

    def _end_bout(
        self, attacker: int, defender: int, taken: bool, rot: tuple[tuple[int, ...], ...]
    ) -> tuple[int, int, int]:
        """The bout ends, taken (C11 / S11) or beaten off: the table goes, everyone
        draws, who emptied his hand goes out; returns the next phase, attacker and
        defender."""
        masks, sizes, counts, stock, att, cov = (
            self.masks,
            self.sizes,
            self.counts,
            self.stock,
            self.att,
            self.cov,
        )
        if taken:
            for c in att:
                _add(masks, counts, defender, c)
            for c in cov:
                if c >= 0:
                    _add(masks, counts, defender, c)
            sizes[defender] += len(att) + len(cov) - cov.count(-1)
        att.clear()
        cov.clear()
        if stock:
            self._draw(attacker, defender, rot)
        n = self.n
        if not stock:
            # RULES §0: who emptied his hand first goes out first; one holder loses
            out = self.out
            out += sorted(
                (s for s in range(n) if not sizes[s] and s not in out),
                key=self.emptied.__getitem__,
            )
            holders = [s for s in range(n) if sizes[s]]
            if len(holders) <= 1:
                self.loser = holders[0] if holders else None
                self.draw = not holders
                return _OVER, attacker, defender
        # C12 / S12: beaten off -> the defender leads; taken -> the seat after him
        leader = defender
        for s in (*rot[defender][1:], defender) if taken else rot[defender]:
            if sizes[s]:
                leader = s
                break
        return _LEAD, leader, self._next_active(leader)

    def _draw(self, attacker: int, defender: int, rot: tuple[tuple[int, ...], ...]) -> None:
        """C13 / S13: up to six each from the first attacker clockwise; S13 the final
        defender last."""
        masks, sizes, counts, stock = self.masks, self.sizes, self.counts, self.stock
        order = rot[attacker]
        if self.defender_last:
            order = (*(s for s in order if s != defender), defender)
        for s in order:
            need = HAND_SIZE - sizes[s]
            if need <= 0:
                continue
            if need > len(stock):
                need = len(stock)
            for c in stock[-need:]:
                _add(masks, counts, s, c)
            del stock[-need:]
            sizes[s] += need
            if not stock:
                return

    def _defence(
        self, seat: int, passer: int, thrown: int, tseat: int, tcard: int, covers: bool = True
    ) -> list[tuple[str, int, int]]:
        """The defender's legal moves in the order of
        :meth:`GameState.legal_actions <engine.state.GameState.legal_actions>`, as
        ``(kind, card, attack)``: covers (C9 / S9), S8 transfers and pass-ticket before
        any cover, S10a self-throws after a pass-ticket, TAKE.  The playout keeps its
        scalars in locals: they come as arguments, the lists from ``self``.
        ``covers=False`` leaves the covers out (the greedy policy plans its own)."""
        sizes, att, cov = self.sizes, self.att, self.cov
        mask = self.masks[seat]
        moves: list[tuple[str, int, int]] = []
        uncovered = cov.count(-1)
        seen = 0
        for a, c in zip(att, cov, strict=True):
            if covers and c < 0 and not seen >> a & 1:
                seen |= 1 << a
                m = mask & self.beat[a]
                while m:
                    low = m & -m
                    m ^= low
                    moves.append((COVER, low.bit_length() - 1, a))
        if uncovered == len(att) and self.transfers and tseat < 0:  # no cover yet
            first = att[0]
            same = mask & RANK_MASKS[first]
            if same:
                target = self._next_active(seat)
                if target != seat and sizes[target] >= len(att) + 1:
                    m = same
                    while m:
                        low = m & -m
                        m ^= low
                        moves.append((TRANSFER, low.bit_length() - 1, -1))
                rank = first >> 2
                if self.trump is not None and rank != JOKER_RANK and passer >= 0:
                    trump_card = rank * 4 + self.trump
                    if sizes[passer] >= len(att) and mask >> trump_card & 1:
                        moves.append((SHOW_TRUMP, trump_card, -1))
        if tseat >= 0 and tseat != seat:
            room = min((sizes[seat] - uncovered) // 2, self.cap - thrown)
            if room > 0:
                m = mask & RANK_MASKS[tcard]
                while m:
                    low = m & -m
                    m ^= low
                    moves.append((THROW, low.bit_length() - 1, -1))
        moves.append((TAKE, -1, -1))
        return moves

    def _priority(self) -> int:
        """RULES §0 throw-in priority (as :meth:`GameState.priority`)."""
        if not (self.covered_any or (self.taking and not self.immediate_take)):
            return -1
        room = min(self.sizes[self.defender] - self.uncovered, self.cap - self.thrown)
        if room <= 0:
            return -1
        for i in range(self.n):
            s = (self.attacker + i) % self.n
            if s != self.defender and not self.passed >> s & 1 and self.masks[s] & self.ranks:
                return s
        return -1


class PlayoutPolicy(Protocol):
    """A playout policy for :meth:`FastGame.playout` (moves as ``(kind, card,
    attack)``); with probability ``epsilon`` a uniformly random move instead."""

    epsilon: float

    def lead(self, game: FastGame, seat: int, defender: int) -> list[int]: ...

    def throw(
        self, game: FastGame, seat: int, defender: int, uncovered: int, thrown: int, ranks: int
    ) -> tuple[str, int, int]: ...

    def defend(
        self, game: FastGame, seat: int, moves: list[tuple[str, int, int]] | None
    ) -> tuple[str, int, int]: ...


class FastPolicy:
    """The greedy playout policy of :class:`engine.ai.rollout.Policy` for
    :meth:`FastGame.playout`: lead the cheapest card (C6: with the cheap cards of
    its suit), cover the hardest attack with the cheapest beater or take, S8
    pass-ticket always and a transfer when cheaper than covering, throw in the
    cheapest card.  Moves come as ``(kind, card, attack)``."""

    __slots__ = ("beat", "by_suit", "chuvash", "epsilon", "order", "place", "precious", "values")

    def __init__(self, state: GameState, epsilon: float = 0.1) -> None:
        self.chuvash = state.variant.name == "chuvash"
        self.values, self.order, self.precious = _policy_values(self.chuvash, state.trump)
        self.place = _places(self.order)  # a card's place in ``order``
        self.by_suit = _by_suit(self.order)  # each suit's cards, cheapest first
        self.beat = state.beat
        self.epsilon = epsilon

    def cheapest(self, mask: int) -> int:
        """The cheapest card of a non-empty mask (a hand has few cards: scan them)."""
        place = self.place
        best = len(place)
        while mask:
            low = mask & -mask
            mask ^= low
            p = place[low.bit_length() - 1]
            if p < best:
                best = p
        return self.order[best]

    def lead(self, game: FastGame, seat: int, defender: int) -> list[int]:
        mask = game.masks[seat]
        limit = game.sizes[defender]
        c = self.cheapest(mask)
        if not self.chuvash:
            return [c]  # S6: one card
        # C6: the cheap cards of the cheapest card's suit, at most what he holds
        same = mask & SUIT_MASKS[c & 3]
        cards = [c]
        cap = self.precious * 0.6
        values = self.values
        for x in self.by_suit[c & 3]:  # cheapest first: stop at the first dear one
            if len(cards) >= limit or values[x] > cap:
                break
            if x != c and same >> x & 1:
                cards.append(x)
        cards.sort()
        return cards

    def throw(
        self, game: FastGame, seat: int, defender: int, uncovered: int, thrown: int, ranks: int
    ) -> tuple[str, int, int]:
        """The throw-in priority holder (who holds a rank on the table)."""
        c = self.cheapest(game.masks[seat] & ranks)
        if not game.stock or self.values[c] < self.precious:
            return THROW, c, -1
        return PASS, -1, -1

    def defend(
        self, game: FastGame, seat: int, moves: list[tuple[str, int, int]] | None
    ) -> tuple[str, int, int]:
        """``moves``: the legal list when an S8 redirect is possible, else None."""
        att, cov, mask = game.att, game.cov, game.masks[seat]
        stock = len(game.stock)
        big_stock = stock >= 2 * game.n
        values = self.values
        beat = self.beat
        plan: list[tuple[int, int]] = []
        used = 0
        # hardest attack first; one beater each (a greedy cover plan, C9 / S9)
        attacks = sorted(
            (a for a, c in zip(att, cov, strict=True) if c < 0), key=values.__getitem__
        )
        for a in reversed(attacks):
            m = mask & beat[a] & ~used
            if not m:
                plan = []
                break
            c = self.cheapest(m)
            used |= 1 << c
            plan.append((a, c))
        if moves is not None and mask & RANK_MASKS[att[0]]:  # S8
            best = -1
            for kind, c, _ in moves:
                if kind == SHOW_TRUMP:
                    return kind, c, -1  # costs nothing
                if kind == TRANSFER and (best < 0 or c < best):
                    best = c
            if best >= 0:
                cover_cost = sum(values[c] for _, c in plan) if plan else 1e9
                if values[best] <= cover_cost:
                    return TRANSFER, best, -1
        if not plan:
            return TAKE, -1, -1
        if big_stock:
            # take rather than spend precious cards while the stock is still big
            dear = sum(1 for _, c in plan if values[c] >= self.precious)
            if dear and dear * 10 + stock > 40:
                return TAKE, -1, -1
        a, c = plan[0]
        return COVER, c, a


@cache
def _policy_values(
    chuvash: bool, trump: int | None
) -> tuple[tuple[float, ...], tuple[int, ...], float]:
    """The playout policy's card values, the cards cheapest first, the precious line."""
    if chuvash:
        values, precious = chuvash_values(), CHUVASH_PRECIOUS
    else:
        values, precious = shchelkovsky_values(trump, True), SHCH_PRECIOUS
    return values, tuple(sorted(range(NCARDS), key=lambda c: (values[c], c))), precious


@cache
def _places(order: tuple[int, ...]) -> tuple[int, ...]:
    place = [0] * len(order)
    for i, c in enumerate(order):
        place[c] = i
    return tuple(place)


@cache
def _by_suit(order: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple(c for c in order if c != JOKER and c & 3 == s) for s in range(4))


def _remove(
    masks: list[int], counts: list[list[int]] | None, sizes: list[int], seat: int, c: int
) -> None:
    sizes[seat] -= 1
    if counts is None:
        masks[seat] ^= 1 << c
    else:
        row = counts[seat]
        row[c] -= 1
        if not row[c]:
            masks[seat] ^= 1 << c


def _sample_lead(mask: int, limit: int, u: float, many: bool) -> list[int]:
    """``legal_actions(attacker)[int(u * n)]``'s cards: C6 every non-empty set of one
    suit's cards, at most ``limit`` (the defender's hand), in the engine's order;
    S6 one card, lowest first."""
    if not many:
        for _ in range(int(u * mask.bit_count())):
            mask &= mask - 1
        return [(mask & -mask).bit_length() - 1]
    groups = []
    total = 0
    for suit_mask in SUIT_MASKS:
        m = mask & suit_mask
        if m:
            k = m.bit_count()
            patterns = lead_patterns(k, limit if limit < k else k)
            groups.append((m, patterns))
            total += len(patterns)
    i = int(u * total)
    cards: list[int] = []
    for m, patterns in groups:
        if i < len(patterns):
            pattern = patterns[i]
            while m:
                low = m & -m
                m ^= low
                if pattern & 1:
                    cards.append(low.bit_length() - 1)
                pattern >>= 1
            return cards
        i -= len(patterns)
    raise ValueError("no lead")  # pragma: no cover - the leader always holds a card


def _sample_cover(
    att: list[int], cov: list[int], mask: int, beat: tuple[int, ...], u: float
) -> tuple[int, int]:
    """``(attack, card)`` of the ``int(u * n)``-th of the defender's covers (each
    uncovered attack card in table order, its beaters lowest first), or ``(-1, -1)``
    for TAKE, listed last."""
    seen = 0
    total = 1
    options = []
    for a, c in zip(att, cov, strict=True):
        if c < 0 and not seen >> a & 1:
            seen |= 1 << a
            m = mask & beat[a]
            if m:
                options.append((a, m))
                total += m.bit_count()
    i = int(u * total)
    for a, m in options:
        k = m.bit_count()
        if i < k:
            for _ in range(i):
                m &= m - 1
            return a, (m & -m).bit_length() - 1
        i -= k
    return -1, -1


def _add(masks: list[int], counts: list[list[int]] | None, seat: int, c: int) -> None:
    masks[seat] |= 1 << c
    if counts is not None:
        counts[seat][c] += 1


__all__ = ["FastGame", "FastPolicy", "PlayoutPolicy"]
