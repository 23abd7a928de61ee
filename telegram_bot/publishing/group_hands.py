"""Hands shown in the group (issue 14): a player's hand as an ephemeral message
in the group chat, which only he sees (Bot API 10.2: ``sendMessage`` with
``ephemeral_message_parameters``; edited by ``editEphemeralMessageText``).

Where a hand lives is the ``h:<user>`` field of the table's chat state: a
positive id is a message in his private chat, a negative one is minus the
``ephemeral_message_id`` of his hand in the group (:func:`hand_target`).  It is
edited exactly like the private one (same rendering, callback data, stamps and
urgencies, :mod:`telegram_bot.publishing.publisher`); the ephemeral edits count against the
group's flood limit (:func:`telegram_bot.delivery.outgoing.is_limited`).

The private hand stays the durable one.  Telegram does not guarantee that an
ephemeral message or its edit reaches its receiver ("especially if they are
offline"), and the call succeeds all the same: the player can always open his
cards in private (*In private* on the table message, a deep link); a send or
edit that FAILS (an error answer) falls back to the private hand at once
(:func:`fall_back`).  The docs ask only that the receiver be a member of the
group, not that he started the bot; but the bot may not write to a user who never
opened its private chat, so there the fallback is a message in the group naming
him, with a link that opens the private chat and his cards."""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from aiogram.exceptions import TelegramAPIError
from aiogram.types import EphemeralMessageParameters, InlineKeyboardMarkup

from tables import PLAYING, LiveError
from telegram_bot.buttons.moves import Selection
from telegram_bot.delivery import Urgency
from telegram_bot.state.chat_state import Prefs
from telegram_bot.state.snapshot import group_of
from telegram_bot.views import texts
from telegram_bot.views.format import user_text
from telegram_bot.views.i18n import Translator
from telegram_bot.views.keyboards import url_keyboard
from telegram_bot.views.lobby import deep_link
from telegram_bot.views.screens import hand_screen

if TYPE_CHECKING:
    from telegram_bot.publishing.publisher import Publisher

log = logging.getLogger(__name__)

GROUP = "group"
PRIVATE = "private"


async def show_in_group(pub: Publisher, table_id: str, user: int, query_id: str | None) -> str:
    """Show ``user``'s hand in the group, to him alone (he pressed *My cards*:
    ``query_id``; None at a game's start); the msgid to answer him with."""
    async with pub.lock(table_id):
        try:
            snap = await pub.snapshot(table_id)
        except LiveError:
            return texts.REFUSALS["not_seated"]
        t = snap.table
        seat, group = t.seat_of(user), group_of(t)
        if seat is None or t.seats[seat].left or group is None:
            return texts.REFUSALS["not_seated"]
        if t.status != PLAYING or snap.loaded.state is None:
            return texts.REFUSALS["game_over"]
        lang = (await pub._langs(t, snap.ui)).get(user, "en")
        sel = Selection.from_json(snap.ui.selections.get(user))
        text, markup = hand_screen(snap, seat, lang, sel)
        params = EphemeralMessageParameters(receiver_user_id=user, callback_query_id=query_id)
        try:
            msg = await pub.delivery.send(group, text, markup, ephemeral=params)
        except TelegramAPIError as e:
            log.info("no ephemeral hand for %s in %s: %s", user, group, e.message)
            msg = None
        await pub.ui.set_prefs(user, plays=GROUP)  # where he last pressed
        if msg is None or not msg.ephemeral_message_id:
            sent = await _private(pub, table_id, user, group, text, markup)
            return texts.CARDS_NOT_HERE if sent else texts.CARDS_OPEN_PRIVATE
        old = snap.ui.hands.get(user)
        await pub.ui.update_table(table_id, hands={user: -msg.ephemeral_message_id})
        if old is not None and old < 0 and old != -msg.ephemeral_message_id:
            await _delete(pub, group, user, -old)
        if old is not None and old > 0:  # his private hand: no more edits, say where
            await _moved(pub, table_id, user, old, lang)
        return texts.CARDS_HERE


def in_group(prefs: Prefs | None) -> bool:
    """Does a new game send his hand to the group?  Where he last asked for it;
    never asked: in private if he started the bot (the bot cannot write to him
    there otherwise)."""
    if prefs is None:
        return False
    return prefs.plays == GROUP or (prefs.plays is None and not prefs.started)


async def send_later(pub: Publisher) -> None:
    """The ephemeral hands a game start left to send (outside the table's lock)."""
    while pub.later:
        table_id, user = pub.later.pop(0)
        await show_in_group(pub, table_id, user, None)


def on_failure(
    pub: Publisher, done: asyncio.Future[bool], table_id: str, user: int, msg: int
) -> None:
    """Once the edit of ``user``'s ephemeral hand ``msg`` settles: if it failed,
    :func:`fall_back` (a task the publisher keeps)."""

    def settled(future: asyncio.Future[bool]) -> None:
        if future.cancelled() or future.result():
            return
        task = asyncio.get_running_loop().create_task(fall_back(pub, table_id, user, msg))
        pub.fallbacks.add(task)
        task.add_done_callback(pub.fallbacks.discard)

    done.add_done_callback(settled)


async def open_private(pub: Publisher, table_id: str, user: int) -> None:
    """He opened his cards in private (the deep link): his hand there from now on."""
    await pub.ui.set_prefs(user, plays=PRIVATE)
    old = (await pub.ui.table(table_id)).hands.get(user)
    sent = await pub.resend_hand(user, table_id=table_id, again=True)
    table = await pub.svc.lobbies.lobby(table_id)
    group = group_of(table)
    if sent and old is not None and old < 0 and group is not None:
        await _delete(pub, group, user, -old)


async def fall_back(pub: Publisher, table_id: str, user: int, failed: int) -> None:
    """An edit of ``user``'s ephemeral hand ``failed``: his private hand instead
    (or, if he never started the bot, a link to it in the group)."""
    async with pub.lock(table_id):
        try:
            snap = await pub.snapshot(table_id)
        except LiveError:
            return
        t = snap.table
        seat, group = t.seat_of(user), group_of(t)
        if snap.ui.hands.get(user) != failed or seat is None or snap.loaded.state is None:
            return  # already replaced, or nothing to show
        assert group is not None
        lang = (await pub._langs(t, snap.ui)).get(user, "en")
        sel = Selection.from_json(snap.ui.selections.get(user))
        text, markup = hand_screen(snap, seat, lang, sel)
        await _private(pub, table_id, user, group, text, markup)


async def _private(
    pub: Publisher,
    table_id: str,
    user: int,
    group: int,
    text: str,
    markup: InlineKeyboardMarkup | None,
) -> bool:
    """His hand in his private chat if he started the bot (True); else a message in
    the group naming him, with the deep link that opens it."""
    prefs = await pub.ui.prefs(user)
    if prefs.started:
        msg = await pub.delivery.send(user, text, markup)
        if msg is not None:
            await pub.ui.update_table(table_id, hands={user: msg.message_id})
            return True
    await pub.ui.update_table(table_id, drop_hands=[user])
    _ = Translator(prefs.lang or prefs.tg or "en")
    name = user_text(prefs.name or str(user))
    link = url_keyboard("🔒 " + _(texts.OPEN_MY_CARDS), deep_link(pub.bot_username, table_id))
    await pub.delivery.send(group, _(texts.CARDS_OPEN_PRIVATE, name=name), link)
    return False


async def _moved(pub: Publisher, table_id: str, user: int, msg: int, lang: str) -> None:
    """His private hand ``msg`` is no longer edited: it becomes a note (no card,
    no card button) with the deep link that brings his cards back there.  SOON:
    it replaces any hand edit of that message still pending."""
    _ = Translator(lang)
    link = url_keyboard("🔒 " + _(texts.OPEN_MY_CARDS), deep_link(pub.bot_username, table_id))
    try:
        await pub.delivery.edit(user, msg, _(texts.CARDS_MOVED), link, Urgency.SOON)
    except TelegramAPIError as e:  # best effort: his cards are in the group already
        log.info("old private hand %s of %s stays: %s", msg, user, e.message)


async def _delete(pub: Publisher, group: int, user: int, ephemeral_id: int) -> None:
    """His older ephemeral hand goes (one hand on his screen); best effort."""
    try:
        await pub.delivery.bot.delete_ephemeral_message(
            chat_id=group, receiver_user_id=user, ephemeral_message_id=ephemeral_id
        )
    except TelegramAPIError as e:
        log.info("old ephemeral hand %s of %s stays: %s", ephemeral_id, user, e.message)
