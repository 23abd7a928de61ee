"""Showing tables in Telegram: after any write (a move, a timer, an operator, a
lobby change) the publisher loads the table once and edits the messages that
show it -- each seat's hand message (his view only), the group's table message
(the public view), the lobby messages -- through :mod:`telegram_bot.delivery.coalesce`.
It decides which messages to edit and how urgently; what they show comes from
:mod:`telegram_bot.views` (pure).

It never changes game state, and lends nothing: what it needs (the snapshot
loader, the chat state, the delivery, where hands live) is given to it.  Message
ids, selections and languages are in the chat state
(:mod:`telegram_bot.state.chat_state`).  A use case's outcome names what changed
(:mod:`telegram_bot.publishing.changes`); :meth:`Publisher.show` shows it.  Renders of one table are serialised
here and show the newest version; each is marked pending in Redis until its edits
went out (:mod:`telegram_bot.publishing.repair`), so another process redoes it if this dies.

When the group's flood limit holds a player's hand in the group back, the
delivery says so (:meth:`Publisher.held_back`, #24): once per game his hand
there tells him that in a private chat his cards update at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Coroutine, Iterable
from typing import Any

from aiogram.exceptions import TelegramAPIError
from aiogram.types import EphemeralMessageParameters, InlineKeyboardMarkup

from engine import EngineError
from tables import (
    CANCELLED,
    OPEN,
    OVER,
    PLAYING,
    LiveError,
    Loaded,
    WriteResult,
    log_failure,
    survived,
)
from telegram_bot.buttons.moves import Selection
from telegram_bot.delivery import Address, Delivery, Urgency
from telegram_bot.delivery.digest import table_version
from telegram_bot.delivery.held import HeldBack
from telegram_bot.publishing.arena_board import ArenaBoards
from telegram_bot.publishing.changes import (
    AppMenuSet,
    ArenaAnswered,
    ArenaCancelled,
    ArenaPosted,
    ArenaSetupShown,
    ArenaShown,
    ArenaWoke,
    Change,
    GameStarted,
    GroupLost,
    HandResent,
    HandShown,
    HandToPrivate,
    LeftNoted,
    LobbyPosted,
    MenuSet,
    PagesClosed,
    Redraw,
    Refresh,
    ReplayStepped,
    SettingsShown,
    TableOffered,
    TopSent,
)
from telegram_bot.publishing.hands import PressReply, hand_view, in_group
from telegram_bot.publishing.page_hands import PageHands
from telegram_bot.publishing.parts import GroupGaps, PublisherOutlets, PublisherStores
from telegram_bot.publishing.repair import RenderGuard
from telegram_bot.state.snapshot import Snapshot, group_of, hand_target, thread_in
from telegram_bot.views import texts
from telegram_bot.views.hand import hand_screen
from telegram_bot.views.i18n import (
    GROUP_COMMANDS,
    PRIVATE_COMMANDS,
    Translator,
    bot_commands,
)
from telegram_bot.views.lobby import lobby_screen, started_lobby_screen
from telegram_bot.views.miniapp import menu_button
from telegram_bot.views.replay import render_replay
from telegram_bot.views.table import (
    previous_game,
    rematch_started_screen,
    table_screen,
    watch_screen,
)

EditJob = Coroutine[Any, Any, "asyncio.Future[bool]"]  # an edit asked: what it became
log = logging.getLogger(__name__)


Sent = list[asyncio.Future[bool]]
"""The edits a render asked for, each resolved once it went out (or failed)."""

SHOWN_TABLES = 100_000
"""Tables whose last shown version this process remembers (the least recently
rendered are forgotten: a forgotten table is merely re-rendered once more)."""


class Publisher:
    def __init__(
        self,
        stores: PublisherStores,
        delivery: Delivery,
        outlets: PublisherOutlets,
        gaps: GroupGaps | None = None,
    ) -> None:
        self.snapshots = snapshots = stores.snapshots
        self.locks = locks = stores.locks
        # the hands the Mini App's open pages stand in for (#42 point 6)
        self.page_hands = PageHands(stores.pages, locks, snapshots, self.render_seat)
        self.app = outlets.app  # the Mini App the hands and the table message open (#42)
        self.ui = stores.ui
        self.delivery = delivery
        self.hands = outlets.hands
        self.lobbies = outlets.lobbies
        self.claims = stores.claims  # the refreshes of writers under way
        self.bot_username = outlets.bot_username
        self.shown: OrderedDict[str, int] = OrderedDict()
        # the seats each table waited for at its last render here (:meth:`_lost_moves`)
        self.waited: OrderedDict[str, frozenset[int]] = OrderedDict()
        self.guard = RenderGuard(stores.marks)  # pending renders marked in Redis
        self.hints = stores.hints  # the flood hint's once-per-game claims (None: never given)
        self.gaps = gaps or GroupGaps()  # while a hand is in the group (None: the delivery's)
        self.arenas = outlets.arenas  # arenas' messages (#27; None: never given)

    def _mark_shown(self, table_id: str, version: int) -> None:
        self.shown[table_id] = max(self.shown.get(table_id, 0), version)
        self.shown.move_to_end(table_id)
        while len(self.shown) > SHOWN_TABLES:
            self.shown.popitem(last=False)  # the table rendered the longest ago

    def _lost_moves(self, table_id: str, waited_for: frozenset[int] | None) -> frozenset[int]:
        """The seats the game waited for at this process's last render of the
        table and waits for no more: their keyboards offered moves the write took
        away -- typically a thrower's, whose priority a cover or another throw-in
        returned to the first attacker (RULES §0 Throw-in priority).  Shown at
        once, or he taps a throw-in for the next second or two that is no longer
        his to make (#41, a stale toast).  Only the writer's own render (it knows
        its actor) uses them: an announcement's render -- of another process's
        write, or after the writer's own refresh failed -- asks nothing at once.
        A table rendered by another process last: none (his keyboard goes as a
        watcher's, as before).  ``waited_for`` None: the game is over (the
        result goes as it did; forgotten)."""
        before = self.waited.pop(table_id, frozenset())
        if waited_for is None:
            return frozenset()
        self.waited[table_id] = waited_for
        while len(self.waited) > SHOWN_TABLES:
            self.waited.popitem(last=False)  # the table rendered the longest ago
        return before - waited_for

    # ------------------------------------------------------------------ entry points
    async def show(self, *changes: Change | None) -> None:
        """Show what a use case changed, in order (None: nothing)."""
        for change in changes:
            if change is not None:
                await self._show(change)

    async def _show(self, change: Change) -> None:
        match change:
            case Refresh():
                await self.refresh(
                    change.table_id,
                    seats=change.seats,
                    actor=change.actor,
                    wrote=change.wrote,
                    claim=change.claim,
                    written=None if change.written is None else change.written.loaded,
                    marked=change.marked,
                    from_page=change.from_page,
                )
            case Redraw() | PagesClosed():
                await self._redraw(change)
            case GameStarted():
                await self.start_game(change.table_id)
            case HandToPrivate():
                await self.hands.open_private(change.table_id, change.user)
            case HandResent():
                await self.hands.resend(change.user, table_id=change.table_id, again=change.again)
            case HandShown():
                press = PressReply(change.query_id, change.fresh_until)
                await self.hands.show_in_group(change.table_id, change.user, press)
            case MenuSet() | AppMenuSet():
                await self._menus(change)
            case LeftNoted():
                await self.hands.note_left(change)
            case LobbyPosted():
                await self.lobbies.post(change)
            case SettingsShown():
                await self.lobbies.show_settings(change)
            case TableOffered():
                await self.lobbies.offer_table(change)
            case ReplayStepped():
                text, markup = render_replay(change.step, locale=change.locale, app=self.app)
                await self.delivery.edit(Address(change.user, change.message_id), text, markup)
            case ArenaWoke():
                await self._arena_woke(change)
            case (
                ArenaShown()
                | ArenaPosted()
                | ArenaSetupShown()
                | ArenaAnswered()
                | ArenaCancelled()
                | GroupLost()
                | TopSent()
            ):
                await self._arena_boards().show(change)

    def _arena_boards(self) -> ArenaBoards:
        if self.arenas is None:
            raise RuntimeError("an arena change, but no ArenaBoards given")
        return self.arenas

    async def _arena_woke(self, woke: ArenaWoke) -> None:
        """An arena's wake (#27): the games it started shown as any started game
        (the render sweep shows one that fails: its start was marked owed), then
        its standings (:meth:`ArenaBoards.woke`)."""
        for table_id in woke.started:
            what = "arena %s: game %s not shown; left to the render sweep"
            with survived(log, what, woke.arena.id, table_id):
                await self.start_game(table_id)
        await self._arena_boards().woke(woke)

    async def refresh(
        self,
        table_id: str,
        *,
        seats: Iterable[int] | None = None,
        actor: int | None = None,
        min_version: int = 0,
        wrote: int = 0,
        claim: asyncio.Event | None = None,
        written: Loaded | None = None,
        marked: bool = False,
        from_page: bool = False,
    ) -> None:
        """Re-render the table's messages: the hand messages of ``seats`` (None:
        every human seat), the group's table message and lobby messages.  ``actor``
        (a user) gets his own update at once, the others soon.  Skipped when this
        process has already shown ``min_version`` or newer.

        ``wrote``: the version the caller's write made (``claim``: its claim,
        taken when the write was made; else taken now).  While this refresh
        runs, a re-render asking for that version (``min_version``: the write's
        own notification) waits for it instead of rendering the move a second
        time -- even when it reached the table's lock first, which under load
        made every hand's deferred update go out twice.  Should this refresh
        fail, the waiting one renders after all.

        ``written``: the table as the caller's write left it (#39: one read per
        press) -- drawn from with the chat state read now (what the write could
        not know), unless this process showed it or a newer version already
        (then the table of now is read); ``marked``: the caller marked this
        render pending before its write (#28) -- not marked again;
        ``from_page``: ``actor`` moved from his Mini App page (#42 point 6)."""
        if wrote and claim is None:
            claim = self.claims.claim(table_id, wrote)
        try:
            while True:
                if min_version and await self._covered(table_id, min_version):
                    return
                async with self.locks.of(table_id):
                    if min_version and self.shown.get(table_id, 0) >= min_version:
                        return
                    if min_version and self.claims.of(table_id, min_version):
                        continue  # its writer renders it: wait for him outside the lock
                    newer = written is not None and written.version > self.shown.get(table_id, 0)
                    load = (
                        self.snapshots.of(written)
                        if written is not None and newer
                        else self.snapshots.load(table_id)
                    )
                    snap, _ = await asyncio.gather(
                        load,
                        self._mark(table_id, max(min_version, wrote), again=not marked),
                        return_exceptions=True,
                    )
                    if isinstance(snap, LiveError):  # gone: nothing to render
                        await self.guard.drop(table_id)
                        return
                    if isinstance(snap, BaseException):
                        raise snap
                    wanted = None if seats is None else set(seats)
                    sent = await self._render(snap, wanted, actor, from_page=from_page)
                    self.guard.watch(table_id, snap.version, sent)
                    return
        finally:
            if claim is not None:
                self.claims.release(table_id, wrote, claim)

    async def _mark(self, table_id: str, version: int, *, again: bool) -> None:
        """Mark the render of ``version`` pending (#28), unless its writer did."""
        if again:
            await self.guard.start(table_id, version)

    async def _covered(self, table_id: str, min_version: int) -> bool:
        """Has ``min_version`` (or newer) been shown -- once the refreshes of the
        writes that made it are over?"""
        await self.claims.wait(table_id, min_version)
        return self.shown.get(table_id, 0) >= min_version

    async def start_game(self, table_id: str) -> None:
        """A game started (or a rematch): new hand messages for every human, a new
        table message in the group, the lobby messages say so."""
        async with self.locks.of(table_id):
            snap = await self.snapshots.load(table_id)
            t = snap.table
            if t.status not in (PLAYING, OVER) or snap.loaded.state is None:
                await self._render(snap, None, None)
                return
            if snap.ui.started == t.game_no:
                # #41: its start is shown already -- an arena's game is started by
                # the arena's wake and by its timer's start event: a second start
                # sent every hand again, the first left at the game's first move
                return
            # marked pending until every hand and the table message went out: a
            # process killed meanwhile leaves the start to a sweeper (#28)
            await self.guard.start(table_id, snap.version)
            started: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            self.guard.watch(table_id, snap.version, [started])
            try:
                await self._start_game(snap)
            except BaseException:
                started.set_result(False)
                raise
        try:
            await self.hands.send_later()
        finally:
            if not started.done():
                started.set_result(True)

    def _unstarted(self, snap: Snapshot) -> bool:
        """A game whose start was never rendered (its process died first): no
        hand was sent for it -- :meth:`repair` renders the start, not a move."""
        t, ui = snap.table, snap.ui
        if t.status != PLAYING or snap.loaded.state is None:
            return False
        if ui.started is None:  # before any start was recorded: none sent at all
            return not ui.hands and ui.table_message is None
        return ui.started != t.game_no

    async def _start_game(self, snap: Snapshot) -> None:
        """:meth:`start_game` under the table's lock."""
        t, ui, table_id = snap.table, snap.ui, snap.table.id
        await self._close_result(snap)
        await self._close_lobby_messages(snap)
        langs = await self.snapshots.langs(t, ui)
        await self.ui.update_table(table_id, new_game=True, langs=langs)

        group = group_of(t)
        where = await self.ui.many_prefs(t.humans()) if group is not None else {}

        async def send_hand(seat: int, user: int) -> None:
            lang = langs.get(user, "en")
            # the game's first message shows the deal's commitment whole (#41)
            text, markup = hand_screen(snap, seat, lang, Selection(), first=True, app=self.app)
            # #38: an arena's hands are private -- dozens of its tables in one
            # group would queue their hands behind its 20 messages a minute while
            # their turn timers run; its players started the bot to join it
            if in_group(where.get(user)) and not t.arena:
                return self.hands.queue(table_id, user)  # sent after the lock
            msg = await self.delivery.send(user, text, markup)
            if msg is not None:  # recorded at once: he may press right away
                await self.ui.update_table(table_id, hands={user: msg.message_id})

        jobs = [
            send_hand(seat, s.user)
            for seat, s in enumerate(t.seats)
            if s.user is not None and not s.left
        ]
        await asyncio.gather(*jobs)
        # an arena's game (#27) has no table message: a group's arena seats dozens
        # of tables at once, and its one message (the standings) speaks for them
        # within the group's message budget; each player's hand shows his table
        if group is not None and not t.arena:
            text, markup2 = table_screen(snap, self.bot_username, first=True, app=self.app)
            # a forum group: in the topic its lobby was opened in
            msg = await self.delivery.send(group, text, markup2, thread=t.thread)
            if msg is not None:
                await self.ui.update_table(table_id, table_message=msg.message_id)
        await asyncio.gather(*self._watchers(snap, table_version(t.id, snap.version)))
        self._mark_shown(table_id, snap.version)
        # the hands out and recorded: a repair renders moves from now on (the
        # hands in the group go out after the lock, send_later)
        await self.ui.update_table(table_id, started=t.game_no)

    async def _close_result(self, snap: Snapshot) -> None:
        """A rematch is dealt (#41): the previous game's result messages -- each
        hand in a private chat, the group's table message -- no longer show its
        offer nor *Rematch*; they say the new game is below.  Before the new
        game's messages take their place in the chat state.  Best effort: a
        record gone (expired) leaves them as they were."""
        t, ui = snap.table, snap.ui
        res = snap.loaded.result
        if t.arena or res is None or res.game != t.game_no - 1 or ui.started != res.game:
            return  # not a rematch of the game these messages showed (an arena has none)
        group = group_of(t)
        hands = {u: m for u, m in ui.hands.items() if m > 0}  # a group's went at its end
        table_message = ui.table_message if group is not None else None
        if not hands and table_message is None:
            return
        try:
            record = await self.snapshots.svc.replays.record(t.id, res.game)
            settlement = await self.snapshots.svc.ratings.settlement(t.id, res.game)
            old = previous_game(snap, record, settlement)
        except EngineError as e:
            log.info("the result of %s game %s not closed: %s", t.id, res.game, e)
            return
        shows = table_version(t.id, snap.version)  # newer than any render of it
        jobs = []
        for user, msg in hands.items():
            seat = old.table.seat_of(user)
            lang = ui.langs.get(user, "en")
            text, markup = rematch_started_screen(old, seat, lang)
            jobs.append(self._edit(Address(user, msg), text, markup, Urgency.SOON, shows))
        if group is not None and table_message is not None:
            text, markup = rematch_started_screen(old, None, ui.group_lang or "en")
            to = Address(group, table_message, thread=t.thread)
            jobs.append(self._edit(to, text, markup, Urgency.SOON, shows))
        await asyncio.gather(*jobs)

    # ------------------------------------------------------------------ rendering
    async def repair(self, table_id: str, version: int) -> None:
        """Render a table whose pending render outlived its process (a sweep):
        its start, when no process rendered it (#28), else its current state."""
        try:
            snap = await self.snapshots.load(table_id)
        except LiveError:
            await self.guard.drop(table_id)
            return
        if self._unstarted(snap):
            log.info("repairing the start of %s (game %s)", table_id, snap.table.game_no)
            await self.start_game(table_id)
            return
        await self.refresh(table_id)

    async def repair_due(self) -> list[str]:
        """One sweep: the tables whose pending render outlived its owner are
        claimed and rendered again (:mod:`telegram_bot.state.pending_renders`)."""
        return await self.guard.repair_due(self.repair)

    async def pages_due(self) -> list[str]:
        """One sweep of the Mini App's pages a dead process left open (#42
        point 6), in the same share of the shards as :meth:`repair_due`'s."""
        marks = self.guard.marks
        return await self.page_hands.due(marks.place if marks is not None else (0, 1))

    async def stop_repairs(self) -> None:
        """This process sweeps no more (its shards go to the others at once, #39)."""
        await self.guard.stop_sweeping()

    async def _render(
        self, snap: Snapshot, seats: set[int] | None, actor: int | None, *, from_page: bool = False
    ) -> Sent:
        """Ask for the edits of a render; what each became (:meth:`Delivery.settled`).
        A hand waits while its player's Mini App page is open (#42 point 6)."""
        t, ui = snap.table, snap.ui
        self._mark_shown(t.id, snap.version)
        if t.status == OPEN:
            sent = await self._lobby_messages(snap, actor)
            if snap.loaded.state is None and ui.hands:  # reset to the lobby by an operator
                sent += await self._notice_hands(snap, texts.GAME_RESET)
            return sent
        if t.status == CANCELLED:
            if snap.loaded.state is not None and t.game_no:  # why: #38
                notice = texts.STOPPED_NOTICES.get(t.stopped, texts.GAME_STOPPED)
                return await self._notice_hands(snap, notice)
            return await self._lobby_messages(snap, actor)
        if snap.loaded.state is None:
            return []
        jobs = []
        shows = table_version(t.id, snap.version)  # never shown after a newer one
        over = t.status == OVER or snap.loaded.state.over
        waited_for = frozenset(snap.loaded.state.to_act())
        lost = self._lost_moves(t.id, None if over else waited_for)
        if actor is None:  # not the writer's own render (an announcement): as before
            lost = frozenset()
        for seat, s in enumerate(t.seats):
            if s.user is None or s.left or (seats is not None and seat not in seats):
                continue
            msg = ui.hands.get(s.user)
            pressed = s.user == actor and not from_page  # a button of this very hand
            if msg is None or (not over and not pressed and self.page_hands.shows(ui, s.user)):
                continue
            to = Address(*hand_target(s.user, msg, group_of(t)))
            here = to.ephemeral  # his hand in the group
            if over and here and ui.table_message is not None:
                # the table message above tells the result, once (#29); the
                # ephemeral copy of it goes
                jobs.append(self._retire_ephemeral(t.id, s.user, to))
                continue
            sel = Selection.from_json(ui.selections.get(s.user))
            text, markup = hand_view(
                snap, seat, s.user, sel, group=here, bot_username=self.bot_username, app=self.app
            )
            # the actor sees his move at once, and so does a player whose moves
            # went away (his hand in private; in the group every write counts in
            # its minute, #24); whoever must move next soon; the others, who
            # only watch, at most every couple of seconds
            if s.user == actor or (seat in lost and not here):
                urgency = Urgency.NOW
            elif seat in waited_for or t.status == OVER:
                urgency = Urgency.SOON
            else:
                urgency = Urgency.LATER
            # #24: in the group every write counts in its minute -- a player who
            # only watches the move gets the newest state less often
            gap = self.gaps.later if here and urgency is Urgency.LATER else None
            jobs.append(self._edit(to, text, markup, urgency, shows, table_id=t.id, gap=gap))
        group = group_of(t)
        if group is not None and ui.table_message is not None:
            text, markup = table_screen(snap, self.bot_username, app=self.app)
            urgency = Urgency.SOON if t.status == OVER else Urgency.TABLE
            # #24: while a hand is in the group its own view is enough to play, and
            # every write counts in the group's minute: the table, for onlookers,
            # goes less often (the final state at once)
            gap = self.gaps.table if any(m < 0 for m in ui.hands.values()) else None
            jobs.append(
                self._edit(
                    Address(group, ui.table_message, thread=t.thread),
                    text,
                    markup,
                    urgency,
                    shows,
                    gap=gap,
                )
            )
        jobs += self._watchers(snap, shows)
        if over:  # #41: the lobby messages above no longer say the game has started
            jobs += self._started_lobby_messages(snap, shows)
        return list(await asyncio.gather(*jobs))

    def _started_lobby_messages(self, snap: Snapshot, shows: str) -> list[EditJob]:
        """The lobby messages of a started game as they read now (the start, or
        the result below once it is over)."""
        jobs = []
        for chat, msg in snap.ui.lobby_messages.items():
            text, markup = started_lobby_screen(snap, chat, self.bot_username)
            to = Address(chat, msg, thread=thread_in(snap.table, chat))
            jobs.append(self._edit(to, text, markup, Urgency.SOON, shows))
        return jobs

    async def _retire_ephemeral(
        self, table_id: str, user: int, to: Address
    ) -> asyncio.Future[bool]:
        """Delete ``user``'s ephemeral hand ``to`` once the game is over (#29):
        no more edits go to it, nor does a later render look for it."""
        await self.ui.update_table(table_id, drop_hands=[user])
        gone = await self.delivery.delete_ephemeral(to, table_id)
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        done.set_result(gone)
        return done

    def _watchers(self, snap: Snapshot, shows: str) -> list[EditJob]:
        """Spectators' private messages (issue #16): the public view, edited as
        often as the group's table message; none once the lobby forbids them."""
        t, ui = snap.table, snap.ui
        if not t.spectators or snap.loaded.state is None:
            return []
        urgency = Urgency.SOON if t.status == OVER else Urgency.TABLE
        jobs: list[EditJob] = []
        for user, msg in ui.watchers.items():
            if t.seat_of(user) is None:  # a spectator never sees a hand
                text, markup = watch_screen(snap, ui.langs.get(user, "en"), self.app)
                jobs.append(self._edit(Address(user, msg), text, markup, urgency, shows))
        return jobs

    async def _menus(self, change: MenuSet | AppMenuSet) -> None:
        """A chat's command menu in its new language (/lang), and a private
        chat's own menu button -- the Mini App's, #42, nothing while it is off
        -- in that language (at /start only when not English, the default's)."""
        if isinstance(change, MenuSet):
            only = GROUP_COMMANDS if change.chat < 0 else PRIVATE_COMMANDS
            await self.delivery.set_chat_commands(change.chat, bot_commands(change.language, only))
        elif change.language == "en":  # every chat's default speaks English
            return
        if self.app is not None and change.chat > 0:
            button = menu_button(self.app, Translator(change.language))
            await self.delivery.set_chat_menu_button(change.chat, button)

    async def _redraw(self, change: Redraw | PagesClosed) -> None:
        if isinstance(change, Redraw):
            await self.render_seat(change.snap, change.user, change.selection)
        else:
            await self.page_hands.closed(change.table_id, change.users)

    async def render_seat(self, snap: Snapshot, user: int, selection: Selection) -> None:
        """Re-render one player's hand message at once (his selection changed, or he
        pressed a stale button)."""
        seat = snap.table.seat_of(user)
        msg = snap.ui.hands.get(user)
        if seat is None or msg is None or snap.loaded.state is None:
            return
        to = Address(*hand_target(user, msg, group_of(snap.table)))
        text, markup = hand_view(
            snap,
            seat,
            user,
            selection,
            group=to.ephemeral,
            bot_username=self.bot_username,
            app=self.app,
        )
        shows = table_version(snap.table.id, snap.version)
        await self._edit(to, text, markup, Urgency.NOW, shows, table_id=snap.table.id)

    async def nudge(self, result: WriteResult) -> None:
        """#25: a player whose time ran out hears of it at once, in a new message
        (a notification, not only an edit of his hand he may not be looking at):
        after a timeout that leaves him his seat -- the AI takes it at the next --
        and when the AI took it, with *Take my seat back*.  In his private chat,
        or as an ephemeral message in the group while his hand is there
        (:meth:`_nudge_chat`).  Given by the process whose timer write it was
        (one write, one result)."""
        events = [e for e in result.events if e.kind in ("timeout", "takeover")]
        if not events:
            return
        try:
            snap = await self.snapshots.load(result.table_id)
        except LiveError:
            return
        t = snap.table
        taken = {e.seat for e in events if e.kind == "takeover" and e.text == "timeouts"}
        for e in events:
            if e.seat < 0 or e.seat >= len(t.seats) or t.seats[e.seat].user is None:
                continue
            user = t.seats[e.seat].user
            assert user is not None
            _ = Translator(snap.ui.langs.get(user, "en"))
            if e.kind == "timeout" and e.seat not in taken:
                text = "⏰ " + _(texts.TIMEOUT_WARNING)
            elif e.kind == "takeover" and e.seat in taken:
                # no button of its own: a notice is never edited again, and its
                # *Take my seat back* outlived the game (#40: 5 of 6 games) --
                # the button is on his hand, which every render keeps true
                text = "🤖 " + _(texts.TAKEN_OVER)
            else:
                continue
            chat = await self._nudge_chat(snap, user)
            hand = snap.ui.hands.get(user)
            try:
                if chat is None:  # he never started the bot: a private send draws a 403
                    log.info("no timeout nudge for %s at %s: nowhere to send", user, t.id)
                elif chat < 0:
                    params = EphemeralMessageParameters(receiver_user_id=user)
                    await self.delivery.send(chat, text, ephemeral=params, thread=t.thread)
                else:  # a reply to his hand: one tap takes him to its buttons
                    reply_to = hand if hand is not None and hand > 0 else None
                    await self.delivery.send(chat, text, reply_to=reply_to)
            except TelegramAPIError as err:  # he blocked the bot, the group is gone
                log.info("no timeout nudge for %s at %s: %s", user, t.id, err)

    async def _nudge_chat(self, snap: Snapshot, user: int) -> int | None:
        """Where his nudge goes: the group (as an ephemeral message) while his hand
        is there, his private chat while it is there; while he has none (his hand
        in the group waits for the group's flood budget, or it failed), his
        private chat only if he started the bot, else the group -- a private send
        would only draw a 403 (#38).  None: nowhere (a private game of someone
        the bot may not write to)."""
        group = group_of(snap.table)
        msg = snap.ui.hands.get(user)
        if msg is not None and (to := Address(*hand_target(user, msg, group))).ephemeral:
            return to.chat  # his hand in the group
        if msg is not None or (await self.ui.prefs(user)).started:
            return user
        return group

    async def held_back(self, held: HeldBack) -> None:
        """The delivery's word (#24 item 6): ``held.to.receiver``'s hand in the group
        has waited for the group's flood budget longer than ``flood_hint_after``
        seconds.  Once per game -- claimed in Redis, so whichever process notices
        first gives it -- his hand in the group says so for the rest of the game
        (a line and *Private chat*, :func:`hand_view`); the held-back edit itself
        carries it (joined: no write of its own to the group; if it went out
        meanwhile, his next render does)."""
        table_id = held.version.rpartition("#")[0]
        user = held.to.receiver
        if self.hints is None or not table_id or user is None:
            return
        async with self.locks.of(table_id):  # in order with the table's renders
            try:
                snap = await self.snapshots.load(table_id)
            except LiveError:
                return
            t, ui, state = snap.table, snap.ui, snap.loaded.state
            seat = t.seat_of(user)
            if seat is None or state is None or state.over or t.status != PLAYING:
                return
            if t.seats[seat].ai_controlled or t.seats[seat].left:
                return
            hand = ui.hands.get(user)
            if hand is None or Address(*hand_target(user, hand, group_of(t))) != held.to:
                return  # his hand is elsewhere now
            if ui.flood_hints.get(user) == t.game_no:
                return  # he has it
            if not await self.hints.flood(t.id, t.game_no, user):
                return  # given in this game already (here or by another process)
            await self.ui.update_table(t.id, flood_hints={user: t.game_no})
            ui.flood_hints[user] = t.game_no
            sel = Selection.from_json(ui.selections.get(user))
            text, markup = hand_view(
                snap, seat, user, sel, group=True, bot_username=self.bot_username, app=self.app
            )
            shows = table_version(t.id, snap.version)
            await self.delivery.edit(held.to, text, markup, Urgency.LATER, version=shows, join=True)

    async def _edit(
        self,
        to: Address,
        text: str,
        markup: InlineKeyboardMarkup | None,
        urgency: Urgency,
        version: str = "",
        *,
        table_id: str = "",
        gap: float | None = None,
    ) -> asyncio.Future[bool]:
        """Ask for the edit; what it became (resolved once it went out or failed).
        An ephemeral hand of ``table_id`` falls back when it fails
        (:meth:`HandPlacement.watch`); ``gap``: the edit's own (:meth:`Delivery.edit`)."""
        try:
            await self.delivery.edit(to, text, markup, urgency, version=version, gap=gap)
        except Exception as e:  # noqa: BLE001 -- a failed edit must not break the others' renders
            log_failure(log, e, "edit of %s failed; its render mark stays", to)
            failed: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            failed.set_result(False)
            done = failed
        else:
            done = self.delivery.settled(to)
        if to.ephemeral:
            self.hands.watch(done, table_id, to)
        return done

    async def _lobby_messages(self, snap: Snapshot, actor: int | None) -> Sent:
        t = snap.table
        jobs = []
        for chat, msg in snap.ui.lobby_messages.items():
            text, markup = lobby_screen(snap, chat, self.bot_username)
            urgency = Urgency.NOW if actor is not None and chat in (actor, t.chat) else Urgency.SOON
            to = Address(chat, msg, thread=thread_in(t, chat))
            jobs.append(self._edit(to, text, markup, urgency))
        return list(await asyncio.gather(*jobs))

    async def _close_lobby_messages(self, snap: Snapshot) -> None:
        # versioned as the game-over render's edits of them (#41): never the
        # result's «the game is over» after a rematch's «the game has started»
        shows = table_version(snap.table.id, snap.version)
        jobs = []
        for chat, msg in snap.ui.lobby_messages.items():
            text, markup = started_lobby_screen(snap, chat, self.bot_username)
            to = Address(chat, msg, thread=thread_in(snap.table, chat))
            jobs.append(self._edit(to, text, markup, Urgency.NOW, shows))
        await asyncio.gather(*jobs)

    async def _notice_hands(self, snap: Snapshot, notice: str) -> Sent:
        jobs = []
        for user, msg in snap.ui.hands.items():
            _ = Translator(snap.ui.langs.get(user, "en"))
            to = Address(*hand_target(user, msg, group_of(snap.table)))
            jobs.append(self._edit(to, _(notice), None, Urgency.SOON))
        group = group_of(snap.table)
        if group is not None and snap.ui.table_message is not None:
            _ = Translator(snap.ui.group_lang or "en")
            to = Address(group, snap.ui.table_message, thread=snap.table.thread)
            jobs.append(self._edit(to, _(notice), None, Urgency.SOON))
        sent = list(await asyncio.gather(*jobs))
        await self.ui.update_table(snap.table.id, drop_hands=list(snap.ui.hands))
        return sent
