"""The games part: games at a table: start and rematch (C5/S5), a player's move through
compare-and-set, the AI chain, taking a seat back.

Every write runs the *AI chain* before it is saved: while a seat the game waits
for is AI-controlled, that AI moves (``engine.ai.make_player``, seeded with the
table's seed, the ply and the seat, so a replay is deterministic).  So a human
move, the AI replies it provokes and the resulting deadline are saved together,
in one compare-and-set.

The AI moves come from the service's :class:`~tables.deciders.Decider`:
inline, or in the bot the search AI (the *hard* level) in a process pool, awaited
so the event loop serves other tables meanwhile.  The table may change while it
thinks; the compare-and-set at the loaded version keeps such a move unwritten
(``Tables.retry`` plans again; ``apply`` raises :class:`StaleVersion`).
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial

from engine import BOUT_PHASE, Action, Event, GameState, new_game, public_view, view
from engine.actions import LEAD, PASS
from engine.ai import SLOW_KINDS
from tables.deciders import FALLBACK_KIND, Decider, InlineDecider
from tables.fairplay import eligible, late_view_deadline
from tables.model import (
    OPEN,
    OVER,
    PLAYING,
    LiveConfig,
    LiveError,
    RematchOffer,
    Seat,
    StaleVersion,
    Table,
    WriteResult,
    rated_timer,
    require_owner,
)
from tables.records import GameResult, SeatView
from tables.tables import Loaded, Plan, Tables, check_request_id

LogEntry = tuple[str, int, str]
INLINE = InlineDecider()


def auto_pass(table: Table, state: GameState) -> int | None:
    """The seat that passes by itself now: PASS is all it may do until the
    table changes for a reason everyone sees, no room left
    (``GameState.forced_pass_in_sight``; RULES §0 Passing: he counts as passed,
    so nobody waits for him) -- a seat with no card of the table's ranks is not
    shown as passed: that would tell his hidden cards, and priority skips him
    anyway (review "leaks") --, or its player chose to pass for the rest of
    the bout and PASS is legal for it (RULES §0 Throw-in priority: a change of
    the table clears passes, so he passes again).  ``None``: nobody."""
    if state.phase != BOUT_PHASE:
        return None
    for seat in range(state.players):
        if table.seats[seat].bout_pass and Action(seat, PASS) in state.legal_actions(seat):
            return seat
        if state.forced_pass_in_sight(seat):
            return seat
    return None


def end_bout_passes(table: Table, reported: list[Event]) -> Table:
    """ "Pass for the rest of this bout" ends with the bout (a ``bout_end`` event)."""
    if not any(s.bout_pass for s in table.seats) or all(e.kind != "bout_end" for e in reported):
        return table
    return replace(table, seats=tuple(replace(s, bout_pass=False) for s in table.seats))


async def run_ai(
    table: Table, state: GameState, limit: int, decider: Decider | None = None
) -> tuple[list[LogEntry], list[Event], Table]:
    """Let seats move by themselves until the game waits only for humans: first
    every pass a seat makes by itself (:func:`auto_pass`), then AI-controlled
    seats, one move at a time.  Returns the log, the engine's events and the
    table (its "pass for the bout" choices cleared when a bout ended).

    The AI moves come from ``decider`` (inline by default; the bot's runs the
    search AI in a process pool).  Once no human plays any more (all left, out
    of the game or played by the AI), a slow kind plays as the heuristic: nobody
    waits for its strength, and a game of search AIs alone would hold the write
    for minutes."""
    decide = (decider or INLINE).decide
    log: list[LogEntry] = []
    reported: list[Event] = []
    for _ in range(limit):
        if state.over:
            break
        seat = auto_pass(table, state)
        if seat is not None:
            action = Action(seat, PASS)
            log.append(("autopass", seat, action.text()))
        else:
            seats = [s for s in state.to_act() if table.seats[s].ai_controlled]
            if not seats:
                break
            seat = seats[0]
            kind = table.seats[seat].ai or "random"
            if kind in SLOW_KINDS and not humans_playing(table, state):
                kind = FALLBACK_KIND
            chosen = await decide(kind, f"{table.seed}:{state.ply}:{seat}", state, seat)
            if chosen is None:  # pragma: no cover - a seat in to_act() always has a move
                break
            action = chosen
            log.append(("ai", seat, action.text()))
        events = state.apply(action)
        reported += events
        table = end_bout_passes(table, events)
    return log, reported, table


def humans_playing(table: Table, state: GameState) -> bool:
    """Some human still plays his own seat in this game."""
    out = set(state.out)
    return any(
        s.human and not s.left and not s.ai_controlled and i not in out
        for i, s in enumerate(table.seats)
    )


def timeout_move(state: GameState, seat: int) -> Action:
    """PRODUCT's timeout move: the defender takes, the leader plays his lowest
    legal lead (non-trumps before trumps, jokers last; one card), a thrower passes."""
    legal = state.legal_actions(seat)
    for kind in ("take", "pass"):
        for a in legal:
            if a.kind == kind:
                return a
    leads = [a for a in legal if a.kind == LEAD and len(a.cards) == 1]
    if leads:
        trump = state.trump

        def low(a: Action) -> tuple[int, int]:
            c = a.cards[0]
            return (int(c == 52) * 2 + int(trump is not None and c != 52 and c % 4 == trump), c)

        return min(leads, key=low)
    return legal[0]


def finish_places(state: GameState) -> tuple[int, ...]:
    """Each seat's place in the finished game ``state`` (1 = out first): the
    order in which hands emptied (RULES §0), the loser last.  In a draw the
    players who went out in the last bout -- those still holding cards when it
    began -- share the best of their places (#38): nobody beat the other, and
    the ratings rank them equal (docs/RATINGS.md)."""
    n = state.players
    places = {s: i + 1 for i, s in enumerate(state.out)}
    if state.loser is not None:
        places[state.loser] = n
    if state.draw:
        # the bout that ended the game: its ``out`` events follow its ``bout_end``
        # (appended by the move that ended it, so never trimmed away before this)
        last: list[int] = []
        for e in reversed(state.history):
            if e.kind == "bout_end":
                break
            if e.kind == "out":
                last.append(e.seat)
        if last:
            shared = min(places[s] for s in last)
            places.update(dict.fromkeys(last, shared))
    return tuple(places.get(s, n) for s in range(n))


def forfeit_places(state: GameState, seat: int) -> tuple[int, ...]:
    """Each seat's place in the game ``state`` that ``seat`` forfeits before its
    end (#38: he removed the bot from the group mid-game): the players already
    out keep their places (the order their hands emptied), the others still in
    share the next one -- the cards cannot say more about them -- and he is
    last.  (A seat whose human walked away ranks last all the same,
    :func:`tables.rating_rules.ranks`.)"""
    n = state.players
    places = {s: i + 1 for i, s in enumerate(state.out)}
    places[seat] = n
    shared = len(state.out) + 1
    return tuple(places.get(s, shared) for s in range(n))


def walked_away(seat: Seat, ai: str, *, left: bool, operator: bool, excuse: bool) -> Seat:
    """``seat`` as the AI takes it (``ai``): by his own doing unless
    ``operator`` (an operator's act, or his block of the bot -- #25:
    reliability, cooldowns; told by the caller, not by a reason's text);
    ``excuse``: an operator's act -- his rating does not move if the AI plays
    it to the end (#38), unless the AI had taken it for his own doing already;
    his own act (a /leave while an operator's AI plays) ends the excuse.  The
    one marking of a walk-away: a leave, a timeout's takeover, a forfeit."""
    taken = seat.taken or (seat.user is not None and not operator)
    excused = (seat.excused and operator) or (excuse and seat.user is not None and not seat.taken)
    return replace(seat, ai=ai, left=seat.left or left, taken=taken, excused=excused)


def rematch_allowed(t: Table, user: int, game: int | None) -> None:
    """The refusals of a *Rematch* press (:meth:`Games.rematch`), in this order."""
    if t.arena:  # #38: first, and its own action: "once the game is over" misled
        raise LiveError(
            "not_allowed",
            "an arena's game has no rematch: the arena seats you again",
            action="arena_rematch",
            arena=t.arena,
        )
    if game is not None and game != t.game_no:  # #38: an earlier game's button
        raise LiveError(
            "not_allowed",
            f"the rematch of game {game} has started already",
            action="rematch_stale",
            game=t.game_no,
        )
    if t.status != OVER:
        raise LiveError(
            "not_allowed", "a rematch is possible once the game is over", action="rematch"
        )
    if t.stopped:  # #38: forfeited as the bot left its group: nowhere to play it
        raise LiveError(
            "not_allowed", "the bot is no longer in this table's group", action="rematch"
        )
    if t.player_seat(user) is None:
        raise LiveError(
            "not_seated", "only a player of the last game can ask for a rematch", action="rematch"
        )


def rematch_seating(t: Table, players: list[int]) -> Table:
    """The finished table as its rematch starts (#38): the seats of ``players``
    are theirs again (one who had left is back), every other human's seat is an
    AI seat of the lobby's level -- a player who did not say yes is dealt into
    nothing, and the game is casual (:attr:`Table.rated_now`).  The owner is
    the first of them if the old one is not."""
    ais = sum(1 for s in t.seats if s.user is None)
    seats = []
    for s in t.seats:
        if s.user is None:
            seats.append(s)
        elif s.user in players:
            seats.append(replace(s, left=False, ai=None))
        else:
            ais += 1
            seats.append(Seat(None, f"AI {ais}", t.ai_kind))
    creator = t.creator if t.creator in players else players[0]
    return replace(t, seats=tuple(seats), creator=creator, rematch=None)


class Claims:
    """The user pointers one rematch write claims for its table (one active
    table per user, :meth:`Tables.claim_user`): undone if the write fails --
    unless a rival write seated him meanwhile -- and settled once it is over."""

    def __init__(self, tables: Tables, table_id: str) -> None:
        self.tables = tables
        self.table_id = table_id
        self.moved: set[int] = set()  # pointers moved to this table
        self.taken: set[int] = set()

    async def take(self, user: int) -> None:
        self.taken.add(user)
        if await self.tables.claim_user(user, self.table_id):
            self.moved.add(user)

    async def undo(self) -> None:
        for u in self.moved:
            if await self.tables.where(u) is None:
                await self.tables.release_user(u, self.table_id)
        await self.done()

    async def done(self) -> None:
        await self.tables.settle_users(self.table_id, *self.taken)


class Games:
    """Start, rematch, moves, taking a seat back, AI takeovers."""

    def __init__(self, tables: Tables, config: LiveConfig, decider: Decider | None = None) -> None:
        self.tables = tables
        self.config = config
        self.decider: Decider = decider or INLINE
        """Computes the AI moves (:mod:`tables.deciders`)."""
        self.new_seed: Callable[[], int] = lambda: secrets.randbits(62)
        """The shuffle seed of each new game (tests replace it)."""

    def _finish(
        self, table: Table, state: GameState, plan: Plan, forfeit: int | None = None
    ) -> None:
        """Game over (RULES §0): store the result, remember the loser for the
        rematch.  ``forfeit``: the seat that forfeits the game before its end
        (#38, :meth:`forfeit_plan`): the loser, placed by :func:`forfeit_places`."""
        loser = state.loser if forfeit is None else forfeit
        draw = state.draw and forfeit is None
        now = self.tables.now_ms()
        places = finish_places(state) if forfeit is None else forfeit_places(state, forfeit)
        plan.result = GameResult(
            table=table.id,
            game=table.game_no,
            variant=table.variant,
            chat=table.chat,
            places=places,
            loser=loser,
            draw=draw,
            seats=tuple((s.user, s.name) for s in table.seats),
            at=now,
            rated=table.rated,  # the lobby's choice; an AI seat makes it casual (#25)
            away=tuple(i for i, s in enumerate(table.seats) if s.away),
            taken=tuple(i for i, s in enumerate(table.seats) if s.taken),
            excused=tuple(i for i, s in enumerate(table.seats) if s.excused and s.away),
            fresh=table.fresh,  # #38: as read at the start
            capped=table.capped,
            narrow=table.narrow,
        )
        plan.table = replace(table, status=OVER, previous_loser=loser, updated=now)
        plan.events.append(("over", -1 if loser is None else loser, "draw" if draw else "loser"))

    async def after_moves(self, plan: Plan) -> None:
        """Passes seats make by themselves and the AI chain; "pass for the rest of
        the bout" cleared once the bout is over; then game over if it is."""
        assert plan.state is not None
        table = end_bout_passes(plan.table, plan.engine_events)  # the move ended the bout
        log, reported, plan.table = await run_ai(
            table, plan.state, self.config.max_ai_moves, self.decider
        )
        plan.events += log
        plan.engine_events += reported
        if plan.state.over:
            self._finish(plan.table, plan.state, plan)

    async def rated_seats(self, table: Table, *, rematch: bool = False) -> Table:
        """The table as a game starts on it (#25): each human's rating label read
        anew; a rated game with a player in a cooldown from rated games is
        refused (``cooldown``, naming him and when it ends) -- a rematch goes on
        as a casual game instead, so the others are not held up."""
        humans = [s.user for s in table.seats if s.user is not None and not s.left]
        ratings = self.tables.ratings
        labels = await ratings.labels(humans, table.variant)
        seats = tuple(
            replace(s, rating=labels.get(s.user, s.rating)) if s.user is not None else s
            for s in table.seats
        )
        table = replace(table, seats=seats)
        now = self.tables.now_ms()
        # #38: who is new and which pairs are past the farming guard or short
        # of other opponents (the diversity guard), read
        # inside the start's compare-and-set (a lost race reads them again):
        # the table says from the first move for whom the game counts
        table = await eligible(self.tables.ratings, table, now)
        if not table.rated_now:
            return table
        # #25, #38: the one check, inside the start's compare-and-set plan
        names = {s.user: s.name for s in table.seats if s.user is not None}
        refused = await self.tables.fairplay.refusal(humans, at=table.id, names=names)
        if refused is None:
            return table
        if rematch:
            return replace(table, rated=False)
        raise refused

    async def start_plan(
        self, table: Table, previous_loser: int | None, kind: str, *, rematch: bool = False
    ) -> Plan:
        table = await self.rated_seats(table, rematch=rematch)
        # a rated game always has a turn timer (#38): a lobby stored without one
        # before that rule gets it here, inside the start's compare-and-set
        table = replace(table, timer=rated_timer(table.rated_now, table.timer))
        n = len(table.seats)
        seed = self.new_seed()
        state = new_game(table.variant, n, seed, table.options, previous_loser)
        seats = tuple(
            replace(
                s,
                timeouts=0,
                bout_pass=False,
                taken=False,
                excused=False,
                ai=s.ai if (s.user is None or s.left) else None,
            )
            for s in table.seats
        )
        game_no = table.game_no + 1
        t = replace(
            table,
            status=PLAYING,
            seats=seats,
            game_no=game_no,
            seed=seed,
            previous_loser=previous_loser,
            updated=self.tables.now_ms(),
            rematch=None,
        )
        if t.rated and any(s.away for s in t.seats) and all(s.human for s in t.seats):
            # #38: a seat away from the start (a player who left, played by the
            # AI) makes the game casual -- never a rated game he loses unasked.
            # (An AI seat leaves the lobby's choice: its result says "ai_seat".)
            t = replace(t, rated=False)
        plan = Plan(t, state, events=[(kind, -1, str(game_no))])
        await self.after_moves(plan)
        return plan

    async def start(self, table_id: str, user: int, request_id: str = "") -> WriteResult:
        """Start the first game of an open lobby (its owner; at least two seats).
        The same ``request_id`` again: ``duplicate=True``, nothing more happens."""

        async def make(loaded: Loaded) -> Plan:
            t = loaded.table
            if t.status != OPEN:
                raise LiveError("not_open", "the game has already started or was cancelled")
            require_owner(t, user, "start")
            if len(t.seats) < 2:
                raise LiveError("too_few_players", "at least two seats are needed to start")
            return await self.start_plan(t, None, "start")

        return await self.tables.retry(table_id, make, request_id)

    # ------------------------------------------------------------------ rematch
    async def rematch(
        self, table_id: str, user: int, request_id: str = "", *, game: int | None = None
    ) -> WriteResult:
        """``user``, a player of the finished game (even one who left it), says
        yes to the next game of the match (#38: a ready check).  The first yes
        offers a rematch that stands ``rematch_offer`` seconds (the table's
        :attr:`~tables.model.Table.rematch`, whose deadline is the table's timer
        hint).  The next game starts -- same seats, «под проигравшего» (C5, S5):
        the seat before the previous loser leads -- as soon as every present
        player of the last game (:meth:`~tables.model.Table.present`: not left,
        not played by the AI at its end) said yes, else when the offer ends
        (:meth:`rematch_due`), with those who did.  It seats ONLY those: the
        seat of anyone else is an AI seat of the lobby's level from then on,
        so that game is casual (:attr:`~tables.model.Table.rated_now`), and
        nothing of it -- stats, reliability, rating, offence -- is his.  A yes
        whose player sits at another table by then lapses.

        Returns the write: the game started (``status`` playing), or the offer
        as it stands now (``rematch``; his second yes writes nothing).  Refused:
        ``not_allowed`` -- an arena's table (``arena_rematch``: the arena seats
        its players again), no game over (``rematch``), ``game`` given and not
        the table's last (``rematch_stale``: a *Rematch* of an earlier game, its
        rematch started already); ``not_seated`` (``rematch``) for anyone who
        did not play the last game; ``seated_elsewhere`` while he sits at
        another table.  Every rule and the deadline are checked in the plan, on
        the table as written over.  The same ``request_id`` again:
        ``duplicate=True``."""
        check_request_id(request_id)
        loaded = await self.tables.load(table_id)
        seen = loaded.applied(request_id)
        if seen is not None:
            return WriteResult(table_id, seen, loaded.table, duplicate=True)
        rematch_allowed(loaded.table, user, game)
        claims = Claims(self.tables, table_id)
        try:
            await claims.take(user)  # his own seated_elsewhere (or busy) is his refusal
            result = await self.tables.retry(
                table_id, partial(self._agree_plan, user, game, claims), request_id
            )
        except BaseException:
            await claims.undo()
            raise
        await claims.done()
        return result

    async def _agree_plan(
        self, user: int, game: int | None, claims: Claims, loaded: Loaded
    ) -> Plan | None:
        t = loaded.table
        rematch_allowed(t, user, game)
        now = self.tables.now_ms()
        offer = t.rematch
        agreed = list(offer.agreed) if offer is not None else []
        if user not in agreed:
            agreed.append(user)
        until = offer.until if offer is not None else now + int(self.config.rematch_offer * 1000)
        if now >= until or set(t.present()) <= set(agreed):
            return await self._rematch_start(loaded, agreed, claims)
        if offer is not None and user in offer.agreed:
            return None  # his yes stands: nothing to write
        seat = t.player_seat(user)
        t = replace(t, rematch=RematchOffer(until, tuple(agreed)), updated=now)
        return Plan(t, loaded.state, events=[("rematch", -1 if seat is None else seat, "")])

    async def rematch_due(
        self,
        table_id: str,
        *,
        before_write: Callable[[str, int], Awaitable[object]] | None = None,
    ) -> WriteResult:
        """The rematch offered on ``table_id`` ended (#38; the timers call it at
        its deadline): the next game starts with the players who said yes and
        sit at no other table (:meth:`rematch`), or -- none left -- the offer
        lapses.  Checked in the plan: no offer, or one still standing, writes
        nothing (the write's ``events`` are empty)."""
        claims = Claims(self.tables, table_id)

        async def make(loaded: Loaded) -> Plan | None:
            t, offer = loaded.table, loaded.table.rematch
            if t.status != OVER or offer is None or offer.until > self.tables.now_ms():
                return None
            return await self._rematch_start(loaded, list(offer.agreed), claims)

        try:
            result = await self.tables.retry(table_id, make, before_write=before_write)
        except BaseException:
            await claims.undo()
            raise
        await claims.done()
        return result

    async def _rematch_start(self, loaded: Loaded, agreed: list[int], claims: Claims) -> Plan:
        """The next game on the finished table, seating only the players in
        ``agreed`` who are free: each is claimed for it (one active table per
        user); one who sits at -- or is joining -- another table now is left
        out.  Nobody left: the offer lapses."""
        t = loaded.table
        seated: list[int] = []
        for u in agreed:
            try:
                await claims.take(u)
            except LiveError as e:
                if e.code not in ("seated_elsewhere", "busy"):
                    raise
                continue  # he sits elsewhere now: his yes lapsed
            seated.append(u)
        if not seated:
            t = replace(t, rematch=None, updated=self.tables.now_ms())
            return Plan(t, loaded.state, events=[("rematch", -1, "lapsed")])
        return await self.start_plan(
            rematch_seating(t, seated), t.previous_loser, "start", rematch=True
        )

    async def apply(
        self,
        table_id: str,
        user: int,
        action: Action | str,
        expected_version: int,
        request_id: str = "",
        *,
        rest_of_bout: bool = False,
        loaded: Loaded | None = None,
    ) -> WriteResult:
        """``user``'s move (an :class:`engine.Action` or its text form, e.g. ``"C6CKS"``)
        made against ``expected_version``; ``rest_of_bout`` with a PASS: he passes
        for the rest of this bout (his seat passes by itself whenever PASS is
        legal for it again, until the bout ends; RULES §0 Passing).  Raises :class:`StaleVersion` (the table
        moved on), :class:`engine.IllegalAction` (with the engine's code), or
        :class:`LiveError`; nothing changes then.  The same ``request_id`` applied
        again returns ``duplicate=True`` and the version the first one produced.
        ``loaded``: the table as the caller read it to decide on the move (#39:
        one read per press) -- read here otherwise; the write's compare-and-set
        on ``expected_version`` refuses it if it is not the table of now, and
        the same script refuses a request id it applied before."""
        check_request_id(request_id)
        if loaded is None or loaded.table.id != table_id:
            loaded = await self.tables.load(table_id)
        seen = loaded.applied(request_id)  # before any other check: a duplicate is no error
        if seen is not None:
            return WriteResult(table_id, seen, loaded.table, duplicate=True)
        t = loaded.table
        state = loaded.state
        if t.status != PLAYING or state is None:
            code = "game_over" if t.status == OVER else "no_game"
            raise LiveError(code, "no game is in progress at this table")
        if loaded.version != expected_version:
            raise StaleVersion(expected_version, loaded.version)
        seat = t.seat_of(user)
        if seat is None:
            raise LiveError("not_seated", "you do not play at this table")
        if t.seats[seat].ai_controlled:
            raise LiveError(
                "ai_controlled", "the AI plays your seat now: take your seat back first"
            )
        act = Action.from_text(seat, action) if isinstance(action, str) else action
        if act.seat != seat:
            raise LiveError("bad_seat", f"you play seat {seat}, not seat {act.seat}")
        if rest_of_bout and act.kind != PASS:
            raise LiveError("not_allowed", "only a pass can be made for the rest of the bout")
        before = state  # the caller's table stays as he read it (``loaded``)
        state = state.copy()
        reported = state.apply(act)  # IllegalAction: nothing changed
        if t.seats[seat].timeouts or rest_of_bout:
            t = t.with_seat(seat, replace(t.seats[seat], timeouts=0, bout_pass=rest_of_bout))
        plan = Plan(t, state, events=[("act", seat, act.text())], engine_events=reported)
        await self.after_moves(plan)  # a write on a table changed meanwhile: StaleVersion
        return await self.tables.write(
            loaded, plan, expected=expected_version, request_id=request_id, before=before
        )

    async def take_seat_back(self, table_id: str, user: int, request_id: str = "") -> WriteResult:
        """A human whose seat the AI plays (after timeouts, an admin, or his own
        ``/leave``) plays it again while the game lasts.  A seat he left is his
        again only if he sits at no other table now: his claim on this table is
        taken inside the write's plan (``seated_elsewhere`` otherwise), as a join
        does."""
        claimed = False

        async def make(loaded: Loaded) -> Plan:
            nonlocal claimed
            t = loaded.table
            seat = next((i for i, s in enumerate(t.seats) if s.user == user), None)
            if t.status != PLAYING or seat is None:
                # the button outlived his game (#41): it ended, or goes on again
                # as a rematch without him -- say that, not "you do not play here"
                code = "no_game" if t.status == OPEN else "game_over"
                raise LiveError(code, "your game at this table is over", arena=bool(t.arena))
            if not t.seats[seat].ai_controlled:
                raise LiveError("not_allowed", "you already play your seat", action="take_back")
            if t.seats[seat].left:  # issue 13: /leave offers the way back
                claimed = await self.tables.claim_user(user, table_id) or claimed
            s = t.seats[seat]
            # he plays it himself again: a later walking away is his own, not
            # excused by an earlier operator's act; and the AI's help after a
            # block of the bot counts against his reliability as any (review3)
            back = replace(
                s, ai=None, timeouts=0, left=False, excused=False, taken=s.taken or not s.excused
            )
            t = t.with_seat(seat, back)
            return Plan(t, loaded.state, events=[("back", seat, "")])

        try:
            result = await self.tables.retry(table_id, make, request_id)
        except BaseException:
            if claimed and await self.tables.where(user) is None:
                await self.tables.release_user(user, table_id)
            else:
                await self.tables.settle_users(table_id, user)
            raise
        await self.tables.settle_users(table_id, user)
        return result

    async def view_late(self, table_id: str, user: int) -> WriteResult | None:
        """``user``'s cards could not be shown to him in time (the bot's delivery
        trouble): his turn starts again, once a turn
        (:func:`tables.fairplay.late_view_deadline`).  The write is announced on
        the notify channel, so every process shows the new deadline.  None:
        nothing moved (not his turn, moved once already, the table moved on)."""

        def make(loaded: Loaded) -> Plan | None:
            t = loaded.table
            seat = t.seat_of(user)
            if seat is None:
                return None
            now = self.tables.now_ms()
            moved = late_view_deadline(t, loaded.state, loaded.deadline, seat, now)
            if moved is None or loaded.deadline is None:
                return None
            t = t.with_seat(seat, replace(t.seats[seat], late=moved))
            plan = Plan(t, loaded.state, notify="extend", deadline=moved)
            plan.events.append(("extend", seat, str(moved - loaded.deadline)))
            return plan

        result = await self.tables.retry(table_id, make)
        return result if result.events else None

    async def takeover_plan(
        self,
        loaded: Loaded,
        seat: int,
        reason: str,
        *,
        left: bool = False,
        kind: str = "",
        operator: bool = False,
        excuse: bool = False,
    ) -> Plan:
        """Hand ``seat`` to the AI (``reason``: timeouts, left, ``admin:<who>``)
        and let it move; ``operator``: not the player's walking away (an
        operator's act, or his block of the bot); ``excuse``: an operator's act
        -- his rating does not move if the AI plays the seat to the end (#38),
        unless the AI had taken it for his own doing already."""
        t = loaded.table
        # an operator's takeover is not his walking away: told by the caller,
        # not by the reason's text -- the admin part's reason is
        # "admin:<who>", which "!= 'admin'" took for his (#38)
        seat_now = walked_away(
            t.seats[seat], kind or self.config.ai_kind, left=left, operator=operator, excuse=excuse
        )
        t = t.with_seat(seat, seat_now)
        events: list[LogEntry] = [("left", seat, "")] if left else []
        events.append(("takeover", seat, reason))
        plan = Plan(t, loaded.state, events=events)
        if loaded.state is not None and t.status == PLAYING:
            await self.after_moves(plan)
        return plan

    def forfeit_plan(self, loaded: Loaded, seat: int, reason: str) -> Plan:
        """The game in progress ends now, forfeited by ``seat`` (#38: its player
        removed the bot from the group, ``reason``): his seat marked as a
        leave marks it (:func:`walked_away` -- he ranks last and the
        settlement charges the offence, :func:`tables.fairplay.offenders`),
        the result written by this same compare-and-set (:meth:`_finish`), the
        AI making no move in his stead.  The finished table says why
        (``stopped``): the group is lost, so it offers no rematch."""
        t = loaded.table
        state = loaded.state
        if state is None or t.status != PLAYING:
            raise LiveError("not_playing", "no game in progress to forfeit")
        ai = t.seats[seat].ai or self.config.ai_kind
        t = t.with_seat(
            seat, walked_away(t.seats[seat], ai, left=True, operator=False, excuse=False)
        )
        plan = Plan(t, state, events=[("left", seat, ""), ("takeover", seat, f"bot:{reason}")])
        self._finish(t, state, plan, forfeit=seat)
        plan.table = replace(plan.table, stopped=reason)
        plan.notify = "over"
        return plan

    async def seat_view(self, table_id: str, user: int) -> SeatView:
        """``engine.view`` of the user's seat (the public view if he has none) and
        the version, for rendering his hand message."""
        loaded = await self.tables.load(table_id)
        if loaded.state is None:
            raise LiveError("no_game", "no game has started at this table")
        seat = loaded.table.seat_of(user)
        data = view(loaded.state, seat) if seat is not None else public_view(loaded.state)
        return SeatView(data, loaded.version)
