"""The heuristic player's rules of thumb as a playout policy (issue #26).

The search player (:mod:`engine.ai.search`) plays its sampled deals out with a
policy at every seat.  This one follows :class:`~engine.ai.heuristic.HeuristicPlayer`
(the *normal* level, and a fair model of a sensible player) on the fast
representation (:class:`~engine.ai.fastplay.FastGame`), with the sampled deal's
hands in sight where the heuristic estimates from public facts:

* lead: S6 the cheapest card, a rank held several times preferred (to throw in
  later); C6 the ``k`` cheapest cards of a suit scored by cost, length and
  whether the defender can beat them;
* defend: the cheapest cover of every attack card (:func:`~engine.ai.cover.cover_plan`),
  or TAKE when it is impossible or too dear for the stage of the game; S8 a
  pass-ticket always, a transfer when cheaper than covering;
* throw in: the cheapest card of a rank on the table while cards are cheap for
  the stage, anything once the stock is empty.

Moves come as ``(kind, card, attack)``; multi-card throw-ins go one card a move.
Every move it proposes is legal: ``tests/engine/test_fastplay.py`` replays its
playouts through the rules engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.actions import COVER, PASS, SHOW_TRUMP, TAKE, THROW, TRANSFER
from engine.ai.cover import cover_plan
from engine.ai.public_info import deck_counts
from engine.ai.values import CHUVASH_PRECIOUS, SHCH_PRECIOUS, chuvash_values, shchelkovsky_values
from engine.cards import SUIT_MASKS
from engine.state import GameState
from engine.variants import HAND_SIZE

if TYPE_CHECKING:  # pragma: no cover
    from engine.ai.fastplay import FastGame

Move = tuple[str, int, int]
Plan = tuple[float, list[tuple[int, int]]] | None


class HeuristicPolicy:
    """The heuristic player's choices for :meth:`FastGame.playout`."""

    __slots__ = (
        "beat",
        "chuvash",
        "epsilon",
        "full",
        "hands",
        "leads",
        "plans",
        "precious",
        "values",
    )

    def __init__(self, state: GameState, epsilon: float = 0.1) -> None:
        self.chuvash = state.variant.name == "chuvash"
        if self.chuvash:
            self.values = chuvash_values()
            self.precious = CHUVASH_PRECIOUS
        else:
            self.values = shchelkovsky_values(state.trump, True)
            self.precious = SHCH_PRECIOUS
        self.beat = state.beat
        self.epsilon = epsilon
        self.full = sum(deck_counts(state)) - state.players * HAND_SIZE
        # one deck, memoised within a decision's playouts (bounded): a hand by its
        # mask, a C6 lead by the hands and the limit, a cover plan by attacks and hand
        self.hands: dict[int, list[int]] = {}
        self.leads: dict[tuple[int, int, int, bool], list[int]] = {}
        self.plans: dict[tuple[tuple[int, ...], int], Plan] = {}

    def _stage(self, game: FastGame) -> float:
        """1.0 at the deal, 0.0 once the stock is empty."""
        return min(1.0, len(game.stock) / self.full) if self.full > 0 else 0.0

    def _hand(self, game: FastGame, seat: int) -> list[int]:
        """The seat's cards, cheapest first (repeated cards repeat)."""
        values = self.values
        mask = game.masks[seat]
        if game.counts is None:
            cached = self.hands.get(mask)
            if cached is not None:
                return cached
        cards: list[int] = []
        while mask:
            low = mask & -mask
            mask ^= low
            c = low.bit_length() - 1
            cards.append(c)
            if game.counts is not None:
                cards += [c] * (game.counts[seat][c] - 1)
        cards.sort(key=lambda c: (values[c], c))
        if game.counts is None:
            if len(self.hands) > 4096:
                self.hands.clear()
            self.hands[mask] = cards
        return cards

    # -- leading ------------------------------------------------------------------------
    def lead(self, game: FastGame, seat: int, defender: int) -> list[int]:
        beat = self.beat
        their = game.masks[defender]
        endgame = not game.stock
        values = self.values
        if not self.chuvash:
            # S6: cheapest; a rank held more than once is worth a little; in the
            # endgame a card he cannot beat is better
            cards = _bits(game.masks[seat])
            row = game.counts[seat] if game.counts is not None else None
            ranks: dict[int, int] = {}
            for c in cards:
                ranks[c >> 2] = ranks.get(c >> 2, 0) + (row[c] if row is not None else 1)
            best = min(
                (
                    values[c]
                    - 1.5 * (ranks[c >> 2] - 1)
                    - (3.0 if endgame and not their & beat[c] else 0.0),
                    c,
                )
                for c in cards
            )
            return [best[1]]
        # C6: the k cheapest cards of a suit, k up to what he holds
        limit = game.sizes[defender]
        key = (game.masks[seat], their, limit, endgame)
        cached = self.leads.get(key)
        if cached is not None:
            return cached
        hand = self._hand(game, seat)
        chosen: tuple[float, list[int]] | None = None
        for suit_mask in SUIT_MASKS:
            cards = [c for c in hand if suit_mask >> c & 1]
            cost = 0.0
            hard = 0
            for k in range(1, min(limit, len(cards)) + 1):
                c = cards[k - 1]
                if k > 1 and not endgame and values[c] >= self.precious:
                    break
                cost += values[c]
                hard += not their & beat[c]
                score = cost / k - 4.0 * (k - 1) - 6.0 * hard
                if endgame:
                    score -= 6.0 * (k - 1)
                # the lowest (score, cards): sort a group only to break a tie
                if chosen is None or score < chosen[0]:
                    chosen = (score, sorted(cards[:k]))
                elif score == chosen[0]:
                    group = sorted(cards[:k])
                    if group < chosen[1]:
                        chosen = (score, group)
        assert chosen is not None
        if len(self.leads) > 4096:
            self.leads.clear()
        self.leads[key] = chosen[1]
        return chosen[1]

    # -- defending ------------------------------------------------------------------------
    def defend(self, game: FastGame, seat: int, moves: list[Move] | None) -> Move:
        """``moves``: the legal list when an S8 redirect is possible, else None."""
        values = self.values
        attacks = [a for a, c in zip(game.att, game.cov, strict=True) if c < 0]
        stage = self._stage(game)
        plan = self._plan(game, seat, attacks)
        cost: float | None = None
        if plan is not None:
            cost = 0.0
            for _, card in plan[1]:
                v = values[card]
                cost += v * (1.0 + 1.5 * stage) if v >= self.precious else v
        if moves is not None:  # S8: a pass-ticket costs nothing; a transfer if cheaper
            transfer = -1
            for kind, c, _ in moves:
                if kind == SHOW_TRUMP:
                    return SHOW_TRUMP, c, -1
                if kind == TRANSFER and (transfer < 0 or values[c] < values[transfer]):
                    transfer = c
            if transfer >= 0:
                t_cost = values[transfer] * (0.5 + stage) - 2.0
                if cost is None or t_cost <= cost:
                    return TRANSFER, transfer, -1
        if plan is None or cost is None:
            return TAKE, -1, -1
        if self._should_take(game, plan[1], stage, cost):
            return TAKE, -1, -1
        attack, card = max(plan[1], key=lambda p: (values[p[1]], p[0]))
        return COVER, card, attack

    def _plan(self, game: FastGame, seat: int, attacks: list[int]) -> Plan:
        """The cheapest cover of every attack card (:func:`cover_plan`), or None."""
        values = self.values
        if len(attacks) == 1:  # the cheapest beater (what cover_plan finds, faster)
            m = game.masks[seat] & self.beat[attacks[0]]
            plan = None
            if m:
                c = min((values[x], x) for x in _bits(m))[1]
                plan = (values[c], [(attacks[0], c)])
        elif game.counts is None:
            pkey = (tuple(attacks), game.masks[seat])
            if pkey in self.plans:
                plan = self.plans[pkey]
            else:
                plan = cover_plan(attacks, self._hand(game, seat), self.beat, values)
                if len(self.plans) > 4096:
                    self.plans.clear()
                self.plans[pkey] = plan
        else:
            plan = cover_plan(attacks, self._hand(game, seat), self.beat, values)
        return plan

    def _should_take(
        self, game: FastGame, pairs: list[tuple[int, int]], stage: float, cost: float
    ) -> bool:
        if not game.stock or stage < 0.15:
            return False  # the endgame: taking only piles cards up
        values = self.values
        if not any(values[c] >= self.precious for _, c in pairs):
            return False
        # taking costs the table's cards (low ones are not a burden early) and a turn
        n_take = len(game.att) + sum(1 for c in game.cov if c >= 0)
        take_cost = 6.0 + 3.0 * n_take + sum(values[a] for a in game.att) * 0.3
        return cost * stage > take_cost * (1.0 - stage) + 6.0

    # -- throwing in ---------------------------------------------------------------------------
    def throw(
        self, game: FastGame, seat: int, defender: int, uncovered: int, thrown: int, ranks: int
    ) -> Move:
        """The throw-in priority holder (who holds a rank on the table): the
        cheapest such card while cheap enough, else PASS."""
        mask = game.masks[seat] & ranks
        values = self.values
        c = min((values[x], x) for x in _bits(mask))[1]
        if not game.stock:
            return THROW, c, -1
        stage = self._stage(game)
        limit = 14.0 + 8.0 * (1.0 - stage) if self.chuvash else 5.0 + 6.0 * (1.0 - stage)
        if values[c] < self.precious and values[c] <= limit:
            return THROW, c, -1
        return PASS, -1, -1


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        mask ^= low
        out.append(low.bit_length() - 1)
    return out


__all__ = ["HeuristicPolicy"]
