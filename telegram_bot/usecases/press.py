"""A button of a player's hand message pressed: a card, Play/Clear/Back, a page,
an action (Take, Done/Pass, Transfer, Pass-ticket) -- mapped to a move by
:func:`telegram_bot.buttons.moves.resolve` and applied through the table service by
compare-and-set.

Exactly one move per press.  A button drawn at an older version is honoured only
while the presser's decision stamp (:func:`telegram_bot.buttons.moves.stamp`: his hand
and options in the same bout) is unchanged -- another player's throw-in, cover
or pass does not void it; otherwise (an old keyboard, a double tap, his options
changed) it is :attr:`PressStatus.STALE` and his message is redrawn.  A move
that loses a compare-and-set race is tried again on the newer state while its
stamp still matches.  A redelivered update has the same request id and is
applied once: a press whose request id the table has applied is answered as the
success it was (:attr:`PressStatus.DUPLICATE`) before any other check -- its
stamp no longer matches the hand it changed, and the game it ended is over.
Likewise a press that changed his selection: its write is compare-and-set on
the selection's revision and records the press's request id (the same script
refuses a second write of that id, #38), so a copy -- at once, in another
process, or later -- is answered silently with his selection of now
(:attr:`PressStatus.REDRAWN`), never applied again.  A *Play* press drawn for
another revision of his selection changes nothing (``REDRAWN``), nor does a
card press, unless only other cards were written since (two quick taps of one
keyboard: both apply, :func:`telegram_bot.buttons.moves.drawn_for`); a
selection write that loses its compare-and-set to another press of his is made
again on the newer selection.  The seat is always the presser's own: a button
of a message that is not his current hand message changes nothing.

Stale presses (issue 13): a press of a keyboard he already moved from (a double
tap) is :attr:`PressStatus.REPEATED`, answered silently, before anything else --
even a Pass still legal (#28: the second tap passed again on a throw-in he never
saw); otherwise a pass (or "pass for the bout") still legal for him means what
it meant and is applied whatever else changed, and so is a throw-in or a cover
the press names whole, still legal in the same bout (#29), and the defender's
Take (#41); a pass when he has no move at all now (the bout it was for ended)
is :attr:`PressStatus.MOOT`, answered silently (#41); any other stale press
gets a short notice (not a modal alert) and his fresh keyboard."""

from __future__ import annotations

import asyncio
import contextlib
import enum
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from engine import Action, EngineError, GameState, view
from engine.actions import LEAD, THROW
from engine.cards import card_names
from tables import (
    OPEN,
    PLAYING,
    LiveError,
    ServiceUnavailable,
    StaleVersion,
    TableService,
    WriteResult,
)
from tables.tables import moved_since
from telegram_bot.buttons.callbacks import GameCb
from telegram_bot.buttons.moves import (
    BOUT_STAMP_LEN,
    ERR_NOT_LEGAL,
    ERR_NOT_YOUR_TURN,
    Selection,
    drawn_for,
    resolve,
    stamp,
    written,
)
from telegram_bot.publishing.changes import Change, Redraw, Refresh
from telegram_bot.state.chat_state import ChatStateStore, SelectionSwap
from telegram_bot.state.claims import WriteClaims
from telegram_bot.state.pending_renders import RenderMarks
from telegram_bot.state.snapshot import Snapshot, Snapshots, group_of, hand_target

SELECTION_PRESSES = frozenset({"card", "play"})
"""Presses whose meaning depends on his selection: honoured only when the button
was drawn for its current revision (``GameCb.sel``).  The others name what they
do (a page, Clear, Back, an action), so a repeat of them is harmless."""

APPLY_ATTEMPTS = 10
"""A press whose move loses a compare-and-set race is tried again on the newer
state (while it still means what it meant) this many times in all: as many as
a table has seats at most (S2), so each other seat may write once meanwhile --
at an 8-seat table the throwers pass in the same second, and a Pass that lost
three races was answered as a stale button (#41)."""

SELECTION_ATTEMPTS = 8
"""A selection write that loses its compare-and-set to another press of his
(quick taps of several cards, #38) is tried again on the newer selection this
many times in all."""


FAILOVER_ATTEMPTS = 3
"""A press (a button's, a page's move) is made this many times at most when each attempt met a Redis
Cluster master failing over (:meth:`PressButton._through_failover`; the table's
master, then another key's, #40).  A timer shard's master is not waited for:
the move's hint is owed and the move applied at once
(:meth:`tables.store.Store.flush_hints`)."""


class SelectionMoved:
    """A selection write lost its compare-and-set: look again."""


class PressStatus(enum.Enum):
    APPLIED = "applied"  # the move was made (and the messages refreshed)
    DUPLICATE = "duplicate"  # the same request was applied before
    TOGGLED = "toggled"  # the selection changed (a card toggled, a page, a choice)
    REDRAWN = "redrawn"  # drawn for another revision of his selection: redrawn, no change
    REPEATED = "repeated"  # a keyboard he already moved from (a double tap): redrawn, silent
    MOOT = "moot"  # a pass when he has no move at all now: nothing to pass on, redrawn, silent
    STALE = "stale"  # drawn for an older situation: his message was redrawn
    NOT_YOUR_TURN = "not_your_turn"  # he has no move now (``reason`` says so)
    ILLEGAL = "illegal"  # ``reason``: why the press makes no move now
    REFUSED = "refused"  # ``error``: the table service refused it
    NOT_SEATED = "not_seated"
    NOT_YOUR_MESSAGE = "not_your_message"
    AI_CONTROLLED = "ai_controlled"
    GAME_OVER = "game_over"


@dataclass(frozen=True)
class ButtonPress:
    """A press as the bot received it: who pressed which button of which message."""

    user: int
    button: GameCb
    chat: int | None  # the chat of the pressed message (None: not accessible)
    message_id: int | None
    request_id: str  # the same for a redelivered update


@dataclass(frozen=True)
class PageMove:
    """A move from the Mini App's page (#42): the action it names whole (the
    engine's text form, :meth:`engine.Action.text`), drawn at ``version`` with
    the decision stamp (:func:`telegram_bot.buttons.moves.stamp`) the page was
    shown with it; ``request_id`` the same for a resend of the same tap."""

    user: int
    game: str
    version: int
    stamp: str
    action: str
    request_id: str


@dataclass(frozen=True)
class PressOutcome:
    status: PressStatus
    reason: str | None = (
        None  # ILLEGAL, NOT_YOUR_TURN: a msgid of the catalogs (e.g. not your move)
    )
    reason_args: Mapping[str, int] = field(default_factory=dict)  # to format ``reason``
    error: EngineError | None = None  # REFUSED, GAME_OVER
    version: int | None = None  # APPLIED / DUPLICATE: the version the move made
    change: Change | None = field(default=None, compare=False)
    """What changed (his message to redraw, the table to refresh): shown by the
    publisher once the press is answered -- an edit may wait for flood tokens,
    and Telegram drops an answer that comes too late."""

    @property
    def ok(self) -> bool:
        return self.status in (
            PressStatus.APPLIED,
            PressStatus.DUPLICATE,
            PressStatus.TOGGLED,
            PressStatus.REDRAWN,
            PressStatus.REPEATED,
            PressStatus.MOOT,
        )


class PressesInFlight:
    """The presses this process handles now, by (table, user) (#41: a player
    tapping on while a hard AI thinks -- every tap planned the same move, with
    its AI decisions, before its write was refused as stale; 2,300 taps queued
    as many decisions in the worker pool, and the turn timers, whose timeouts
    wait in that queue too, stalled for every table).  His presses of one
    table take turns: the next one reads the table after the one before wrote
    (a double tap is then told by the usual checks, with no AI decision); a
    tap of the very button being handled is answered at once: silent,
    :attr:`PressStatus.REPEATED` (its first press shows the outcome)."""

    def __init__(self) -> None:
        self._turns: dict[tuple[str, int], tuple[asyncio.Lock, list[tuple[str, str]]]] = {}

    def turn(self, press: ButtonPress) -> contextlib.AbstractAsyncContextManager[bool]:
        """His turn to handle ``press``; True: another tap of the same button is
        in hand (a copy of the same press -- its request id -- takes its turn:
        the service tells it a duplicate)."""
        return self.turn_of((press.button.game, press.user), press.button.pack(), press.request_id)

    @contextlib.asynccontextmanager
    async def turn_of(
        self, key: tuple[str, int], data: str, request_id: str
    ) -> AsyncIterator[bool]:
        """His turn (``key``: table, user) to handle a press of what ``data``
        names (a button, a page's move: one line for both, #42)."""
        lock, pressed = self._turns.setdefault(key, (asyncio.Lock(), []))
        if any(d == data and r != request_id for d, r in pressed):
            yield True
            return
        mine = (data, request_id)
        pressed.append(mine)
        try:
            async with lock:
                yield False
        finally:
            pressed.remove(mine)
            if not pressed and not lock.locked():
                self._turns.pop(key, None)


@dataclass(frozen=True)
class PressButton:
    """The use case, over the services it needs."""

    svc: TableService
    ui: ChatStateStore
    snapshots: Snapshots
    claims: WriteClaims
    marks: RenderMarks | None = None
    """The pending-render marks: a move's render is marked pending *before* its
    write, so a process killed between the two leaves a mark for another to
    repair (#28); the publisher's refresh marks it again and clears it."""
    attempts: int = APPLY_ATTEMPTS
    in_flight: PressesInFlight = field(default_factory=lambda: PressesInFlight())

    async def __call__(self, press: ButtonPress) -> PressOutcome:
        """One press of his at a time, in this process (:class:`PressesInFlight`)."""
        async with self.in_flight.turn(press) as again:
            if again:  # the same button while its first press is still handled
                return PressOutcome(PressStatus.REPEATED)
            return await self._through_failover(press)

    async def _through_failover(self, press: ButtonPress | PageMove) -> PressOutcome:
        """The press -- a button's, or a move from the Mini App's page --
        handled, and again when it met a Redis Cluster master that is failing
        over, once a replica serves its slots (#40: the press was answered "the
        game is unavailable" and the player pressed again after the promotion,
        a second or two later -- now it waits with its spinner, or the page's
        pending move, and is applied at the promotion).  Made again whole: a
        write it made before the fault is found by its request id (a
        duplicate, a selection already applied), as for a redelivered update.
        The wait is asynchronous (:meth:`tables.Store.failed_over`): the
        process serves every other update and page meanwhile; a wait that ends
        without a promotion raises :class:`tables.ServiceUnavailable` as
        before ("unavailable")."""
        wait = self.svc.config.redis_failover_wait
        for _round in range(FAILOVER_ATTEMPTS - 1):
            try:
                return await self._handle_either(press)
            except ServiceUnavailable:
                if not await self.svc.store.failed_over(wait):
                    raise
        return await self._handle_either(press)

    async def _handle_either(self, press: ButtonPress | PageMove) -> PressOutcome:
        if isinstance(press, PageMove):
            return await self._handle_page(press)
        return await self._handle(press)

    async def _moved_since(self, snap: Snapshot, seat: int, version: int) -> bool:
        """His seat moved after ``version`` (:meth:`tables.Loaded.moved_since`);
        from the log's stream when a flush took the writes since out of the
        table's open chunk (#41: a double tap then got a stale toast)."""
        moved = snap.loaded.moved_since(seat, version)
        if moved is None:
            events = await self.svc.admin.event_page(snap.table.id, version, 1_000)
            moved = moved_since(events, seat, version)
        return moved

    async def _handle(self, press: ButtonPress) -> PressOutcome:
        try:
            snap = await self.snapshots.load(press.button.game)
        except EngineError as e:
            return PressOutcome(PressStatus.REFUSED, error=e)
        refused = _duplicate(snap, press) or _check_presser(snap, press)
        if refused is not None:
            return refused
        seat = snap.table.seat_of(press.user)
        assert seat is not None
        moves, selections = 0, 0  # compare-and-sets lost, of the table and of his selection
        while True:
            selection = Selection.from_json(snap.ui.selections.get(press.user))
            outcome = await self._try(snap, seat, selection, press)
            if isinstance(outcome, StaleVersion):
                moves += 1
            elif isinstance(outcome, SelectionMoved):
                selections += 1
            else:
                return outcome
            # another write landed meanwhile: look again (the stamp decides)
            try:
                snap = await self.snapshots.load(press.button.game)
            except EngineError as e:
                return PressOutcome(PressStatus.REFUSED, error=e)
            duplicate = _duplicate(snap, press)  # another copy of this press won the race
            if duplicate is not None:
                return duplicate
            if not _playing(snap):
                return _over(snap)
            tries_left = moves < self.attempts and selections < SELECTION_ATTEMPTS
            if tries_left and not snap.table.seats[seat].ai_controlled:
                continue
            refresh = Refresh(snap.table.id, seats=(seat,), actor=press.user)
            if isinstance(outcome, SelectionMoved):  # show him the selection that won
                return PressOutcome(PressStatus.REDRAWN, change=refresh)
            return PressOutcome(PressStatus.STALE, change=refresh)

    async def _try(
        self, snap: Snapshot, seat: int, selection: Selection, press: ButtonPress
    ) -> PressOutcome | StaleVersion | SelectionMoved:
        """One attempt on ``snap``: an outcome, or the lost compare-and-set."""
        state = snap.loaded.state
        assert state is not None
        seat_view = view(state, seat)
        button = press.button
        if selection.has_applied(press.request_id):
            # a copy of a press that changed his selection (#38): applied once,
            # whatever revision this copy comes in at -- show him his selection now
            return PressOutcome(PressStatus.REDRAWN, change=Redraw(snap, press.user, selection))
        if button.version != snap.version and await self._moved_since(snap, seat, button.version):
            # he already moved from this keyboard (a double tap): whatever it still
            # seems to mean -- a Pass still legal on a throw-in he never saw -- is
            # not what he meant; checked before the stamp and the pass exemptions
            return PressOutcome(PressStatus.REPEATED, change=Redraw(snap, press.user, selection))
        current = drawn_for(selection, button.sel, button.press)
        if (
            button.version != snap.version
            and (not button.stamp or button.stamp != stamp(seat_view))
            and not _still_a_pass(seat_view, button)
            and not _still_meant(seat_view, selection, button, current)
        ):
            # his hand or options changed since the keyboard was drawn
            if _moot_pass(seat_view, button):  # what he said holds: nothing to tell him
                return PressOutcome(PressStatus.MOOT, change=Redraw(snap, press.user, selection))
            return PressOutcome(PressStatus.STALE, change=Redraw(snap, press.user, selection))
        if button.press.kind in SELECTION_PRESSES and not current:
            # drawn for another revision of his selection (a double tap, a Play of
            # another selection): what it meant is gone -- show him his selection now
            return PressOutcome(PressStatus.REDRAWN, change=Redraw(snap, press.user, selection))
        resolved = resolve(seat_view, selection, button.press)
        if resolved.error is not None:
            status = (
                PressStatus.NOT_YOUR_TURN
                if resolved.error == ERR_NOT_YOUR_TURN
                else PressStatus.ILLEGAL
            )
            return PressOutcome(status, reason=resolved.error, reason_args=resolved.error_args)
        if resolved.selection is not None:
            new = written(selection, resolved.selection, button.press, press.request_id)
            swap = await self.ui.swap_selection(
                snap.table.id, press.user, selection.rev, new.to_json(), press.request_id
            )
            if swap is SelectionSwap.MOVED:  # another press changed it first: look again
                return SelectionMoved()
            if swap is SelectionSwap.APPLIED:  # a copy of this press wrote it: show it
                refresh = Refresh(snap.table.id, seats=(seat,), actor=press.user)
                return PressOutcome(PressStatus.REDRAWN, change=refresh)
            return PressOutcome(PressStatus.TOGGLED, change=Redraw(snap, press.user, new))
        if button.sel != selection.token and button.press.kind in SELECTION_PRESSES:
            # a quick tap of an older keyboard that would make a move: only the
            # keyboard he saw at the time makes a move -- show him the one of now
            return PressOutcome(PressStatus.REDRAWN, change=Redraw(snap, press.user, selection))
        assert resolved.action is not None
        return await self._apply(
            snap, selection, press.user, press.request_id, resolved.action, resolved.rest_of_bout
        )

    async def _apply(
        self,
        snap: Snapshot,
        selection: Selection,
        user: int,
        request_id: str,
        action: str,
        rest_of_bout: bool = False,
    ) -> PressOutcome | StaleVersion:
        """Make the move (compare-and-set on ``snap``'s version); the outcome's
        change refreshes the table, his own message first.  Its version is
        claimed at once (before the press is answered), so the write's own
        notification re-renders nothing more."""
        table_id = snap.table.id
        if self.marks is not None:  # no write without a pending render (#28)
            await self.marks.set(table_id, snap.version + 1)
        try:
            result = await self.svc.games.apply(
                table_id,
                user,
                action,
                snap.version,
                request_id=request_id,
                rest_of_bout=rest_of_bout,
                loaded=snap.loaded,  # #39: the table read once per press
            )
        except StaleVersion as lost:
            return lost
        except EngineError as e:
            return PressOutcome(PressStatus.REFUSED, error=e)
        if result.duplicate:
            return PressOutcome(PressStatus.DUPLICATE, version=result.version)
        if selection.cards or selection.choose:
            await self.ui.update_table(table_id, selections={user: None})
        seats = None if result.game_over else tuple(result.changed_seats)
        claim = self.claims.claim(table_id, result.version)
        refresh = Refresh(
            table_id,
            seats,
            user,
            wrote=result.version,
            claim=claim,
            written=_after(snap, result, request_id),  # drawn from (#39)
            marked=self.marks is not None,
        )
        return PressOutcome(PressStatus.APPLIED, version=result.version, change=refresh)

    # ------------------------------------------------------------ the page (#42)
    async def page_move(self, move: PageMove) -> PressOutcome:
        """A move from the Mini App's page: the same line of his presses as his
        buttons (:class:`PressesInFlight`), the same request ids, the same
        compare-and-set and the same stale checks as a button press, so a
        double tap -- in the page, or in the page and on a button -- moves once:
        the second is :attr:`PressStatus.REPEATED` (his seat moved since the
        version it was drawn at) or :attr:`PressStatus.DUPLICATE` (its request
        id).  No hand message is involved; a move refused says why (``reason``
        or ``error``) and changes nothing, the page is shown the table of now.
        A move that meets a Redis Cluster master failing over waits for the
        promotion and is applied then, once, as a button's press
        (:meth:`_through_failover`, #40)."""
        data = f"page:{move.version}:{move.action}"
        async with self.in_flight.turn_of((move.game, move.user), data, move.request_id) as again:
            if again:
                return PressOutcome(PressStatus.REPEATED)
            outcome = await self._through_failover(move)  # as a button's press (#40)
        if isinstance(outcome.change, Refresh):  # #42 point 6: his page shows it
            outcome = replace(outcome, change=replace(outcome.change, from_page=True))
        return outcome

    async def _handle_page(self, move: PageMove) -> PressOutcome:
        for _attempt in range(self.attempts):
            try:
                snap = await self.snapshots.load(move.game)
            except EngineError as e:
                return PressOutcome(PressStatus.REFUSED, error=e)
            refused = _duplicate_of(snap, move.request_id) or _check_seat(snap, move.user)
            if refused is not None:
                return refused
            seat = snap.table.seat_of(move.user)
            assert seat is not None
            # after a race lost, _try_page tries again only while the move
            # means what it meant (the table is then past move.version)
            outcome = await self._try_page(snap, seat, move)
            if not isinstance(outcome, StaleVersion):
                return outcome
        return PressOutcome(PressStatus.STALE)

    async def _try_page(
        self, snap: Snapshot, seat: int, move: PageMove
    ) -> PressOutcome | StaleVersion:
        """One attempt of a page's move on ``snap``, as :meth:`_try` for a button."""
        seat_view = view(_state(snap), seat)
        if move.version != snap.version and await self._moved_since(snap, seat, move.version):
            return PressOutcome(PressStatus.REPEATED)  # he moved since: a double tap
        if (
            move.version != snap.version
            and move.stamp != stamp(seat_view)
            and not _still_named(seat_view, move)
        ):
            return PressOutcome(PressStatus.STALE)
        if not seat_view.get("legal"):
            return PressOutcome(PressStatus.NOT_YOUR_TURN, reason=ERR_NOT_YOUR_TURN)
        if not _may_name(seat_view, move.action):
            return PressOutcome(PressStatus.ILLEGAL, reason=ERR_NOT_LEGAL)
        selection = Selection.from_json(snap.ui.selections.get(move.user))
        return await self._apply(snap, selection, move.user, move.request_id, move.action)


def _after(snap: Snapshot, result: WriteResult, request_id: str) -> Snapshot | None:
    """The table as the press's write left it (:meth:`tables.Loaded.after`; None:
    the render reads it)."""
    loaded = snap.loaded.after(result, request_id)
    return None if loaded is None else Snapshot(loaded, snap.ui)


def _still_a_pass(seat_view: dict[str, Any], button: GameCb) -> bool:
    """A pass (for now or for the bout) still legal for him in the same bout (the
    stamp's bout part): it means what it meant whatever else changed on the
    table (RULES §0 Passing)."""
    p = button.press
    is_pass = p.kind == "bout_pass" or (p.kind == "action" and p.action == "P")
    same_bout = (
        bool(button.stamp) and button.stamp[:BOUT_STAMP_LEN] == stamp(seat_view)[:BOUT_STAMP_LEN]
    )
    return is_pass and same_bout and "P" in seat_view.get("legal", ())


def _moot_pass(seat_view: dict[str, Any], button: GameCb) -> bool:
    """A pass (for now or for the bout) pressed when he has no move at all now --
    the bout it was for ended meanwhile (a throw-in on a Take that nobody could
    follow ends it at once, RULES §0 End of a bout), and the next one asks
    nothing of him: he said he throws no more, and so it is.  No move to make
    and nothing out of date to tell him; his keyboard is redrawn (#41).  When
    he has a move now (he leads, defends or may throw in) it stays stale."""
    p = button.press
    is_pass = p.kind == "bout_pass" or (p.kind == "action" and p.action == "P")
    return is_pass and not seat_view.get("legal")


def _still_meant(
    seat_view: dict[str, Any], selection: Selection, button: GameCb, current: bool
) -> bool:
    """A throw-in or a cover the press names whole -- its action button, his
    *Play* of the cards he chose (the same selection), or a card with one move
    -- still legal for him in the same bout: it means what it meant, whatever
    another player threw in or covered meanwhile (RULES §0: a change of the
    table moves the priority and the throw-in room, and so his stamp; #29, a
    stale toast on one press in 14 of a 4-player Shchelkovsky game).  So does
    the defender's Take still legal in the same bout: the cards thrown in
    meanwhile are those he would take had his Take come first (RULES §0 Take,
    S11: throwers still throw in after it, within the same hand limit and
    priority; #41, the 8-player bench's stale toasts).  Leads, transfers and
    pass-tickets stay strict: what they do depends on more of the table.
    ``current``: a card or *Play* press still means what it meant on his
    selection (:func:`telegram_bot.buttons.moves.drawn_for`)."""
    if not button.stamp or button.stamp[:BOUT_STAMP_LEN] != stamp(seat_view)[:BOUT_STAMP_LEN]:
        return False
    p = button.press
    if p.kind not in ("action", "play", "card"):
        return False
    if p.kind in SELECTION_PRESSES and not current:
        return False  # drawn for another revision of his selection (:func:`drawn_for`)
    outcome = resolve(seat_view, selection, p)
    if p.kind == "card" and outcome.selection is not None:
        # a card he ticks (or whose moves he opens) for a move he makes next: no
        # move yet, shown on his keyboard of now (#29: the attackers of a
        # 4-player bout tick their throw-ins while the others throw in)
        return True
    # resolve() yields only a move legal now: a *Play* of several throw-in cards is
    # no single-card legal action, yet checked against the throws and the room
    action = outcome.action
    return action is not None and action[:1] in ("T", "C", "K")


def _playing(snap: Snapshot) -> bool:
    return snap.table.status == PLAYING and snap.loaded.state is not None


def _over(snap: Snapshot) -> PressOutcome:
    """A press on a game that ended: what he can do now depends on whether an
    arena seated the table (no rematch then; #41); a table reset to its lobby
    has no game."""
    code = "no_game" if snap.table.status == OPEN else "game_over"
    over = LiveError(code, "the game is over", arena=bool(snap.table.arena))
    return PressOutcome(PressStatus.GAME_OVER, error=over)


def _duplicate(snap: Snapshot, press: ButtonPress) -> PressOutcome | None:
    """The press was applied before (its request id is the table's): success."""
    seen = snap.loaded.applied(press.request_id)
    return None if seen is None else PressOutcome(PressStatus.DUPLICATE, version=seen)


def _check_presser(snap: Snapshot, press: ButtonPress) -> PressOutcome | None:
    """Why ``press`` may not move at all (None: it may)."""
    seat = snap.table.seat_of(press.user)
    if seat is None:
        return PressOutcome(PressStatus.NOT_SEATED)
    if not _playing(snap):  # before "your cards are in a newer message": none is (#41)
        return _over(snap)
    msg = snap.ui.hands.get(press.user)
    if (
        press.message_id is None
        or msg != press.message_id
        or press.chat != hand_target(press.user, msg, group_of(snap.table))[0]
    ):
        return PressOutcome(PressStatus.NOT_YOUR_MESSAGE)
    if snap.table.seats[seat].ai_controlled:
        return PressOutcome(PressStatus.AI_CONTROLLED)
    return None


def _state(snap: Snapshot) -> GameState:
    state = snap.loaded.state
    assert state is not None  # checked: playing
    return state


def _duplicate_of(snap: Snapshot, request_id: str) -> PressOutcome | None:
    seen = snap.loaded.applied(request_id)
    return None if seen is None else PressOutcome(PressStatus.DUPLICATE, version=seen)


def _check_seat(snap: Snapshot, user: int) -> PressOutcome | None:
    """Why ``user`` may not move at this table from the page (None: he may)."""
    seat = snap.table.seat_of(user)
    if seat is None:
        return PressOutcome(PressStatus.NOT_SEATED)
    if not _playing(snap):
        return _over(snap)
    if snap.table.seats[seat].ai_controlled:
        return PressOutcome(PressStatus.AI_CONTROLLED)
    return None


def _may_name(seat_view: dict[str, Any], action: str) -> bool:
    """``action`` (the engine's text form) is one of his legal actions, or a lead
    or throw-in of several cards each of which he may lead or throw (the engine
    checks the whole when it applies it)."""
    legal = seat_view.get("legal", ())
    if action in legal:
        return True
    try:
        parsed = Action.from_text(-1, action)
    except EngineError:
        return False
    letter = action[:1]
    if parsed.kind not in (LEAD, THROW) or len(parsed.cards) < 2:
        return False
    return all(letter + name in legal for name in card_names(parsed.cards))


def _still_named(seat_view: dict[str, Any], move: PageMove) -> bool:
    """A page's move drawn at another stamp that still means what it meant:
    as for a button (:func:`_still_meant`), a pass, a throw-in, a cover or the
    defender's Take still legal in the same bout."""
    same_bout = move.stamp[:BOUT_STAMP_LEN] == stamp(seat_view)[:BOUT_STAMP_LEN]
    return (
        same_bout and move.action[:1] in ("P", "T", "C", "K") and _may_name(seat_view, move.action)
    )
