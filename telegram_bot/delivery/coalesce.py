"""Coalesced message delivery on top of :mod:`telegram_bot.delivery.outgoing`.

``Delivery(bot)`` sends at once and edits by :class:`Urgency`: NOW at once
(the acting player's own message); SOON within ``soon_delay`` (the players the
game waits for); LATER and TABLE like SOON, at most every ``later_delay`` /
``table_delay`` per message since its last edit by ANY process (watchers; the
group's table message).  A due LATER or TABLE edit first waits for the
limiter's headroom -- those who act keep a reserve of tokens -- coalescing
meanwhile, for ``max_hold`` s at most.  A due edit takes its token first
(behind the urgent calls), then the message's lock and its newest content
(:class:`telegram_bot.delivery.edits.MessageEdits`): a queued update never
keeps a NOW edit waiting on the lock, and content never goes out after newer.

Pending edits live in this process (:meth:`Delivery.aclose` flushes);
:meth:`Delivery.settled` tells when an edit went out, so a render's mark
(:mod:`telegram_bot.state.pending_renders`) is cleared only then.  What the
delivery learns goes up as data (#39): a result, or an event on
:attr:`Delivery.events` -- never a call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import replace
from typing import Any

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.methods import SendMessage
from aiogram.types import (
    BotCommand,
    BotCommandScopeChat,
    EphemeralMessageParameters,
    InlineKeyboardMarkup,
    MenuButtonWebApp,
    Message,
)

from engine.clock import Clock
from tables import log_failure
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.digest import gone_version, is_older
from telegram_bot.delivery.edits import EphemeralGone, MessageEdits, edit_method
from telegram_bot.delivery.events import Events
from telegram_bot.delivery.flood.fallback import FallbackFloodLimiter
from telegram_bot.delivery.flood.gate import Sleep
from telegram_bot.delivery.held import HeldWatch
from telegram_bot.delivery.outgoing import (
    CLOSED,
    URGENT,
    CallOptions,
    Outgoing,
    OutgoingStats,
    Prepaid,
    find_outgoing,
    install,
)
from telegram_bot.delivery.slots import Content, DeliveryConfig, Pending, Slot, Urgency
from telegram_bot.delivery.waiting_line import ACTOR, OTHERS, OWN_VIEW, TABLE, Priority

__all__ = ["Delivery", "DeliveryConfig", "EphemeralGone", "Urgency"]

log = logging.getLogger(__name__)

# a pending edit's place in its chat's line for the flood windows (#24, item 2)
RANKS = {Urgency.NOW: OWN_VIEW, Urgency.SOON: ACTOR, Urgency.LATER: OTHERS, Urgency.TABLE: TABLE}


class Delivery:
    """See the module docstring; ``outgoing``: the calls' middleware of ``bot``
    (None: the one installed, else a new one without a flood limiter)."""

    def __init__(
        self,
        bot: Bot,
        config: DeliveryConfig | None = None,
        *,
        clock: Clock = time.monotonic,
        sleep: Sleep = asyncio.sleep,
        outgoing: Outgoing | None = None,
    ) -> None:
        self.bot = bot
        self.config = config = config or DeliveryConfig()
        self.clock = clock
        self.sleep = sleep
        if outgoing is None:
            outgoing = find_outgoing(bot) or install(bot)
        elif find_outgoing(bot) is None:
            bot.session.middleware(outgoing)
        self.outgoing = outgoing
        self.events: Events = outgoing.events  # what it learns, for a dispatcher above
        self.edits = MessageEdits(bot, outgoing, clock=clock, idle_after=config.table_delay)
        # a new message now (``ephemeral``: to one member of the group; ``reply_to``:
        # as a reply, sent all the same if that one is gone); None: the chat is closed
        self.send = self.edits.send
        self._slots = self.edits.slots
        self._wake = asyncio.Event()
        self._runner: asyncio.Task[None] | None = None
        self._inflight: set[asyncio.Task[Any]] = set()
        self._closed = False
        self._flushing = 0
        # deferred edits in flight at once (the rest stay pending, coalescing), and
        # until when the overall bucket has no headroom for any of them
        self._deferred_slots = asyncio.Semaphore(config.deferred_concurrency)
        self._hold_all_until = float("-inf")
        # ephemeral views held back by the flood limiter (#24): told as events
        # (``held_after`` None: not watched)
        self.held = HeldWatch(
            self.events, config, clock=clock, sleep=sleep, gone=self.edits.gone.__contains__
        )

    @property
    def stats(self) -> OutgoingStats:
        """sent, edited, coalesced, noop, retry_after (429s), forbidden, waits."""
        return self.outgoing.stats

    # ------------------------------------------------------------------ sending
    async def send_reply(
        self,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None,
        ephemeral: EphemeralMessageParameters,
        *,
        fresh_until: float,
        thread: int | None = None,
    ) -> Message | None:
        """An ephemeral message answering a press: its token first, then the call
        -- tied to the press only before ``fresh_until`` (Telegram refuses a
        reply to a press older than 15 s), else untied, like a hand sent at a
        game's start (#28); ``thread``: in that topic of a forum group."""

        def method() -> SendMessage:
            params = ephemeral
            if self.clock() >= fresh_until:
                params = ephemeral.model_copy(update={"callback_query_id": None})
            return SendMessage(
                chat_id=chat_id,
                text=text,
                reply_markup=markup,
                parse_mode=self.config.parse_mode,
                ephemeral_message_parameters=params,
                message_thread_id=thread,
            )

        def after_429() -> tuple[SendMessage, str] | None:
            return (method(), "") if self.clock() >= fresh_until else None

        ticket = await self.outgoing.prepay(Address(chat_id, receiver=ephemeral.receiver_user_id))
        try:
            options = CallOptions(Priority.URGENT, ticket, after_429)
            return await self.outgoing.call(self.bot, method(), options)
        except CLOSED:
            return None
        finally:
            await self.outgoing.settle(ticket)

    async def delete_ephemeral(self, to: Address, table_id: str = "") -> bool:
        """Delete the ephemeral message ``to``; False (logged) when Telegram
        refuses.  Its pending edits go first, here and -- recorded as gone in
        the shared digest of ``table_id`` -- in every process (#28): none draws
        400 "message to edit not found" after it."""
        assert to.receiver is not None
        assert to.message is not None
        known_gone = self.edits.gone.get(to) is False  # an edit found it gone
        self.edits.drop(to, deleted=True)
        if table_id:
            await self.outgoing.shown.bury(to, gone_version(table_id))
        if known_gone:
            return True
        try:
            await self.bot.delete_ephemeral_message(
                chat_id=to.chat, receiver_user_id=to.receiver, ephemeral_message_id=to.message
            )
        except TelegramAPIError as e:
            log.info("ephemeral %s stays: %s", to, e.message)
            return False
        return True

    async def is_admin(self, chat_id: int, user: int) -> bool:
        """Telegram's word (getChatMember): the group's creator or an administrator."""
        member = await self.bot.get_chat_member(chat_id, user)
        return member.status in ("creator", "administrator")

    async def set_chat_commands(self, chat_id: int, commands: list[BotCommand]) -> None:
        """The command menu of this one chat (BotCommandScopeChat)."""
        await self.bot.set_my_commands(commands, scope=BotCommandScopeChat(chat_id=chat_id))

    async def set_chat_menu_button(self, chat_id: int, button: MenuButtonWebApp) -> None:
        """The menu button of this one private chat (#42: the Mini App's, in
        its user's language); a failure is logged -- the default stays."""
        try:
            await self.bot.set_chat_menu_button(chat_id=chat_id, menu_button=button)
        except TelegramAPIError as e:
            log.info("menu button of %s stays: %s", chat_id, e.message)

    async def chat_title(self, chat_id: int) -> str:
        """A group's title, as Telegram has it now (getChat); empty if it cannot
        tell (the bot was removed)."""
        try:
            found = await self.bot.get_chat(chat_id)
        except TelegramAPIError as e:
            log.info("no title of chat %s: %s", chat_id, e.message)
            return ""
        return found.title or ""

    async def edit(
        self,
        to: Address,
        text: str,
        markup: InlineKeyboardMarkup | None = None,
        urgency: Urgency = Urgency.NOW,
        *,
        version: str = "",
        join: bool = False,
        gap: float | None = None,
    ) -> int | None:
        """Show ``text`` and ``markup`` in the message ``to``.  Returns the id of
        the message that holds (or will hold) it: for NOW the one edited -- a
        new one when the old was gone -- or None when forbidden; else the id as
        known now (a replacement comes as a ``Replaced`` event).  ``version``:
        the table version it renders (never shown after a newer one).
        ``join``: only into a pending edit, no write of its own.  ``gap``: a
        LATER or TABLE edit's own gap instead of its urgency's (#24)."""
        if self._closed:
            raise RuntimeError("Delivery is closed")
        key = self._current(to)
        if key in self.edits.gone:  # deleted (#28): no edit of it goes out
            self.stats.coalesced += 1
            return None
        slot = self.edits.slot(key)
        if join and slot.pending is None:
            return None
        slot.seq += 1
        content = Content(text, markup, self.config.parse_mode, version)
        # #39: what a message is to show never goes back to an older table
        # version than one asked of it already (a NOW edit: MessageEdits.deliver)
        if slot.latest is None or not is_older(version, slot.latest.version):
            slot.latest = content
        self.held.asked(key, slot, content)
        if urgency is Urgency.NOW and not join:
            return await self.edits.deliver(key, slot, content, slot.seq, URGENT)
        pending = slot.pending
        if pending is not None:
            self.stats.coalesced += 1
            if not is_older(version, pending.content.version):
                pending.content = content
            pending.seq = slot.seq
            pending.gap = gap  # the newest asks
            if urgency is Urgency.SOON:
                pending.urgency = Urgency.SOON  # the faster of the two wins
                # and it does not hold back
                pending.not_before = pending.spaced = float("-inf")
        else:
            slot.pending = Pending(content, slot.seq, self.clock(), urgency, gap=gap)
        self._kick()
        return key.message

    def settled(self, to: Address) -> asyncio.Future[bool]:
        """Resolved True once the newest content asked of the message (or newer)
        went out or was found not needed, False when its edit failed."""
        key = self._current(to)
        gone = self.edits.gone.get(key)
        if gone is not None:  # deleted by the bot: nothing to show; found gone: failed
            future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            future.set_result(gone)
            return future
        slot = self.edits.slot(key)
        return slot.settled(slot.seq)

    async def catch_up(self) -> int:
        """The flood limiter's journal of the chats that fell back charged to
        their windows as soon as they answer again (#40,
        :meth:`telegram_bot.delivery.flood.fallback.FallbackFloodLimiter.catch_up`);
        0 without a shared limiter."""
        limiter = self.outgoing.limiter
        return await limiter.catch_up() if isinstance(limiter, FallbackFloodLimiter) else 0

    async def flush(self) -> None:
        """Send every pending edit now and wait for everything in flight."""
        self._flushing += 1
        try:
            while True:
                for key, slot in list(self._slots.items()):
                    if slot.pending is not None and not slot.pending.firing:
                        self._fire(key, slot)
                if not self._inflight:
                    return
                while self._inflight:
                    await asyncio.gather(*list(self._inflight), return_exceptions=True)
        finally:
            self._flushing -= 1

    async def aclose(self) -> None:
        """Flush, then stop the scheduler (the bot and its session stay open);
        first the watch of held-back views stops."""
        await self.held.aclose()
        await self.flush()
        self._closed = True
        if self._runner is not None:
            self._runner.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._runner
            self._runner = None

    # ------------------------------------------------------------------ internals
    def _current(self, to: Address) -> Address:
        """The message that holds ``to``'s content (re-sent: the new one)."""
        moved = self.edits.moved.get(to)
        return to if moved is None else replace(to, message=moved)

    def _kick(self) -> None:
        if self._runner is None or self._runner.done():
            self._runner = asyncio.get_running_loop().create_task(self._run())
        else:
            self._wake.set()

    def _fire(self, key: Address, slot: Slot) -> None:
        assert slot.pending is not None
        slot.pending.firing = True
        task = asyncio.get_running_loop().create_task(self._deliver_pending(key, slot))
        self._inflight.add(task)
        task.add_done_callback(self._inflight.discard)

    async def _run(self) -> None:
        """The scheduler: fires pending edits when due, sleeps until the next."""
        while True:
            waiting = [
                (key, slot)
                for key, slot in self._slots.items()
                if slot.pending is not None and not slot.pending.firing
            ]
            if not waiting:
                return
            now = self.clock()
            next_due = float("inf")
            for key, slot in waiting:
                due = slot.due(self.config)
                if due <= now:
                    self._fire(key, slot)
                else:
                    next_due = min(next_due, due)
            if next_due == float("inf"):
                await asyncio.sleep(0)
                continue
            self._wake.clear()
            sleeper = asyncio.ensure_future(self.sleep(next_due - now))
            waker = asyncio.ensure_future(self._wake.wait())
            try:
                await asyncio.wait({sleeper, waker}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for t in (sleeper, waker):
                    if not t.done():
                        t.cancel()
                        with contextlib.suppress(asyncio.CancelledError):
                            await t

    async def _deliver_pending(self, key: Address, slot: Slot) -> None:
        pending = slot.pending
        try:
            # only watchers' updates hold back: for the reserve, and for their gap
            # since the message's last edit by ANY process (shared in Redis); every
            # deferred update queues behind the acting players' own edits for the
            # overall bucket
            if self._flushing or pending is None or pending.urgency is Urgency.SOON:
                await self._deliver_newest(key, slot)
                return
            c = self.config
            gap = c.table_delay if pending.urgency is Urgency.TABLE else c.later_delay
            gap = gap if pending.gap is None else pending.gap
            max_hold = max(c.max_hold, pending.gap or 0.0)
            if self.clock() - pending.created >= max_hold:  # overdue: only its gap holds
                room = await self.outgoing.headroom(key, gap)
                pending.spaced = max(pending.spaced, self.clock() + room.message)
                if not self._hold_back(slot, self.clock() + room.message):
                    await self._deliver_newest(key, slot)  # competes with urgent edits
                return
            async with self._deferred_slots:
                await self._look_and_deliver(key, slot, pending, gap, max_hold)
        except Exception as e:  # noqa: BLE001 -- logged by its kind (#40)
            log_failure(log, e, "deferred edit of %s failed; the next change sends it", key)

    async def _look_and_deliver(
        self, key: Address, slot: Slot, pending: Pending, gap: float, max_hold: float
    ) -> None:
        """A deferred edit (one of ``deferred_concurrency``): held back for the
        reserves and its gap, else delivered.  #39 point 1: the look takes its
        tokens when nothing holds it back and -- its message's lock free --
        judges its newest content too, in one script; the edit then goes out
        under that lock (held for that one script: never while waiting)."""
        hold = self._hold_all_until
        spaced = float("-inf")
        ticket: Prepaid | None = None
        content: Content | None = None
        try:
            if hold <= self.clock():
                if self.outgoing.gate is not None:
                    content = await self.edits.lock_judged(key, slot)
                edit = None
                if content is not None:
                    edit = (self.bot, edit_method(key, content), content.version)
                room, ticket = await self.outgoing.take_if_room(key, gap, edit)
                now = self.clock()
                if room.overall > 0:  # no room for any deferred edit: wait together
                    self._hold_all_until = max(self._hold_all_until, now + room.overall)
                hold = now + room.wait if room.wait > 0 else hold
                spaced = now + room.message
                pending.spaced = max(pending.spaced, spaced)
            # never held past max_hold for the reserve; its gap always holds
            hold = max(min(hold, pending.created + max_hold), spaced)
            go = not self._hold_back(slot, hold)
            if content is not None and not (go and ticket is not None and ticket.owner):
                content = None  # not judged: the lock goes, the edit takes its turn
                slot.lock.release()
            if not go:
                if ticket is not None:  # (taken only with nothing to wait for)
                    await self.outgoing.settle(ticket)
                return
            await self._deliver_newest(key, slot, ticket, locked=content is not None)
        finally:
            if content is not None:
                slot.lock.release()

    def _hold_back(self, slot: Slot, until: float) -> bool:
        """Keep the message's update pending (and coalescing) until ``until``;
        False when that is not in the future (or everything is being flushed)."""
        if until <= self.clock() or self._flushing:
            return False
        pending = slot.pending
        if pending is not None:
            pending.firing = False  # held back: still pending
            pending.not_before = until
            self._kick()
        return True

    async def _deliver_newest(
        self, key: Address, slot: Slot, ticket: Prepaid | None = None, *, locked: bool = False
    ) -> None:
        """Send the newest pending content: its token first (behind urgent
        calls; ``ticket``: taken already), then the message's lock (``locked``:
        held already) and content (the module docstring)."""
        pending = slot.pending
        if pending is None:
            if ticket is not None:
                await self.outgoing.settle(ticket)
            return
        self.held.gapped(key, slot)  # its gaps are over: from now on it waits for tokens
        try:
            if ticket is None:
                rank = RANKS[pending.urgency]
                ticket = await self.outgoing.prepay(key, Priority.DEFERRED, rank=rank)
        except BaseException:  # Redis down, cancelled: it stays pending, due again soon
            if slot.pending is pending and pending.firing:
                pending.firing = False
                pending.not_before = self.clock() + self.config.soon_delay
                if not self._closed:
                    self._kick()
            raise
        try:
            options = CallOptions(Priority.DEFERRED, ticket, rank=RANKS[pending.urgency])
            await self.edits.deliver(key, slot, None, 0, options, locked=locked)
        finally:
            await self.outgoing.settle(ticket)  # overtaken by a newer edit: tokens back
