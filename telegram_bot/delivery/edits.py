"""The edits themselves (:class:`telegram_bot.delivery.coalesce.Delivery` decides
WHEN): :class:`MessageEdits` edits a message under its
:class:`telegram_bot.delivery.slots.Slot`'s lock -- never content older than
what went out; a gone message sent anew (later edits of its old id go there);
after a 429 the newest content retried instead of the refused one."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from dataclasses import replace
from typing import Any

from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.methods import EditEphemeralMessageText, EditMessageText, SendMessage, TelegramMethod
from aiogram.types import (
    EphemeralMessageParameters,
    InlineKeyboardMarkup,
    Message,
    ReplyParameters,
)

from engine.clock import Clock
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.digest import gone_version, is_older
from telegram_bot.delivery.events import Replaced
from telegram_bot.delivery.outgoing import CLOSED, URGENT, CallOptions, Outgoing
from telegram_bot.delivery.slots import Content, Slot

GONE = ("message to edit not found", "message can't be edited", "MESSAGE_ID_INVALID")
GONE_KEPT = 10_000
"""Deleted messages remembered (their later edits dropped), the oldest forgotten."""

log = logging.getLogger(__name__)


class EphemeralGone(Exception):
    """An ephemeral message's edit found it gone: dropped, never re-sent (#28)."""


class MessageEdits:
    """The messages of this process (see the module docstring)."""

    def __init__(
        self,
        bot: Bot,
        outgoing: Outgoing,
        *,
        clock: Clock = time.monotonic,
        idle_after: float = 3.0,
    ) -> None:
        self.bot = bot
        self.idle_after = idle_after  # seconds after its last edit a slot may go
        self.outgoing = outgoing
        self.clock = clock
        self.slots: dict[Address, Slot] = {}
        self.moved: OrderedDict[Address, int] = OrderedDict()  # re-sent: its new id
        # deleted messages (#28): True deleted by the bot (nothing left to show),
        # False found gone by an edit (what it should show never reached it)
        self.gone: OrderedDict[Address, bool] = OrderedDict()

    def slot(self, key: Address) -> Slot:
        """The message's slot (made on first use; idle ones are swept past 10,000)."""
        slot = self.slots.get(key)
        if slot is None:
            if len(self.slots) >= 10_000:
                self.sweep(self.clock() - self.idle_after)
            slot = self.slots[key] = Slot()
        return slot

    def drop(self, key: Address, *, deleted: bool) -> None:
        """The message is gone (``deleted`` by the bot, else found gone, #28): its
        edits are dropped; whoever waits for them is told ``deleted``."""
        self.gone[key] = self.gone.get(key, True) and deleted
        self.gone.move_to_end(key)
        while len(self.gone) > GONE_KEPT:
            self.gone.popitem(last=False)
        slot = self.slots.get(key)
        if slot is not None:
            slot.pending = None
            slot.finish(slot.seq, self.gone[key])

    def sweep(self, horizon: float) -> None:
        """Forget idle messages (nothing pending, not being edited, last sent
        before ``horizon``)."""
        for key, slot in list(self.slots.items()):
            idle = slot.pending is None and not slot.lock.locked() and not slot.waiters
            if idle and slot.last_sent < horizon:
                del self.slots[key]

    async def send(
        self,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None = None,
        *,
        parse_mode: str | None = "HTML",
        options: CallOptions = URGENT,
        ephemeral: EphemeralMessageParameters | None = None,
        reply_to: int | None = None,
        thread: int | None = None,
    ) -> Message | None:
        """Send a new message now (``ephemeral``: to one member of the group;
        ``reply_to``: a reply, sent even if that one is gone; ``thread``: in
        that topic of a forum group, :attr:`Address.thread`); None when the
        chat is closed to the bot."""
        reply = (
            ReplyParameters(message_id=reply_to, allow_sending_without_reply=True)
            if reply_to is not None
            else None
        )
        method = SendMessage(
            chat_id=chat_id,
            text=text,
            reply_markup=markup,
            parse_mode=parse_mode,
            ephemeral_message_parameters=ephemeral,
            reply_parameters=reply,
            message_thread_id=thread,
        )
        try:
            return await self.outgoing.call(self.bot, method, options)
        except CLOSED:  # 403, or the group moved to a supergroup (#38)
            return None

    async def lock_judged(self, key: Address, slot: Slot) -> Content | None:
        """The message's lock, taken when it is free and its newest pending
        content can be judged now (#39: with its tokens, its edit to go out
        under this lock): that content; None, not taken."""
        pending = slot.pending
        if slot.lock.locked() or pending is None or pending.seq <= slot.sent_seq:
            return None
        if key in self.gone or key in self.moved:
            return None
        await slot.lock.acquire()  # (free: at once)
        return pending.content

    async def deliver(
        self,
        key: Address,
        slot: Slot,
        content: Content | None,
        seq: int,
        options: CallOptions,
        *,
        locked: bool = False,
    ) -> int | None:
        """Edit the message (``content`` None: the newest pending, taken under the
        lock; ``locked``: the caller holds it); never after newer content went out."""
        if locked:
            return await self._deliver(key, slot, content, seq, options)
        async with slot.lock:
            return await self._deliver(key, slot, content, seq, options)

    async def _deliver(
        self, key: Address, slot: Slot, content: Content | None, seq: int, options: CallOptions
    ) -> int | None:
        message_id = key.message
        if key in self.gone:  # deleted meanwhile (#28): nothing to edit
            slot.pending = None
            slot.finish(slot.seq, self.gone[key])
            return None
        pending = slot.pending
        if content is None:
            slot.pending = None
            if pending is None:
                return message_id
            content, seq = pending.content, pending.seq
        elif pending is not None and is_older(content.version, pending.content.version):
            # #39: a NOW edit drawn from an older table version than one still
            # pending (a stale press's redraw, read before another's move was
            # rendered): the newer content goes out now in its place.  Else it
            # was superseded, or -- queued for its tokens -- found this later
            # seq sent, and his hand kept a keyboard without his move
            slot.pending = None
            content, seq = pending.content, max(seq, pending.seq)
            self.outgoing.stats.coalesced += 1
        elif pending is not None and pending.seq < seq and not pending.firing:
            slot.pending = None  # a NOW edit supersedes an older pending one
            self.outgoing.stats.coalesced += 1
        if seq <= slot.sent_seq:
            self.outgoing.stats.coalesced += 1
            return message_id
        moved = self.moved.get(key)
        ok = False
        try:
            if moved is not None:  # re-sent meanwhile: this content belongs there
                slot.sent_seq = seq
                new_key = replace(key, message=moved)
                new_slot = self.slot(new_key)
                if new_slot.seq:  # newer content was already asked of the new one
                    self.outgoing.stats.coalesced += 1
                    ok = True
                    return moved
                new_slot.seq += 1
                new_slot.latest = content
                out = await self.deliver(new_key, new_slot, content, new_slot.seq, options)
            else:
                out = await self._edit(key, slot, content, seq, options)
            ok = True
            return out
        except EphemeralGone:
            log.info("ephemeral message %s is gone: its edit is dropped", key)
            return None
        finally:
            slot.finish(slot.sent_seq, ok)  # the edit and what it carried after a 429

    async def _edit(
        self, key: Address, slot: Slot, content: Content, seq: int, options: CallOptions
    ) -> int | None:
        """The edit call (the message's lock held)."""
        slot.sent_seq = seq
        slot.last_sent = self.clock()
        shown = [content]  # what the edit carries (newer after a 429)

        def newest() -> tuple[TelegramMethod[Any], str] | None:
            """After a 429: the newest content asked of this message, if newer."""
            latest = slot.latest
            if latest is None or slot.seq <= slot.sent_seq:
                return None
            if slot.pending is not None and slot.pending.seq <= slot.seq:
                slot.pending = None  # it goes out in this retry
            slot.sent_seq = slot.seq
            self.outgoing.stats.coalesced += 1
            shown[0] = latest
            return edit_method(key, latest), latest.version

        try:
            await self.outgoing.call(
                self.bot,
                edit_method(key, content),
                CallOptions(options.priority, options.prepaid, newest, content.version),
            )
        except CLOSED:  # 403, or the group moved to a supergroup (#38)
            return None
        except TelegramBadRequest as exc:
            if not any(r in exc.message for r in GONE):
                raise
            if key.ephemeral:  # never re-sent in the group: the caller falls back
                self.drop(key, deleted=False)
                table = content.version.rpartition("#")[0]
                if table:  # the other processes drop their edits of it too
                    await self.outgoing.shown.bury(key, gone_version(table))
                raise EphemeralGone(key) from exc
            return await self._replace(key, shown[0], CallOptions(options.priority))
        return key.message

    async def _replace(self, key: Address, content: Content, options: CallOptions) -> int | None:
        """The message is gone: send the content as a new one."""
        chat_id, old_id = key.chat, key.message
        assert old_id is not None
        msg = await self.send(
            chat_id,
            content.text,
            content.markup,
            parse_mode=content.parse_mode,
            options=options,
            thread=key.thread,  # in its topic still
        )
        if msg is None:
            return None
        self.moved[key] = msg.message_id
        while len(self.moved) > 10_000:
            self.moved.popitem(last=False)
        self.outgoing.events.put(Replaced(chat_id, old_id, msg.message_id))
        return msg.message_id


def edit_method(to: Address, content: Content) -> TelegramMethod[Any]:
    """Edits always carry the keyboard (Telegram drops it otherwise)."""
    assert to.message is not None
    if to.receiver is not None:
        return EditEphemeralMessageText(
            chat_id=to.chat,
            receiver_user_id=to.receiver,
            ephemeral_message_id=to.message,
            text=content.text,
            reply_markup=content.markup,
            parse_mode=content.parse_mode,
        )
    return EditMessageText(
        text=content.text,
        chat_id=to.chat,
        message_id=to.message,
        reply_markup=content.markup,
        parse_mode=content.parse_mode,
    )
