"""Property tests of the rules engine: whole random games, invariants after every action.

Games are played through legal actions only, chosen at random among the seats in
``state.to_act()`` -- and now and then by a seat that is *not* in ``to_act`` but has
legal actions (a non-priority thrower's ``pass``, RULES §0 "Passing").  A throw-in is
sometimes extended to several cards at once (``apply`` accepts that).

After every action (see ``GameRun``):

* cheap invariants, every step: card conservation (hands + table + stock + discard ==
  the full deck, as multisets), the hand limit (RULES §0), the S10 throw-in cap, an even
  discard pile (a bout is beaten off only when every attack card is covered), sizes,
  ``to_act``/``out`` sanity, the events returned by ``apply``;
* expensive invariants, every ``full_every``-th step and at the end: serialization
  round-trips (``state_from_json(state_to_json(s)) == s``, identical JSON, the restored
  state and ``copy()`` play the next action identically and the copy is independent),
  every legal action of every seat passes ``check``, ``check`` accepts a single-card
  action iff ``legal_actions`` lists it, multi-card throw-ins up to the room are
  accepted and one card more is refused, random illegal actions raise
  ``IllegalAction`` and change nothing, and no ``view`` shows another seat's hidden
  cards.  Small games use ``full_every=1`` (everything at every step); long games
  (shchelkovsky with many players or 4 decks, thousands of actions) check the
  expensive invariants every k-th step only, to keep the suite's runtime within
  budget on two cores.

At the end: phase ``over``, exactly one loser or a draw, never a draw with an odd card
count (S1 remove_joker, S14), ``out`` + loser cover every seat (RULES §0 game over).

Randomness: hypothesis draws seeds, player counts and options (and, for chuvash, every
choice of the game, so a failure shrinks); plain seeded loops put their seed in every
assertion message.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from typing import Any, Protocol

import pytest
from hypothesis import HealthCheck, example, given
from hypothesis import strategies as st

from engine import (
    OVER_PHASE,
    Action,
    GameState,
    IllegalAction,
    card_name,
    new_game,
    public_view,
    state_from_json,
    state_to_json,
    view,
)
from engine.actions import COVER, KINDS, LEAD, PASS, SHOW_TRUMP, TAKE, THROW, TRANSFER
from engine.cards import JOKER, NCARDS, rank_of, suit_of
from engine.state import BOUT_PHASE, LEAD_PHASE
from engine.variants import HAND_SIZE
from tests.profiles import budget

# Every player count each game allows (C2, S2) and every shchelkovsky option (S1).
CHUVASH_PLAYERS = range(2, 7)
SHCH_PLAYERS = range(2, 11)
SHCH_DECKS = (2, 4)
THROW_CAP = 10  # S10

# Game-length bound.  A game is NOT provably finite: once the stock is empty, cards
# can move back and forth between hands forever (a defender who always takes, throwers
# who keep throwing), and random players take much more often than real ones, which
# prolongs games.  So the bound is statistical.  Measured with this file's own random
# policy (``measure_lengths`` below; 1000 games per configuration, 250 for 4 decks;
# actions per game, mean / max):
#
#   chuvash                 2p   92 /  215    3p  179 /  431    6p  170 /  396
#   shchelkovsky 2 decks    2p  328 /  559    5p  860 / 1432   10p  856 / 1365
#   shchelkovsky 4 decks    2p  733 / 1092    7p 2642 / 4132    9p 2626 / 4255
#
# (every chuvash mean <= 190, max <= 431; every 2-deck mean <= 928, max <= 1522; every
# 4-deck mean <= 2642, max <= 4255).  The bound is 60,000 actions: ~23x the mean and
# ~14x the observed maximum of the longest configuration (4 decks, 7-9 players), and
# far more for the short ones.  A game that reaches it is treated as a livelock (an
# engine that never ends a bout), not as bad luck.
MAX_ACTIONS = 60_000

ERROR_CODES = frozenset(
    (
        "game_over", "bad_seat", "player_out", "card_not_in_hand", "wrong_phase",
        "not_your_turn", "no_cards", "lead_one_card", "lead_one_suit", "hand_limit",
        "not_defender", "already_taking", "nothing_to_take", "attack_not_on_table",
        "does_not_beat", "throw_in_closed", "already_passed", "rank_not_on_table",
        "not_your_priority", "throw_in_cap", "defender_cannot_throw", "defender_cannot_pass",
        "transfer_not_allowed", "must_defend", "wrong_rank", "not_trump",
    )
)  # fmt: skip

# A card name inside ``json.dumps(view)``.  Scanning left to right also splits action
# texts such as ``C6CKS`` (cover 6C with KS) or ``SQS`` (show QS) correctly, because a
# rank character is never a suit letter.
CARD_NAME_RE = re.compile(r"10[CDHS]|[2-9JQKA][CDHS]|JK")


# --------------------------------------------------------------------------- choices
class Chooser(Protocol):
    def index(self, n: int) -> int: ...

    def chance(self, percent: int) -> bool: ...


class RandomChooser:
    """Choices from a seeded ``random.Random`` (long games: cheap, reproducible)."""

    def __init__(self, seed: object) -> None:
        self.rng = random.Random(str(seed))

    def index(self, n: int) -> int:
        return self.rng.randrange(n)

    def chance(self, percent: int) -> bool:
        return self.rng.randrange(100) < percent


class DataChooser:
    """Choices drawn by hypothesis (short games: a failure shrinks to few choices)."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def index(self, n: int) -> int:
        return self.data.draw(st.integers(0, n - 1)) if n > 1 else 0

    def chance(self, percent: int) -> bool:
        return self.data.draw(st.integers(0, 99)) < percent


# --------------------------------------------------------------------- oracle helpers
def names(cards: Any) -> list[str]:
    return [card_name(c) for c in cards]


def uncovered_count(state: GameState) -> int:
    return sum(1 for _, cover in state.table if cover < 0)


def throw_room(state: GameState, seat: int) -> int:
    """How many cards ``seat`` may throw in at once (RULES §0 hand limit, S10 cap,
    S10a: a self-throw counts the defender's hand after the cards leave it)."""
    uncovered = uncovered_count(state)
    if seat == state.defender:  # seat -1: any thrower
        room = (state.sizes[seat] - uncovered) // 2
    else:
        room = state.sizes[state.defender] - uncovered
    if state.variant.throw_cap is not None:
        room = min(room, state.variant.throw_cap - state.thrown)
    return room


def beats(state: GameState, card: int, attack: int) -> bool:
    """An independent reading of C3/C4 and S4."""
    if state.variant.name == "chuvash":
        if JOKER in (card, attack):
            return False
        sx, sy, rx, ry = suit_of(card), suit_of(attack), rank_of(card), rank_of(attack)
        return (sx == sy and rx > ry) or (sx > sy and rx >= ry)
    if attack == JOKER:
        return card == JOKER or card_name(card).startswith("2")
    if card == JOKER:
        return not card_name(attack).startswith("2")
    if suit_of(card) == suit_of(attack):
        return rank_of(card) > rank_of(attack)
    return state.trump is not None and suit_of(card) == state.trump


def next_holder(state: GameState, start: int) -> int:
    """The first seat clockwise from ``start`` (inclusive) that holds cards."""
    n = state.players
    return next((start + i) % n for i in range(n) if state.sizes[(start + i) % n])


def priority_oracle(state: GameState) -> int:
    """RULES §0 throw-in priority, read independently: throw-ins open (C10: after a
    cover; S10: after a cover or TAKE), room left (hand limit, S10 cap), then the first
    seat clockwise from the first attacker, the defender excluded, that has not passed
    and holds a card of a rank on the table (a joker is a rank of its own)."""
    if state.phase != BOUT_PHASE:
        return -1
    covered = any(c >= 0 for _, c in state.table)
    if not (covered or (state.taking and state.variant.name == "shchelkovsky")):
        return -1
    if throw_room(state, -1) <= 0:
        return -1
    ranks = {rank_of(c) for pair in state.table for c in pair if c >= 0}
    for i in range(state.players):
        s = (state.attacker + i) % state.players
        if s == state.defender or state.passed >> s & 1:
            continue
        if any(rank_of(c) in ranks for c in state.hand(s)):
            return s
    return -1


def norm(action: Action) -> Action:
    """Leads and throw-ins are sets of cards: compare them sorted."""
    if action.kind in (LEAD, THROW):
        return action._replace(cards=tuple(sorted(action.cards)))
    return action


def expected_legal(state: GameState, action: Action, legal: set[Action]) -> bool:
    """The test's oracle: ``legal_actions`` (single cards) plus multi-card throw-ins
    built from listed single throws, held as a multiset, within the room."""
    if norm(action) in legal:
        return True
    if action.kind != THROW or len(action.cards) < 2:
        return False
    seat = action.seat
    if not 0 <= seat < state.players:
        return False
    if any(Action(seat, THROW, (c,)) not in legal for c in action.cards):
        return False
    if Counter(action.cards) - Counter(state.hand(seat)):
        return False
    return len(action.cards) <= throw_room(state, seat)


def light_json(state: GameState) -> dict[str, Any]:
    return state_to_json(state, history=False)


def fingerprint(state: GameState) -> tuple[Any, ...]:
    """A cheap summary of everything an action can change."""
    return (
        state.ply,
        len(state.history),
        state.phase,
        state.attacker,
        state.defender,
        state.passer,
        tuple(state.sizes),
        tuple(state.masks),
        tuple(tuple(p) for p in state.table),
        len(state.stock),
        tuple(state.discard),
        state.passed,
        state.thrown,
        state.taking,
        state.covered_any,
        state.ticket,
        tuple(state.out),
        state.loser,
        state.draw,
    )


# ------------------------------------------------------------------------- one game
class GameRun:
    """Plays one game with a ``Chooser`` and checks the invariants as it goes."""

    def __init__(
        self,
        variant: str,
        players: int,
        seed: int,
        options: dict[str, Any] | None = None,
        *,
        chooser: Chooser,
        full_every: int = 1,
        checks: bool = True,
    ) -> None:
        self.state = new_game(variant, players, seed, options)
        self.n = players
        self.chooser = chooser
        self.full_every = full_every
        self.checks = checks
        self.deck = Counter(self.state.variant.deck(self.state.options))
        self.ctx = f"{variant} players={players} seed={seed} options={options}"
        # Per seat, the hand cards everybody knows about: cards taken from the table,
        # a shown pass-ticket (S8), the face-up trump card once drawn (S3).
        self.known: list[Counter[int]] = [Counter() for _ in range(players)]
        self.out_so_far: list[int] = []
        self.actions: list[Action] = []
        self.pending: tuple[GameState, GameState] = (self.state, self.state)

    def where(self) -> str:
        return f"{self.ctx} step={len(self.actions)} last={[f'{a.seat}:{a.text()}' for a in self.actions[-4:]]}"

    # ------------------------------------------------------------------------ play
    def play(self) -> GameState:
        state = self.state
        if self.checks:
            self.check_cheap()
        while not state.over:
            assert len(self.actions) < MAX_ACTIONS, f"no end after {MAX_ACTIONS}: {self.where()}"
            full = self.checks and len(self.actions) % self.full_every == 0
            if full:
                self.check_full()
            action = self.pick()
            self.step(action, full)
        if self.checks:
            self.check_full()
            self.check_end()
        return state

    def pick(self) -> Action:
        state, chooser = self.state, self.chooser
        seats = state.to_act()
        assert seats, f"game not over but nobody to act: {self.where()}"
        if chooser.chance(10):
            others = [s for s in range(self.n) if s not in seats and state.legal_actions(s)]
            if others:
                seats = others
        seat = seats[chooser.index(len(seats))]
        actions = state.legal_actions(seat)
        assert actions, f"seat {seat} in to_act without a legal action: {self.where()}"
        action = actions[chooser.index(len(actions))]
        if action.kind == THROW and chooser.chance(30):
            pool = self.throw_pool(seat)
            room = throw_room(state, seat)
            if room >= 2 and len(pool) >= 2:
                k = 2 + chooser.index(min(room, len(pool)) - 1)
                picked = []
                for _ in range(k):
                    picked.append(pool.pop(chooser.index(len(pool))))
                action = Action(seat, THROW, tuple(picked))
        return action

    def throw_pool(self, seat: int) -> list[int]:
        """The seat's cards (with repeats) that the listed single throw-ins allow."""
        state = self.state
        singles = {a.cards[0] for a in state.legal_actions(seat) if a.kind == THROW}
        return [c for c in state.hand(seat) if c in singles]

    def step(self, action: Action, full: bool) -> None:
        state = self.state
        stock_before = len(state.stock)
        first_attacker = state.attacker
        if self.checks:
            legal = {norm(a) for a in state.legal_actions(action.seat)}
            assert expected_legal(state, action, legal), f"{action} not legal: {self.where()}"
            state.check(action)
        if full:
            # The restored state and a copy must play the next action exactly alike,
            # and the copy must not share anything mutable with the original.
            before = light_json(state)
            history = list(state.history)
            restored, twin = self.pending
            ev_restored = restored.apply(action)
            ev_twin = twin.apply(action)
            assert light_json(state) == before, f"copy() shares state: {self.where()}"
            assert state.history == history, f"copy() shares the history: {self.where()}"
        events = state.apply(action)
        self.actions.append(action)
        if full:
            assert ev_restored == events, f"restored state plays differently: {self.where()}"
            assert ev_twin == events, f"copy plays differently: {self.where()}"
            after = light_json(state)
            assert light_json(restored) == after, f"restored state diverged: {self.where()}"
            assert restored.history == state.history, self.where()
            assert light_json(twin) == after, f"copy diverged: {self.where()}"
            assert twin.history == state.history, self.where()
        if not self.checks:
            return
        cards = action.cards if action.kind != COVER else (action.attack, action.cards[0])
        assert events, self.where()
        assert events[0] == ("action", action.seat, cards, action.kind), self.where()
        self.track_known(action, events, stock_before)
        self.check_bout_end(events, first_attacker)
        self.check_cheap()

    def check_bout_end(self, events: list[Any], first_attacker: int) -> None:
        """C13/S13 drawing order and C12/S12 next leader after a bout ends."""
        state, n = self.state, self.n
        ends = [e for e in events if e.kind == "bout_end"]
        if not ends:
            return
        assert len(ends) == 1, self.where()
        defender, taken = ends[0].seat, ends[0].detail == "taken"
        order = [(first_attacker + i) % n for i in range(n)]
        if state.variant.final_defender_draws_last:  # S13
            order.remove(defender)
            order.append(defender)
        drawn = [order.index(e.seat) for e in events if e.kind == "draw"]
        assert drawn == sorted(set(drawn)), f"draw order {drawn} (C13/S13): {self.where()}"
        if not state.over:
            # C12/S12: beaten off -> the defender leads, taken -> the seat after him
            # (seats without cards skipped, RULES §0 "who leads next").
            leader = next_holder(state, defender + 1 if taken else defender)
            assert state.attacker == leader, f"leader {state.attacker} != {leader}: {self.where()}"

    def track_known(self, action: Action, events: list[Any], stock_before: int) -> None:
        known, state = self.known, self.state
        if action.kind in (LEAD, THROW, TRANSFER, COVER):  # the cards left the hand
            known[action.seat] -= Counter(action.cards)
        elif action.kind == SHOW_TRUMP:
            c = action.cards[0]
            known[action.seat][c] = max(known[action.seat][c], 1)
        for e in events:
            if e.kind == "bout_end" and e.detail == "taken":
                known[e.seat].update(e.cards)
        if stock_before and not state.stock and state.trump_card is not None:
            draws = [e for e in events if e.kind == "draw" and e.cards]
            assert draws, f"the face-up trump card is not drawn last (S3): {self.where()}"
            assert draws[-1].cards[-1] == state.trump_card, (
                f"the face-up trump card is not drawn last (S3): {self.where()}"
            )
            known[draws[-1].seat][state.trump_card] += 1

    # ---------------------------------------------------------------- invariants
    def check_cheap(self) -> None:
        state, n = self.state, self.n
        where = self.where
        hands = [state.hand(s) for s in range(n)]
        total: Counter[int] = Counter()
        for h in hands:
            total.update(h)
        for attack, cover in state.table:
            total[attack] += 1
            if cover >= 0:
                total[cover] += 1
        total.update(state.stock)
        discard = state.discard_cards()
        total.update(discard)
        assert total == self.deck, (
            f"cards not conserved: {total - self.deck} / {self.deck - total}: {where()}"
        )
        assert [len(h) for h in hands] == state.sizes, where()
        assert len(discard) % 2 == 0, f"odd discard pile: {where()}"
        uncovered = uncovered_count(state)
        if state.phase == BOUT_PHASE:
            assert state.table, where()
            # RULES §0 hand limit.
            assert uncovered <= state.sizes[state.defender], f"hand limit broken: {where()}"
            for attack, cover in state.table:
                if cover >= 0:
                    assert beats(state, cover, attack), (
                        f"{card_name(cover)} on {card_name(attack)}: {where()}"
                    )
        else:
            assert not state.table, where()
            assert not state.thrown, where()
            assert not state.taking, where()
        if state.variant.throw_cap is not None:
            assert state.thrown <= THROW_CAP, f"S10 cap broken: thrown={state.thrown}: {where()}"
        # Out seats: they only accumulate, hold nothing, never act again.
        out = list(state.out)
        assert out[: len(self.out_so_far)] == self.out_so_far, where()
        assert len(set(out)) == len(out), where()
        self.out_so_far = out
        for s in out:
            assert not state.sizes[s], where()
            assert not state.stock, where()
            assert not state.legal_actions(s), f"seat {s} is out but may act: {where()}"
        if state.over:
            assert not state.to_act(), where()
            return
        assert state.loser is None, where()
        assert not state.draw, where()
        assert state.phase in (LEAD_PHASE, BOUT_PHASE), where()
        to_act = state.to_act()
        assert to_act, f"nobody to act: {where()}"
        for s in to_act:
            assert s not in out, where()
            assert state.legal_actions(s), where()
        if state.phase == LEAD_PHASE:
            assert state.sizes[state.attacker], f"the leader holds no cards: {where()}"
            # C7/S7: the attack goes to the next seat clockwise that holds cards.
            assert state.defender == next_holder(state, state.attacker + 1), where()
            if state.stock:  # RULES §0 drawing: everybody drew up to six
                assert min(state.sizes) >= HAND_SIZE, f"sizes {state.sizes}: {where()}"
        assert state.priority() == priority_oracle(state), f"priority: {where()}"

    def check_full(self) -> None:
        self.check_serialization()
        self.check_legality()
        self.check_illegal_samples()
        self.check_views()

    def check_serialization(self) -> None:
        state, where = self.state, self.where
        data = state_to_json(state)
        text = json.dumps(data)
        restored = state_from_json(json.loads(text))
        assert restored == state, f"round trip: {where()}"
        assert json.dumps(state_to_json(restored)) == text, f"JSON differs: {where()}"
        twin = state.copy()
        # ``==`` compares the full JSON, which is O(history): for the copy compare the
        # JSON without history and the history itself (same thing, cheaper).
        assert light_json(twin) == light_json(state), f"copy() differs: {where()}"
        assert twin.history == state.history, where()
        for s in range(self.n):
            legal = state.legal_actions(s)
            assert restored.legal_actions(s) == legal == twin.legal_actions(s), where()
        assert restored.to_act() == state.to_act() == twin.to_act(), where()
        assert restored.priority() == state.priority(), where()
        self.pending = (restored, twin)  # they play the next action in ``step``

    def check_legality(self) -> None:
        """Every listed action passes ``check``; ``check`` accepts a single-card action
        iff it is listed; multi-card throw-ins: up to the room yes, one more no."""
        state, where = self.state, self.where
        for s in range(self.n):
            for a in state.legal_actions(s):
                try:
                    state.check(a)
                except IllegalAction as e:  # pragma: no cover - reported by the assert
                    raise AssertionError(f"listed {a} refused ({e.code}): {where()}") from e
                if a.kind == COVER:
                    assert beats(state, a.cards[0], a.attack), f"{a}: {where()}"
        if state.over:
            return
        seats = list(state.to_act())
        other = self.chooser_rng().randrange(self.n)
        if other not in seats:
            seats.append(other)
        fp = fingerprint(state)
        for seat in seats:
            legal = {norm(a) for a in state.legal_actions(seat)}
            held = sorted(set(state.hand(seat)))
            attacks = sorted({a for a, c in state.table if c < 0} | {JOKER, 0})
            candidates = [Action(seat, TAKE), Action(seat, PASS)]
            for c in held:
                candidates += [
                    Action(seat, LEAD, (c,)),
                    Action(seat, THROW, (c,)),
                    Action(seat, TRANSFER, (c,)),
                    Action(seat, SHOW_TRUMP, (c,)),
                ]
                candidates += [Action(seat, COVER, (c,), a) for a in attacks]
            for a in candidates:
                ok = self.accepted(a)
                assert ok == (a in legal), (
                    f"check says {ok} for {a}, listed={a in legal}: {where()}"
                )
            # Multi-card throw-ins.
            pool = self.throw_pool(seat)
            room = throw_room(state, seat)
            if len(pool) >= 2 and room >= 2:
                cards = tuple(pool[: min(room, len(pool))])
                a = Action(seat, THROW, cards)
                assert self.accepted(a), f"{a} refused, room={room}: {where()}"
            if len(pool) > room >= 1:
                a = Action(seat, THROW, tuple(pool[: room + 1]))
                with pytest.raises(IllegalAction) as info:
                    state.apply(a)
                assert info.value.code in ("hand_limit", "throw_in_cap"), f"{a}: {where()}"
        assert fingerprint(state) == fp, where()

    def accepted(self, action: Action) -> bool:
        try:
            self.state.check(action)
        except IllegalAction as e:
            code = e.code
        else:
            return True
        assert code in ERROR_CODES, f"unknown code {code}: {self.where()}"
        return False

    def chooser_rng(self) -> random.Random:
        # Sampling for the extra checks must not consume hypothesis' choices; derive it
        # from the game and the step so that a failure replays identically.
        return random.Random(f"{self.ctx}:{len(self.actions)}")

    def check_illegal_samples(self, count: int = 12) -> None:
        """Random actions (seats, kinds, cards): those the oracle says are illegal raise
        IllegalAction from ``apply`` and change nothing; the others pass ``check``."""
        state, where = self.state, self.where
        rng = self.chooser_rng()
        fp = fingerprint(state)
        before = light_json(state)
        for _ in range(count):
            seat = rng.randrange(-1, self.n + 1)
            kind = rng.choice(KINDS)
            near = list(state.hand(seat)) if 0 <= seat < self.n else []
            near += [a for a, _ in state.table] + [rng.randrange(NCARDS) for _ in range(3)]
            if kind in (TAKE, PASS):
                action = Action(seat, kind)
            elif kind == COVER:
                action = Action(seat, COVER, (rng.choice(near),), rng.choice(near))
            elif kind in (TRANSFER, SHOW_TRUMP):
                action = Action(seat, kind, (rng.choice(near),))
            else:
                k = rng.choice((1, 1, 2, 3))
                action = Action(seat, kind, tuple(rng.choice(near) for _ in range(k)))
            legal = {norm(a) for a in state.legal_actions(seat)}
            if expected_legal(state, action, legal):
                assert self.accepted(action), f"{action} refused: {where()}"
                continue
            with pytest.raises(IllegalAction) as info:
                state.apply(action)
            assert info.value.code in ERROR_CODES, where()
            assert fingerprint(state) == fp, f"illegal {action} changed the state: {where()}"
        assert light_json(state) == before, where()

    def check_views(self) -> None:
        """No view shows a card that only another seat holds, unseen by the others."""
        state = self.state
        hidden = [Counter(state.hand(s)) - self.known[s] for s in range(self.n)]
        public = {card_name(c) for pair in state.table for c in pair if c >= 0}
        public |= set(names(state.discard_cards()))
        if state.trump_card is not None:
            public.add(card_name(state.trump_card))
        if state.ticket is not None:
            public.add(card_name(state.ticket[1]))
        for k in self.known:
            public |= set(names(+k))
        for seat in [*range(self.n), -1]:
            if seat >= 0:
                v = view(state, seat)
                own = set(names(state.hand(seat)))
                assert v["hand"] == names(state.hand(seat)), self.where()
                assert v["legal"] == [a.text() for a in state.legal_actions(seat)], self.where()
            else:
                v = public_view(state)
                own = set()
                assert "hand" not in v, self.where()
                assert "legal" not in v, self.where()
            assert v["hand_counts"] == state.sizes, self.where()
            others: set[str] = set()
            for s in range(self.n):
                if s != seat:
                    others |= set(names(+hidden[s]))
            seen = set(CARD_NAME_RE.findall(json.dumps(v)))
            leaked = (seen & others) - own - public
            assert not leaked, f"view of seat {seat} shows hidden {sorted(leaked)}: {self.where()}"

    def check_end(self) -> None:
        state, where, n = self.state, self.where, self.n
        assert state.phase == OVER_PHASE, where()
        assert state.over, where()
        assert not state.to_act(), where()
        assert state.priority() == -1, where()
        assert all(not state.legal_actions(s) for s in range(n)), where()
        assert (state.loser is not None) != state.draw, (
            f"loser={state.loser} draw={state.draw}: {where()}"
        )
        if sum(self.deck.values()) % 2:
            assert not state.draw, f"draw with an odd deck (S1, S14): {where()}"
        out = list(state.out)
        seats = set(out) | ({state.loser} if state.loser is not None else set())
        assert seats == set(range(n)), f"out={out} loser={state.loser}: {where()}"
        assert state.loser not in out, where()
        assert len(out) == n - (state.loser is not None), where()
        assert not state.stock, where()
        assert not state.table, where()
        for s in range(n):
            assert bool(state.sizes[s]) == (s == state.loser), where()
        # RULES §0: finish places follow the order in which hands emptied.
        assert [state.emptied_at[s] for s in out] == sorted(state.emptied_at[s] for s in out), (
            where()
        )
        with pytest.raises(IllegalAction) as info:
            state.apply(Action(state.loser if state.loser is not None else 0, TAKE))
        assert info.value.code == "game_over", where()


def play(
    variant: str,
    players: int,
    seed: int,
    options: dict[str, Any] | None = None,
    *,
    chooser: Chooser | None = None,
    full_every: int = 1,
    checks: bool = True,
) -> GameRun:
    run = GameRun(
        variant,
        players,
        seed,
        options,
        chooser=chooser or RandomChooser(f"policy:{seed}"),
        full_every=full_every,
        checks=checks,
    )
    run.play()
    return run


def full_every_for(players: int, decks: int) -> int:
    """Long games check the expensive invariants (serialization, views, the legality
    enumeration, illegal samples: ~25 ms per step with 10 seats) every k-th step and
    at the end; the cheap ones (conservation, hand limit, S10 cap, ...) at every step
    regardless.  k grows with the game's length (~300 actions for 2 decks and few
    players, ~3000 for 4 decks and many), so that each game gets some 30-100 full
    checks spread over all its phases."""
    if decks == 4:
        return 60 if players >= 5 else 10
    return 20 if players >= 5 else 6


# ----------------------------------------------------------------- hypothesis tests
SEEDS = st.integers(0, 2**32 - 1)


@pytest.mark.slow
@budget(
    0.25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(players=st.integers(2, 6), seed=SEEDS, data=st.data())
@example(players=2, seed=0, data=None)
@example(players=6, seed=0, data=None)
def test_chuvash_random_games(players: int, seed: int, data: st.DataObject | None) -> None:
    """Chuvash games, every choice drawn by hypothesis, every invariant at every step."""
    chooser: Chooser = DataChooser(data) if data is not None else RandomChooser(seed)
    play("chuvash", players, seed, chooser=chooser)


@pytest.mark.slow
@budget(0.2, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(2, 10),
    remove_joker=st.booleans(),
    seed=SEEDS,
    policy=SEEDS,
)
@example(players=2, remove_joker=True, seed=1, policy=1)
@example(players=10, remove_joker=False, seed=1, policy=1)
def test_shchelkovsky_two_decks(players: int, remove_joker: bool, seed: int, policy: int) -> None:
    options = {"decks": 2, "remove_joker": remove_joker}
    play(
        "shchelkovsky",
        players,
        seed,
        options,
        chooser=RandomChooser(policy),
        full_every=full_every_for(players, 2),
    )


# Few examples: a 4-deck game with 5-10 players is ~3000 actions (~2 s checked).
@pytest.mark.slow
@budget(0.06, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.integers(2, 10),
    remove_joker=st.booleans(),
    seed=SEEDS,
    policy=SEEDS,
)
@example(players=10, remove_joker=True, seed=2, policy=2)
@example(players=2, remove_joker=False, seed=2, policy=2)
def test_shchelkovsky_four_decks(players: int, remove_joker: bool, seed: int, policy: int) -> None:
    options = {"decks": 4, "remove_joker": remove_joker}
    play(
        "shchelkovsky",
        players,
        seed,
        options,
        chooser=RandomChooser(policy),
        full_every=full_every_for(players, 4),
    )


@pytest.mark.parametrize("players", SHCH_PLAYERS)
@pytest.mark.parametrize("decks", SHCH_DECKS)
def test_shchelkovsky_every_configuration(players: int, decks: int) -> None:
    """One fully checked game per configuration, so that every player count and deck
    count is covered whatever hypothesis draws (remove_joker alternates)."""
    options = {"decks": decks, "remove_joker": players % 2 == 0}
    play("shchelkovsky", players, 7, options, full_every=2 * full_every_for(players, decks))


# ------------------------------------------------------------------ many games (smoke)
def smoke_configs() -> list[tuple[str, int]]:
    return [("chuvash", p) for p in CHUVASH_PLAYERS] + [("shchelkovsky", p) for p in SHCH_PLAYERS]


@pytest.mark.parametrize(("variant", "players"), smoke_configs())
def test_many_random_games(variant: str, players: int) -> None:
    """OpenSpiel-style: many random games per variant and player count, checking only
    the end conditions -- the per-step invariants are the tests above.  200 chuvash
    games per player count; 80 shchelkovsky games (~10x longer) per player count,
    remove_joker alternating and every 5th game with 4 decks (~3x longer again)."""
    games = 200 if variant == "chuvash" else 80
    for i in range(games):
        seed = 1000 + i
        options: dict[str, Any] | None = None
        if variant == "shchelkovsky":
            options = {"decks": 4 if i % 5 == 4 else 2, "remove_joker": i % 2 == 0}
        run = play(variant, players, seed, options, checks=False)
        run.check_end()
        state = run.state
        ctx = f"{run.ctx} (policy seed policy:{seed})"
        assert len(run.actions) == state.ply, ctx
        # Conservation at the end: the loser's hand plus the discard is the whole deck.
        rest = Counter(state.discard_cards())
        if state.loser is not None:
            rest.update(state.hand(state.loser))
        assert rest == run.deck, ctx


# ------------------------------------------------------------------- the test's tests
def test_view_check_detects_a_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hidden-card check can fail: a view that adds the next seat's hand is caught."""
    run = GameRun("shchelkovsky", 3, 5, {"decks": 2}, chooser=RandomChooser(5))
    run.check_views()  # the real views pass

    real_view = view

    def leaky_view(state: GameState, seat: int) -> dict[str, Any]:
        data = real_view(state, seat)
        data["peek"] = names(state.hand((seat + 1) % state.players))
        return data

    monkeypatch.setattr(f"{__name__}.view", leaky_view)
    with pytest.raises(AssertionError, match="shows hidden"):
        run.check_views()


def test_conservation_check_detects_a_lost_card() -> None:
    run = GameRun("chuvash", 2, 5, chooser=RandomChooser(5))
    run.check_cheap()
    run.state.stock.pop()
    with pytest.raises(AssertionError, match="not conserved"):
        run.check_cheap()


# ------------------------------------------------------------ length measurement
def measure_lengths(
    variant: str, players: int, options: dict[str, Any] | None, games: int
) -> list[int]:
    """Game lengths (actions) under this file's random policy -- how ``MAX_ACTIONS``
    was chosen: ``python -c "from tests.engine.test_properties import *; ..."``."""
    return [len(play(variant, players, i, options, checks=False).actions) for i in range(games)]
