"""Hands shown in the group (issue 14): a player's hand as an ephemeral message
in the group chat, which only he sees (Bot API 10.2: ``sendMessage`` with
``ephemeral_message_parameters``; edited by ``editEphemeralMessageText``).

Where a hand lives is the ``h:<user>`` field of the table's chat state: a
positive id is a message in his private chat, a negative one is minus the
``ephemeral_message_id`` of his hand in the group (:func:`telegram_bot.state.snapshot.hand_target`).  It is
edited exactly like the private one (same rendering, callback data, stamps and
urgencies, :mod:`telegram_bot.publishing.publisher`); the ephemeral edits count against the
group's flood limit (:func:`telegram_bot.delivery.outgoing.is_limited`).

The private hand stays the durable one.  Telegram does not guarantee that an
ephemeral message or its edit reaches its receiver ("especially if they are
offline"), and the call succeeds all the same: the player can always open his
cards in private (*In private* on the table message, a deep link); a send or
edit that FAILS (an error answer) falls back to the private hand at once
(:meth:`HandPlacement.fall_back`).  The docs ask only that the receiver be a member of the
group, not that he started the bot; but the bot may not write to a user who never
opened its private chat, so there the fallback is a message in the group naming
him, with a link that opens the private chat and his cards."""

from __future__ import annotations

import asyncio
import logging

from aiogram.exceptions import TelegramAPIError
from aiogram.types import EphemeralMessageParameters, InlineKeyboardMarkup

from tables import PLAYING, LiveError, TableService
from telegram_bot.buttons.moves import Selection
from telegram_bot.delivery import Delivery, Urgency
from telegram_bot.publishing.changes import LeftNoted
from telegram_bot.publishing.locks import TableLocks
from telegram_bot.state.chat_state import ChatStateStore, Prefs
from telegram_bot.state.snapshot import Snapshots, group_of, hand_target
from telegram_bot.views import texts
from telegram_bot.views.format import user_text
from telegram_bot.views.hand import hand_screen
from telegram_bot.views.i18n import Translator
from telegram_bot.views.keyboards import take_back_keyboard, url_keyboard
from telegram_bot.views.lobby import deep_link

log = logging.getLogger(__name__)

GROUP = "group"
PRIVATE = "private"


def in_group(prefs: Prefs | None) -> bool:
    """Does a new game send his hand to the group?  Where he last asked for it;
    never asked: in private if he started the bot (the bot cannot write to him
    there otherwise)."""
    if prefs is None:
        return False
    return prefs.plays == GROUP or (prefs.plays is None and not prefs.started)


class HandPlacement:
    """Where each player's hand message lives -- in the group (ephemeral, to him
    alone) or in his private chat -- and moving it between the two."""

    def __init__(
        self,
        svc: TableService,
        snapshots: Snapshots,
        ui: ChatStateStore,
        delivery: Delivery,
        locks: TableLocks,
        bot_username: str,
    ) -> None:
        self.svc = svc
        self.snapshots = snapshots
        self.ui = ui
        self.delivery = delivery
        self.locks = locks
        self.bot_username = bot_username
        self.later: list[tuple[str, int]] = []  # ephemeral hands to send (game starts)
        self.fallbacks: set[asyncio.Task[None]] = set()  # see watch()

    async def show_in_group(self, table_id: str, user: int, query_id: str | None) -> str:
        """Show ``user``'s hand in the group, to him alone (he pressed *My cards*:
        ``query_id``; None at a game's start); the msgid to answer him with."""
        async with self.locks.of(table_id):
            try:
                snap = await self.snapshots.load(table_id)
            except LiveError:
                return texts.REFUSALS["not_seated"]
            t = snap.table
            seat, group = t.seat_of(user), group_of(t)
            if seat is None or t.seats[seat].left or group is None:
                return texts.REFUSALS["not_seated"]
            if t.status != PLAYING or snap.loaded.state is None:
                return texts.REFUSALS["game_over"]
            lang = (await self.snapshots.langs(t, snap.ui)).get(user, "en")
            sel = Selection.from_json(snap.ui.selections.get(user))
            text, markup = hand_screen(snap, seat, lang, sel)
            params = EphemeralMessageParameters(receiver_user_id=user, callback_query_id=query_id)
            try:
                msg = await self.delivery.send(group, text, markup, ephemeral=params)
            except TelegramAPIError as e:
                log.info("no ephemeral hand for %s in %s: %s", user, group, e.message)
                msg = None
            await self.ui.set_prefs(user, plays=GROUP)  # where he last pressed
            if msg is None or not msg.ephemeral_message_id:
                sent = await self._private(table_id, user, group, text, markup)
                return texts.CARDS_NOT_HERE if sent else texts.CARDS_OPEN_PRIVATE
            old = snap.ui.hands.get(user)
            await self.ui.update_table(table_id, hands={user: -msg.ephemeral_message_id})
            if old is not None and old < 0 and old != -msg.ephemeral_message_id:
                await self.delivery.delete_ephemeral(group, user, -old)
            if old is not None and old > 0:  # his private hand: no more edits, say where
                await self._moved(table_id, user, old, lang)
            return texts.CARDS_HERE

    def queue(self, table_id: str, user: int) -> None:
        """His hand goes to the group once the game's start is rendered."""
        self.later.append((table_id, user))

    async def send_later(self) -> None:
        """The ephemeral hands a game start left to send (outside the table's lock)."""
        while self.later:
            table_id, user = self.later.pop(0)
            await self.show_in_group(table_id, user, None)

    def watch(self, done: asyncio.Future[bool], table_id: str, user: int, msg: int) -> None:
        """Once the edit of ``user``'s ephemeral hand ``msg`` settles: if it failed,
        :meth:`fall_back` (a task kept here)."""

        def settled(future: asyncio.Future[bool]) -> None:
            if future.cancelled() or future.result():
                return
            task = asyncio.get_running_loop().create_task(self.fall_back(table_id, user, msg))
            self.fallbacks.add(task)
            task.add_done_callback(self.fallbacks.discard)

        done.add_done_callback(settled)

    async def open_private(self, table_id: str, user: int) -> None:
        """He opened his cards in private (the deep link): his hand there from now on."""
        await self.ui.set_prefs(user, plays=PRIVATE)
        old = (await self.ui.table(table_id)).hands.get(user)
        sent = await self.resend(user, table_id=table_id, again=True)
        table = await self.svc.lobbies.lobby(table_id)
        group = group_of(table)
        if sent and old is not None and old < 0 and group is not None:
            await self.delivery.delete_ephemeral(group, user, -old)

    async def resend(self, user: int, *, table_id: str = "", again: bool = False) -> bool:
        """``user`` can be written to again (he unblocked the bot): a game he sits
        at (``table_id``, else where he sits) gets a new hand message in private
        (with the take-back button if the AI plays) -- if it has none, or
        ``again`` (he asked for his table: the new message replaces the old one).
        True when sent."""
        try:
            table = (
                await self.svc.lobbies.lobby(table_id)
                if table_id
                else await self.svc.tables.where(user)
            )
        except LiveError:  # gone meanwhile
            return False
        if table is None or table.status != PLAYING:
            return False
        async with self.locks.of(table.id):
            try:
                snap = await self.snapshots.load(table.id)
            except LiveError:
                return False
            seat = snap.table.seat_of(user)
            if seat is None or snap.loaded.state is None or (snap.ui.hands.get(user) and not again):
                return False
            lang = (await self.snapshots.langs(snap.table, snap.ui)).get(user, "en")
            sel = Selection.from_json(snap.ui.selections.get(user))  # its revision too
            text, markup = hand_screen(snap, seat, lang, sel)
            msg = await self.delivery.send(user, text, markup)
            if msg is None:
                return False
            await self.ui.update_table(table.id, hands={user: msg.message_id})
            return True

    async def note_left(self, c: LeftNoted) -> None:
        """He left mid-game: one message says so, with *Take my seat back* while the
        game lasts (issue 13) -- his hand message, or a new one in his private
        chat if he has none."""
        _ = Translator(c.locale)
        text = _(texts.LEFT_GAME)
        markup: InlineKeyboardMarkup | None = take_back_keyboard(c.table.id, _(texts.TAKE_BACK))
        if c.over:  # the AI played the game out (no human left)
            text, markup = _(texts.LEFT), None
        msg = (await self.ui.table(c.table.id)).hands.get(c.user)
        if msg is None:
            await self.delivery.send(c.user, text, markup)
            return
        chat, key, receiver = hand_target(c.user, msg, group_of(c.table))
        await self.delivery.edit(chat, key, text, markup, urgency=Urgency.NOW, receiver=receiver)

    async def fall_back(self, table_id: str, user: int, failed: int) -> None:
        """An edit of ``user``'s ephemeral hand ``failed``: his private hand instead
        (or, if he never started the bot, a link to it in the group)."""
        async with self.locks.of(table_id):
            try:
                snap = await self.snapshots.load(table_id)
            except LiveError:
                return
            t = snap.table
            seat, group = t.seat_of(user), group_of(t)
            if snap.ui.hands.get(user) != failed or seat is None or snap.loaded.state is None:
                return  # already replaced, or nothing to show
            assert group is not None
            lang = (await self.snapshots.langs(t, snap.ui)).get(user, "en")
            sel = Selection.from_json(snap.ui.selections.get(user))
            text, markup = hand_screen(snap, seat, lang, sel)
            await self._private(table_id, user, group, text, markup)

    async def _private(
        self,
        table_id: str,
        user: int,
        group: int,
        text: str,
        markup: InlineKeyboardMarkup | None,
    ) -> bool:
        """His hand in his private chat if he started the bot (True); else a message in
        the group naming him, with the deep link that opens it."""
        prefs = await self.ui.prefs(user)
        if prefs.started:
            msg = await self.delivery.send(user, text, markup)
            if msg is not None:
                await self.ui.update_table(table_id, hands={user: msg.message_id})
                return True
        await self.ui.update_table(table_id, drop_hands=[user])
        _ = Translator(prefs.lang or prefs.tg or "en")
        name = user_text(prefs.name or str(user))
        link = url_keyboard("🔒 " + _(texts.OPEN_MY_CARDS), deep_link(self.bot_username, table_id))
        await self.delivery.send(group, _(texts.CARDS_OPEN_PRIVATE, name=name), link)
        return False

    async def _moved(self, table_id: str, user: int, msg: int, lang: str) -> None:
        """His private hand ``msg`` is no longer edited: it becomes a note (no card,
        no card button) with the deep link that brings his cards back there.  SOON:
        it replaces any hand edit of that message still pending."""
        _ = Translator(lang)
        link = url_keyboard("🔒 " + _(texts.OPEN_MY_CARDS), deep_link(self.bot_username, table_id))
        try:
            await self.delivery.edit(user, msg, _(texts.CARDS_MOVED), link, Urgency.SOON)
        except TelegramAPIError as e:  # best effort: his cards are in the group already
            log.info("old private hand %s of %s stays: %s", msg, user, e.message)
