"""A rule-of-thumb AI for both games (no search, no simulation).

Design, in short:

* every card has a *value* per variant (:func:`card_values`): chuvash -- how many
  cards it beats plus how hard it is to beat (C3/C4), so aces and high spades are
  precious; shchelkovsky -- rank, trumps above all plain cards, jokers on top and 2s
  raised while jokers may still be out (a 2 beats a joker, S4);
* defending, the cheapest way to cover *all* uncovered cards at once is found by a
  small assignment search (:func:`cover_plan`); the defender takes instead when that
  plan is impossible or too costly for the stage of the game (precious cards while
  the stock is big), and in chuvash he decides before his first cover (C8);
* shchelkovsky: a pass-ticket is shown whenever possible (S8: it costs nothing), a
  transfer is made when its card is cheaper than the cover plan;
* attacking: lead the cheapest card (a rank held several times preferred, so that
  it can be thrown in later); chuvash leads several low cards of one suit when the
  defender is unlikely to cover them all (C6); throw in cheap cards, everything once
  the stock is empty; pass otherwise.

The player sees only public facts (:class:`PublicInfo`): its own hand, card counts,
the table, the discard pile, the face-up trump card and the public events of
``state.history`` (takes and shown pass-tickets).  It never reads another seat's
hand.  It is deterministic: ties are broken by card order; the seeded RNG only
breaks exact ties between equally good leads.
"""

from __future__ import annotations

import random
from functools import cache

from engine.actions import COVER, LEAD, PASS, SHOW_TRUMP, TAKE, THROW, TRANSFER, Action
from engine.cards import JOKER, NCARDS, Card, iter_bits, rank_of, suit_of
from engine.errors import IllegalAction
from engine.state import BOUT_PHASE, LEAD_PHASE, Event, GameState
from engine.variants import HAND_SIZE, beaters

# ---------------------------------------------------------------------------- values


@cache
def chuvash_values() -> tuple[float, ...]:
    """C4 value: cards it beats (defence) + half the cards that cannot beat it (attack)."""
    beat = beaters("chuvash", None)
    deck = [c for c in range(NCARDS - 1) if rank_of(c) >= 4]
    values = [0.0] * NCARDS
    for c in deck:
        beats = sum(1 for y in deck if beat[y] >> c & 1)
        beaten_by = sum(1 for x in deck if beat[c] >> x & 1)
        values[c] = beats + 0.5 * (35 - beaten_by)
    return tuple(values)


@cache
def shchelkovsky_values(trump: int | None, jokers_out: bool) -> tuple[float, ...]:
    """S4 value: plain cards by rank (0..12), trumps 14..26, jokers 32; a 2 is worth
    a middling card while a joker may still come at us (only a 2 or a joker beats a
    joker)."""
    values = [0.0] * NCARDS
    for c in range(NCARDS - 1):
        r = rank_of(c)
        v = float(r)
        if r == 0 and jokers_out:
            v = 7.0
        if trump is not None and suit_of(c) == trump:
            v += 14.0
        values[c] = v
    values[JOKER] = 32.0
    return tuple(values)


# chuvash: A♣ (8 + 16.5) upwards and 10♠ (.. + ..) upwards count as precious.
_CHUVASH_PRECIOUS = 24.0
_SHCH_PRECIOUS = 14.0  # any trump, any joker


# ------------------------------------------------------------------- public facts


class PublicInfo:
    """What ``seat`` may know now -- and nothing more.

    Sources: its own hand, every seat's card count (``sizes``), the table, the discard
    pile (every card in it was seen on the table), the face-up trump card, and the
    public events of ``state.history``: a seat that took a bout holds those cards
    until it plays them; a shown pass-ticket trump (S8) stays in its shower's hand.
    Other seats' draws are *not* read (their cards are private).
    """

    __slots__ = ("hand", "history_ref", "known", "pos", "seat", "stale", "unseen")

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.hand: list[int] = []  # count vector of the seat's own cards
        self.known: dict[int, list[int]] = {}  # seat -> count vector of cards known held
        self.unseen: list[int] = []  # cards whose place is unknown to us
        self.pos = 0  # history events consumed
        self.stale = 0  # bouts taken in a row with no draw and no beaten-off bout
        self.history_ref: list[Event] | None = None

    def update(self, state: GameState) -> None:
        if self.history_ref is not state.history or self.pos > len(state.history):
            self.history_ref = state.history
            self.pos = 0
            self.known = {}
            self.stale = 0
        hist = state.history
        known = self.known
        for i in range(self.pos, len(hist)):
            ev = hist[i]
            if ev.kind == "action":
                s = ev.seat
                if s == self.seat:
                    continue
                if ev.detail == SHOW_TRUMP:
                    row = known.setdefault(s, [0] * NCARDS)
                    if not row[ev.cards[0]]:
                        row[ev.cards[0]] = 1
                    continue
                row_opt = known.get(s)
                if row_opt is None:
                    continue
                played = ev.cards[1:] if ev.detail == COVER else ev.cards
                for c in played:
                    if row_opt[c]:
                        row_opt[c] -= 1
            elif ev.kind == "bout_end":
                if ev.detail != "taken":
                    self.stale = 0
                    continue
                self.stale += 1
                if ev.seat != self.seat:
                    row = known.setdefault(ev.seat, [0] * NCARDS)
                    for c in ev.cards:
                        row[c] += 1
            elif ev.kind == "draw" and ev.cards:  # who drew is public, not what
                self.stale = 0
        self.pos = len(hist)
        # own hand: the seat's own count vector (never another seat's)
        self.hand = state.counts[self.seat][:]
        total = _deck_counts(state)
        unseen = [t - d - h for t, d, h in zip(total, state.discard, self.hand, strict=True)]
        for attack, cover in state.table:
            unseen[attack] -= 1
            if cover >= 0:
                unseen[cover] -= 1
        for s, row in known.items():
            if s == self.seat:
                continue
            for c in range(NCARDS):
                if row[c]:
                    unseen[c] -= row[c]
        self.unseen = [max(0, u) for u in unseen]

    def known_of(self, seat: int) -> list[int]:
        row = self.known.get(seat)
        return row if row is not None else [0] * NCARDS


def _deck_counts(state: GameState) -> list[int]:
    key = (state.variant.name, state.options.decks, state.options.remove_joker)
    cached = _DECKS.get(key)
    if cached is None:
        cached = [0] * NCARDS
        for c in state.variant.deck(state.options):
            cached[c] += 1
        _DECKS[key] = cached
    return cached


_DECKS: dict[tuple[str, int, bool], list[int]] = {}


# ---------------------------------------------------------------- cover planning


def cover_plan(
    attacks: list[Card], hand: list[Card], beat: tuple[int, ...], values: tuple[float, ...]
) -> tuple[float, list[tuple[Card, Card]]] | None:
    """The cheapest way to cover every card of ``attacks`` with distinct cards of
    ``hand`` (a multiset, lowest value first): ``(total value, [(attack, card)])``,
    or ``None`` if some card cannot be covered.  A small exact assignment search:
    per attack card only its ``len(attacks)`` cheapest beaters can be in an optimal
    plan (any other could be swapped for an unused cheaper one)."""
    k = len(attacks)
    if k == 0:
        return 0.0, []
    if k > len(hand):
        return None
    order = sorted(range(len(hand)), key=lambda i: (values[hand[i]], hand[i]))
    options: list[list[int]] = []
    for a in attacks:
        bm = beat[a]
        opts = [i for i in order if bm >> hand[i] & 1][:k]
        if not opts:
            return None
        options.append(opts)
    idx = sorted(range(k), key=lambda j: len(options[j]))
    best_cost = float("inf")
    best: list[int] = []
    used = [False] * len(hand)
    chosen = [0] * k

    def dfs(d: int, cost: float) -> None:
        nonlocal best_cost, best
        if cost >= best_cost:
            return
        if d == k:
            best_cost = cost
            best = chosen[:]
            return
        j = idx[d]
        for i in options[j]:
            if not used[i]:
                used[i] = True
                chosen[j] = i
                dfs(d + 1, cost + values[hand[i]])
                used[i] = False

    dfs(0, 0.0)
    if not best:
        return None
    return best_cost, [(attacks[j], hand[best[j]]) for j in range(k)]


# ------------------------------------------------------------------------ player


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
        limit = _CHUVASH_PRECIOUS if state.variant.name == "chuvash" else _SHCH_PRECIOUS
        return values[card] >= limit

    @staticmethod
    def _stage(state: GameState) -> float:
        """1.0 at the deal, 0.0 once the stock is empty."""
        full = sum(_deck_counts(state)) - state.players * HAND_SIZE
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
                score -= 3.0 * self._hard_to_beat(state, info, c, defender)
            key = (score, c)
            if best is None or key < best:
                best = key
        assert best is not None
        return Action(seat, LEAD, (best[1],))

    def _hard_to_beat(self, state: GameState, info: PublicInfo, card: Card, target: int) -> float:
        """0..1: how unlikely ``target`` is to beat ``card``, from public facts only
        (the cards known in his hand, else the unseen pool scaled by his hand size)."""
        beat = state.beat[card]
        known = info.known_of(target)
        if any(known[c] for c in iter_bits(beat)):
            return 0.0
        pool = sum(info.unseen)
        if pool <= 0:
            return 1.0
        n_beat = sum(info.unseen[c] for c in iter_bits(beat))
        size = state.sizes[target] - sum(known)
        if size <= 0:
            return 1.0
        # chance that none of his unknown cards beats it (hypergeometric, approximated)
        p_none = max(0.0, 1.0 - n_beat / pool) ** size
        return p_none

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
                hard = sum(self._hard_to_beat(state, info, c, defender) for c in group)
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
