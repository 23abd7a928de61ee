"""A rule-of-thumb AI for both games (no search, no simulation).

Design, in short:

* every card has a *value* per variant (:mod:`engine.ai.values`): chuvash -- how many
  cards it beats plus how hard it is to beat (C3/C4), so aces and high spades are
  precious; shchelkovsky -- rank, trumps above all plain cards, jokers on top and 2s
  raised while jokers may still be out (a 2 beats a joker, S4);
* defending, the cheapest way to cover *all* uncovered cards at once is found as a
  minimum-cost assignment (:func:`~engine.ai.cover.cover_plan`, polynomial); the
  defender takes instead when that plan is impossible or too costly for the stage
  of the game (precious cards while the stock is big), and in chuvash he decides
  before his first cover (C8);
* shchelkovsky: a pass-ticket is shown whenever possible (S8: it costs nothing), a
  transfer is made when its card is cheaper than the cover plan;
* attacking: lead the cheapest card (a rank held several times preferred, so that
  it can be thrown in later); chuvash leads several low cards of one suit when the
  defender is unlikely to cover them all (C6); throw in cheap cards, everything once
  the stock is empty; pass otherwise.

The player sees only public facts (:class:`~engine.ai.public_info.PublicInfo`): its
own hand, card counts, the table, the discard pile, the face-up trump card and the
public events of ``state.history`` (takes and shown pass-tickets).  It never reads
another seat's hand.  It is deterministic: ties are broken by card order; the
seeded RNG only breaks exact ties between equally good leads.
"""

from __future__ import annotations

import random

from engine.actions import COVER, LEAD, PASS, SHOW_TRUMP, TAKE, THROW, TRANSFER, Action
from engine.ai.cover import cover_plan
from engine.ai.public_info import PublicInfo, deck_counts
from engine.ai.values import CHUVASH_PRECIOUS, SHCH_PRECIOUS, chuvash_values, shchelkovsky_values
from engine.cards import JOKER, NCARDS, Card, rank_of, suit_of
from engine.errors import IllegalAction
from engine.state import BOUT_PHASE, LEAD_PHASE, GameState
from engine.variants import HAND_SIZE

# the names this module offered before it was split (the tests import some of them)
__all__ = [
    "HeuristicPlayer",
    "PublicInfo",
    "chuvash_values",
    "cover_plan",
    "shchelkovsky_values",
]


class HeuristicPlayer:
    """Sensible, fast, public-information-only play for both variants."""

    name = "heuristic"

    # tuning knobs (class attributes so that experiments can subclass)
    take_enabled = True
    transfer_bias = 2.0
    use_ticket = True
    pair_bonus = 1.5

    def __init__(self, seed: int | str = 0) -> None:
        self.rng = random.Random(seed)
        self._info: dict[int, PublicInfo] = {}

    # -- entry point --------------------------------------------------------------------
    def choose(self, state: GameState, seat: int) -> Action | None:
        if state.over or seat not in state.to_act():
            return None
        legal = state.legal_actions(seat)
        if not legal:
            return None
        info = self._info.get(seat)
        if info is None:
            info = self._info[seat] = PublicInfo(seat)
        info.update(state)
        if state.phase == LEAD_PHASE:
            action = self._lead(state, seat, info, legal)
        elif seat == state.defender:
            action = self._defend(state, seat, info, legal)
        else:
            action = self._throw(state, seat, info, legal)
        return _legal_or_fallback(state, action, legal)

    # -- shared helpers -------------------------------------------------------------------
    def _values(self, state: GameState, info: PublicInfo) -> tuple[float, ...]:
        if state.variant.name == "chuvash":
            return chuvash_values()
        jokers_out = info.unseen[JOKER] > 0 or any(
            row[JOKER] for s, row in info.known.items() if s != info.seat
        )
        return shchelkovsky_values(state.trump, jokers_out)

    def _precious(self, state: GameState, card: Card, values: tuple[float, ...]) -> bool:
        limit = CHUVASH_PRECIOUS if state.variant.name == "chuvash" else SHCH_PRECIOUS
        return values[card] >= limit

    @staticmethod
    def _stage(state: GameState) -> float:
        """1.0 at the deal, 0.0 once the stock is empty."""
        full = sum(deck_counts(state)) - state.players * HAND_SIZE
        return min(1.0, len(state.stock) / full) if full > 0 else 0.0

    # -- leading ----------------------------------------------------------------------------
    def _lead(self, state: GameState, seat: int, info: PublicInfo, legal: list[Action]) -> Action:
        values = self._values(state, info)
        hand = [c for c in range(NCARDS) for _ in range(info.hand[c])]
        defender = state.defender
        limit = state.sizes[defender]
        endgame = not state.stock
        if info.stale >= 6 and self.rng.random() < 0.5:
            # Bouts keep being taken with nothing drawn or discarded: the rules allow an
            # endless game, and deterministic leads can repeat a cycle; a seeded random
            # lead breaks it.
            return legal[int(self.rng.random() * len(legal))]
        if state.variant.name == "chuvash":
            return self._lead_chuvash(state, seat, info, hand, values, limit, endgame)
        # S6: one card.  Cheapest; a rank we hold more of (to throw in later) is worth a
        # little; in the endgame a card the defender may be unable to beat is better.
        rank_count: dict[int, int] = {}
        for c in hand:
            rank_count[rank_of(c)] = rank_count.get(rank_of(c), 0) + 1
        best: tuple[float, int] | None = None
        known = info.known_of(defender)
        for c in set(hand):
            score = values[c] - self.pair_bonus * (rank_count[rank_of(c)] - 1)
            if c != JOKER and state.trump is not None and known[(c & ~3) | state.trump]:
                score += 20.0  # he showed a trump of this rank: it would come back (S8)
            if endgame:
                score -= 3.0 * info.hard_to_beat(state, c, defender)
            key = (score, c)
            if best is None or key < best:
                best = key
        assert best is not None
        return Action(seat, LEAD, (best[1],))

    def _lead_chuvash(
        self,
        state: GameState,
        seat: int,
        info: PublicInfo,
        hand: list[Card],
        values: tuple[float, ...],
        limit: int,
        endgame: bool,
    ) -> Action:
        defender = state.defender
        best: tuple[float, tuple[Card, ...]] | None = None
        for suit in range(4):
            cards = sorted((c for c in hand if suit_of(c) == suit), key=lambda c: values[c])
            if not cards:
                continue
            # candidate leads: the k cheapest cards of the suit, k = 1..limit
            for k in range(1, min(limit, len(cards)) + 1):
                group = tuple(cards[:k])
                cost = sum(values[c] for c in group)
                if k > 1 and not endgame and any(self._precious(state, c, values) for c in group):
                    break
                hard = sum(info.hard_to_beat(state, c, defender) for c in group)
                # shedding k cards is good; cheap cards are good to shed; cards he is
                # unlikely to cover may force him to take them all (C8).
                score = cost / k - 4.0 * (k - 1) - 6.0 * hard
                if endgame:
                    score -= 6.0 * (k - 1)
                key = (score, group)
                if best is None or key < best:
                    best = key
        assert best is not None
        return Action(seat, LEAD, best[1])

    # -- defending --------------------------------------------------------------------------
    def _defend(self, state: GameState, seat: int, info: PublicInfo, legal: list[Action]) -> Action:
        values = self._values(state, info)
        hand = [c for c in range(NCARDS) for _ in range(info.hand[c])]
        attacks = [a for a, c in state.table if c < 0]
        stage = self._stage(state)
        if state.taking or not attacks:
            # nothing to cover: only a self-throw could be legal (S10a); we never need it
            return legal[0]
        plan = cover_plan(attacks, hand, state.beat, values)
        cover_cost = self._cover_cost(state, plan, values, stage) if plan is not None else None
        # S8: pass-ticket (free) or transfer, before any cover.
        redirect = [a for a in legal if a.kind in (SHOW_TRUMP, TRANSFER)]
        if redirect:
            tickets = [a for a in redirect if a.kind == SHOW_TRUMP]
            # after several fruitless bouts (everybody taking, no draw) stop bouncing
            # cards and taking voluntarily, so that deterministic players cannot cycle
            if tickets and self.use_ticket and info.stale < 3:
                return tickets[0]
            transfers = sorted(
                (a for a in redirect if a.kind == TRANSFER), key=lambda a: values[a.cards[0]]
            )
            if transfers:
                t = transfers[0]
                t_cost = values[t.cards[0]] * (0.5 + stage) - self.transfer_bias
                if cover_cost is None or t_cost <= cover_cost:
                    return t
        if plan is None or cover_cost is None:
            return Action(seat, TAKE)
        if info.stale < 3 and self._should_take(state, plan[1], values, stage, cover_cost):
            return Action(seat, TAKE)
        # cover with the dearest card of the plan first (any order is fine: we replan)
        attack, card = max(plan[1], key=lambda p: (values[p[1]], p[0]))
        return Action(seat, COVER, (card,), attack)

    def _cover_cost(
        self,
        state: GameState,
        plan: tuple[float, list[tuple[Card, Card]]],
        values: tuple[float, ...],
        stage: float,
    ) -> float:
        cost = 0.0
        for _, card in plan[1]:
            v = values[card]
            if self._precious(state, card, values):
                v *= 1.0 + 1.5 * stage
            cost += v
        return cost

    def _should_take(
        self,
        state: GameState,
        pairs: list[tuple[Card, Card]],
        values: tuple[float, ...],
        stage: float,
        cover_cost: float,
    ) -> bool:
        if not self.take_enabled or not state.stock:
            return False  # endgame: taking only piles cards up
        if stage < 0.15:
            return False
        precious = [c for _, c in pairs if self._precious(state, c, values)]
        if not precious:
            return False
        # taking costs the table's cards (low ones are not a burden early) and a turn.
        n_take = sum(1 + (c >= 0) for _, c in state.table)
        take_cost = 6.0 + 3.0 * n_take + sum(values[a] for a, _ in state.table) * 0.3
        return cover_cost * stage > take_cost * (1.0 - stage) + 6.0

    # -- throwing in --------------------------------------------------------------------------
    def _throw(self, state: GameState, seat: int, info: PublicInfo, legal: list[Action]) -> Action:
        throwable = [a.cards[0] for a in legal if a.kind == THROW]
        if not throwable:
            return Action(seat, PASS)
        values = self._values(state, info)
        endgame = not state.stock
        stage = self._stage(state)
        room = state.sizes[state.defender] - state.uncovered
        cap = state.variant.throw_cap
        if cap is not None:
            room = min(room, cap - state.thrown)
        # cheap cards only (early: up to 7s / C4-weak cards; later: up to kings)
        if state.variant.name == "chuvash":
            limit = 14.0 + 8.0 * (1.0 - stage)
        else:
            limit = 5.0 + 6.0 * (1.0 - stage)
        picks: list[Card] = []
        for c in sorted(throwable, key=lambda c: (values[c], c)):
            n = info.hand[c]
            for _ in range(n):
                if len(picks) >= room:
                    break
                if endgame or (not self._precious(state, c, values) and values[c] <= limit):
                    picks.append(c)
        if not picks:
            return Action(seat, PASS)
        return Action(seat, THROW, tuple(picks))


def _legal_or_fallback(state: GameState, action: Action, legal: list[Action]) -> Action:
    """Never propose an illegal action: a listed action as is, a multi-card lead or
    throw only if ``state.check`` accepts it; else the safest listed action."""
    if action in legal:
        return action
    if action.kind in (LEAD, THROW) and state.phase in (LEAD_PHASE, BOUT_PHASE):
        try:
            state.check(action)
            return action
        except IllegalAction:
            pass
        single = Action(action.seat, action.kind, action.cards[:1])
        if single in legal:
            return single
    for kind in (PASS, TAKE):
        for a in legal:
            if a.kind == kind:
                return a
    return legal[0]
