"""An exact solver for two-player endings with every card known.

Once the stock is empty (or holds only the face-up trump card, S3) and only two
seats still hold cards, a seat that kept track of the open discard pile and of
the cards it saw taken knows the other hand exactly: the rest of the game is a
game of perfect information, and the search player (:mod:`engine.ai.search`)
solves it here instead of sampling it.

The value of a position for ``seat`` is 1 when ``seat`` is not the loser, 0 when
it is, 0.5 for a draw (RULES §0 Game over).  Both seats may be able to move at
once (the defender covering while the priority holder may throw in, RULES §0
Throw-in priority): the solver is *pessimistic* there -- the opponent chooses
whether to move first, so such a node is worth ``min(best of ours, worst of
theirs)``.  Shchelkovsky's pass-ticket (S8) can send an attack back and forth
for ever (a lead shown back, the leader taking his own card, the other leading
and being shown back in turn); a position met again on the line being played is
scored a draw -- nobody can be made the loser by a loop -- and no value that
depends on such a line is remembered.  :func:`exhaustive_value` states that definition as plain minimax
(no pruning, no table): the tests compare the solver with it on small endings of
both variants.

The search is alpha-beta over the rules engine's own moves
(:meth:`GameState.legal_actions`, :meth:`GameState.apply`), with a transposition
table of bounds and cut-offs at the sure values 0 and 1.  A node budget keeps a
decision within its time: past ``node_limit`` nodes the solver gives up
(:class:`Unsolved`) and the caller falls back to the search.  The budget counts
nodes, not seconds, so a decision stays deterministic.
"""

from __future__ import annotations

from engine.actions import COVER, LEAD, PASS, TAKE, THROW, Action
from engine.ai.values import chuvash_values, shchelkovsky_values
from engine.state import OVER_PHASE, GameState

WIN = 1.0
DRAW = 0.5
LOSS = 0.0

DEFAULT_NODE_LIMIT = 6_000
"""Nodes one decision may visit before the solver gives up: at the engine's
speed about 100 ms on one core (``bench/ai.py`` measures the decisions)."""


class Unsolved(Exception):
    """The node budget ran out before the value was known."""


def solvable(state: GameState) -> bool:
    """Two seats hold cards and nothing is left to chance: the stock is empty or
    holds only the face-up trump card (S3), which its drawer is known to get."""
    if state.phase == OVER_PHASE:
        return False
    holders = sum(1 for s in state.sizes if s)
    if holders != 2:
        return False
    stock = len(state.stock)
    return stock == 0 or (stock == 1 and state.trump_card is not None)


def terminal_value(state: GameState, seat: int) -> float:
    if state.draw:
        return DRAW
    return LOSS if state.loser == seat else WIN


class EndgameSolver:
    """Alpha-beta with a transposition table, from ``seat``'s side, over a state
    in which every hand is known (a determinization that is unique, or the real
    state in a test)."""

    __slots__ = ("line", "loops", "node_limit", "nodes", "opponent", "seat", "table", "values")

    def __init__(self, seat: int, node_limit: int = DEFAULT_NODE_LIMIT) -> None:
        self.seat = seat
        self.node_limit = node_limit
        self.nodes = 0
        self.opponent = -1
        self.table: dict[tuple[object, ...], tuple[float, float]] = {}
        self.values: tuple[float, ...] = ()
        self.line: set[tuple[object, ...]] = set()  # the positions of the line searched
        self.loops = 0  # repetitions met so far

    # -- the public entry -----------------------------------------------------------
    def solve(self, state: GameState, prefer: Action | None = None) -> tuple[float, Action | None]:
        """The value of ``state`` for the seat and a move that keeps it (``prefer``
        when it does, else the first such move in the solver's order); ``None``
        when the seat has no move now.  Raises :class:`Unsolved` past the budget."""
        root = _rootless(state)
        self._prepare(root)
        self.nodes = self.loops = 0
        self.table.clear()
        self.line = set()
        if self.seat not in root.to_act():
            return self._value(root, LOSS, WIN), None
        self.line.add(_key(root))
        moves = self._ordered(root, self.seat, root.legal_actions(self.seat))
        if prefer is not None and prefer in moves:
            moves.remove(prefer)
            moves.insert(0, prefer)
        # the value of moving now: the first move exactly, the others only if better
        best_value = -1.0
        best: Action | None = None
        for action in moves:
            child = root.copy()
            child.apply(action, checked=False)
            if best is None:
                v = self._value(child, LOSS, WIN)
            else:
                if best_value >= WIN:
                    break
                v = self._value(child, best_value, WIN)
                if v <= best_value:
                    continue
                if v < WIN:  # a fail-high bound: find the exact value
                    v = self._value(child, LOSS, WIN)
            if v > best_value:
                best_value, best = v, action
        # the opponent may move first if he can (the pessimistic rule)
        if self.opponent in root.to_act():
            theirs = self._min_over(root, LOSS, best_value + 1e-9)
            if theirs < best_value:
                return theirs, best
        return best_value, best

    def value(self, state: GameState, fresh: bool = True) -> float:
        """The value of a position whose every card is known (a sampled deal: the
        stock's order too), with a budget of ``node_limit`` more nodes; ``fresh``
        forgets the positions of an earlier deal (keys hold the stock's length,
        not its cards).  Raises :class:`Unsolved` past the budget."""
        if state.phase == OVER_PHASE:
            return terminal_value(state, self.seat)
        if fresh:
            self.table.clear()
        self._prepare(state)
        self.nodes = self.loops = 0
        self.line = set()
        return self._value(state, LOSS, WIN)

    # -- the search -----------------------------------------------------------------
    def _prepare(self, root: GameState) -> None:
        others = [s for s in range(root.players) if s != self.seat and root.sizes[s]]
        self.opponent = others[0] if others else -1
        if root.variant.name == "chuvash":
            self.values = chuvash_values()
        else:
            self.values = shchelkovsky_values(root.trump, True)

    def _value(self, st: GameState, alpha: float, beta: float) -> float:
        if st.phase == OVER_PHASE:
            return terminal_value(st, self.seat)
        self.nodes += 1
        if self.nodes > self.node_limit:
            raise Unsolved
        key = _key(st)
        if key in self.line:  # a loop (S8 pass-tickets): a draw, see the module doc
            self.loops += 1
            return DRAW
        bounds = self.table.get(key)
        if bounds is not None:
            lo, hi = bounds
            if lo >= beta or lo == hi:
                return lo
            if hi <= alpha:
                return hi
            alpha = max(alpha, lo)
            beta = min(beta, hi)
        a0, b0 = alpha, beta
        actors = st.to_act()
        mine = self.seat in actors
        theirs = self.opponent in actors
        loops = self.loops
        self.line.add(key)
        try:
            if mine and theirs:
                v = self._min_over(st, alpha, beta)
                if v > alpha:
                    v = min(v, self._max_over(st, alpha, min(beta, v)))
            elif mine:
                v = self._max_over(st, alpha, beta)
            else:
                v = self._min_over(st, alpha, beta)
        finally:
            self.line.discard(key)
        if self.loops != loops:  # the value depends on the line that led here
            return v
        lo, hi = bounds if bounds is not None else (LOSS, WIN)
        if v <= a0:
            hi = min(hi, v)
        elif v >= b0:
            lo = max(lo, v)
        else:
            lo = hi = v
        self.table[key] = (lo, hi)
        return v

    def _max_over(self, st: GameState, alpha: float, beta: float) -> float:
        best = -1.0
        for action in self._ordered(st, self.seat, st.legal_actions(self.seat)):
            child = st.copy()
            child.apply(action, checked=False)
            v = self._value(child, max(alpha, best), beta)
            if v > best:
                best = v
                if best >= beta or best >= WIN:
                    break
        return best

    def _min_over(self, st: GameState, alpha: float, beta: float) -> float:
        worst = 2.0
        seat = self.opponent
        for action in self._ordered(st, seat, st.legal_actions(seat)):
            child = st.copy()
            child.apply(action, checked=False)
            v = self._value(child, alpha, min(beta, worst))
            if v < worst:
                worst = v
                if worst <= alpha or worst <= LOSS:
                    break
        return worst

    def _ordered(self, st: GameState, seat: int, actions: list[Action]) -> list[Action]:
        """Cheap cards first (they keep the dear ones), TAKE and PASS after the card
        moves: a good first move makes the cut-offs come early."""
        values = self.values

        def cost(a: Action) -> tuple[int, float]:
            if a.kind == TAKE:
                return (2, 0.0)
            if a.kind == PASS:
                return (1, 0.0)
            if a.kind == LEAD:  # longer leads of cheap cards first (C6)
                return (0, sum(values[c] for c in a.cards) / len(a.cards) - len(a.cards))
            if a.kind in (COVER, THROW):
                return (0, values[a.cards[0]])
            return (0, -1.0)  # S8: a transfer or a shown trump

        return sorted(actions, key=cost)


def _rootless(state: GameState) -> GameState:
    """A copy without the history: the rules never read it, and copies of the
    search's nodes then stay small."""
    history = state.history
    state.history = []
    try:
        return state.copy()
    finally:
        state.history = history


def _key(st: GameState) -> tuple[object, ...]:
    """What the rest of the game depends on (the finishing order and the history
    do not change who loses)."""
    if st.options.decks == 1:
        hands: object = tuple(st.masks)
    else:
        hands = tuple(bytes(row) for row in st.counts)
    return (
        hands,
        st.phase,
        st.attacker,
        st.defender,
        st.passer,
        tuple(a * 64 + c for a, c in st.table),
        st.taking,
        st.covered_any,
        st.passed,
        st.thrown,
        st.ticket,
        len(st.stock),
    )


def exhaustive_value(
    state: GameState,
    seat: int,
    memo: dict[object, float] | None = None,
    line: set[object] | None = None,
) -> float:
    """The value the solver computes, by definition: plain minimax over every legal
    move of every seat to act (no pruning, no bounds), pessimistic where both seats
    may move.  Positions met again are remembered under the state's whole identity
    (every field but the history, the ply count and the finishing order), not the
    solver's key; a position met again on the line is a draw, and a value that
    depends on such a line is not remembered (as in the solver).  For tests on
    small endings only."""
    value, _looped = _exhaustive(state, seat, {} if memo is None else memo, line or set())
    return value


def _exhaustive(
    state: GameState, seat: int, memo: dict[object, float], line: set[object]
) -> tuple[float, bool]:
    if state.phase == OVER_PHASE:
        return terminal_value(state, seat), False
    whole = state._identity()  # ends: ticket, out, emptied_at, loser, draw, ply, history
    ident = _frozen(whole[:-6] + whole[-4:-2])
    if ident in line:
        return DRAW, True
    known = memo.get(ident)
    if known is not None:
        return known, False
    ours: list[float] = []
    theirs: list[float] = []
    looped = False
    line.add(ident)
    for s in state.to_act():
        for action in state.legal_actions(s):
            child = state.copy()
            child.apply(action, checked=False)
            v, loop = _exhaustive(child, seat, memo, line)
            looped = looped or loop
            (ours if s == seat else theirs).append(v)
    line.discard(ident)
    if ours and theirs:
        value = min(max(ours), min(theirs))
    else:
        value = max(ours) if ours else min(theirs)
    if not looped:
        memo[ident] = value
    return value, looped


def _frozen(value: object) -> object:
    if isinstance(value, list | tuple):
        return tuple(_frozen(v) for v in value)
    return value


__all__ = [
    "DEFAULT_NODE_LIMIT",
    "EndgameSolver",
    "Unsolved",
    "exhaustive_value",
    "solvable",
    "terminal_value",
]
