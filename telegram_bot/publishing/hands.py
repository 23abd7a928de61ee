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
from dataclasses import dataclass

from aiogram.exceptions import TelegramAPIError
from aiogram.types import EphemeralMessageParameters, InlineKeyboardMarkup, Message

from tables import PLAYING, LiveError, TableService
from telegram_bot.buttons.moves import Selection
from telegram_bot.delivery import Address, Delivery, Urgency
from telegram_bot.delivery.digest import table_version
from telegram_bot.publishing.changes import LeftNoted
from telegram_bot.state.chat_state import ANY_HAND, ChatStateStore, Prefs
from telegram_bot.state.snapshot import Snapshot, Snapshots, group_of, hand_target
from telegram_bot.views import texts
from telegram_bot.views.format import user_text
from telegram_bot.views.hand import hand_screen
from telegram_bot.views.i18n import Translator
from telegram_bot.views.keyboards import Screen, take_back_keyboard, url_keyboard
from telegram_bot.views.lobby import deep_link
from telegram_bot.views.miniapp import MiniApp

log = logging.getLogger(__name__)

GROUP = "group"
PRIVATE = "private"


@dataclass(frozen=True)
class PressReply:
    """A press the hand answers (*My cards*): its callback query, and until when
    (the delivery's clock) an ephemeral reply may be tied to it (#28)."""

    query_id: str
    fresh_until: float


def _expect(old: int | None, again: bool) -> dict[str, object]:
    """:meth:`HandPlacement._place`'s condition for a resent hand: replacing the
    one he asked to replace, or none."""
    return {} if again else {"expect": old}


def hand_view(
    snap: Snapshot,
    seat: int,
    user: int,
    sel: Selection,
    *,
    group: bool,
    bot_username: str,
    app: MiniApp | None = None,
) -> Screen:
    """``user``'s hand message (:func:`telegram_bot.views.hand.hand_screen`) in his
    language; ``group``: his hand is the ephemeral one in the group -- it carries
    the flood hint (#24, :meth:`telegram_bot.publishing.publisher.Publisher.held_back`)
    for the rest of the game once he was given it.  ``app``: the Mini App (#42;
    None: off), which its last row opens."""
    lang = snap.ui.langs.get(user, "en")
    hinted = group and snap.ui.flood_hints.get(user) == snap.table.game_no
    link = deep_link(bot_username, snap.table.id) if hinted else None
    return hand_screen(snap, seat, lang, sel, private_link=link, app=app, in_group=group)


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
        bot_username: str,
        app: MiniApp | None = None,
    ) -> None:
        self.svc = svc
        self.app = app  # the Mini App its hands open (#42; None: off)
        self.snapshots = snapshots
        self.ui = ui
        self.delivery = delivery
        self.bot_username = bot_username
        self.later: list[tuple[str, int]] = []  # ephemeral hands to send (game starts)
        self.fallbacks: set[asyncio.Task[None]] = set()  # see watch()

    async def show_in_group(
        self, table_id: str, user: int, press: PressReply | None = None
    ) -> None:
        """Show ``user``'s hand in the group, to him alone (he pressed *My cards*,
        ``press``, already answered; None at a game's start).  Rendered and sent
        outside the table's lock -- the send may wait for the group's flood
        tokens (#28) --, then placed (:meth:`_place`).  Should the group
        refuse it: his private hand, or a message in the group naming him."""
        screen = await self._screen(table_id, user, group=True)
        if screen is None:
            return
        snap, seat, text, markup = screen
        group, thread = group_of(snap.table), snap.table.thread
        if group is None or snap.table.seats[seat].left or snap.table.status != PLAYING:
            return
        msg: Message | None = None
        try:  # in the table's topic of a forum group (``thread``), as the table
            if press is None:
                params = EphemeralMessageParameters(receiver_user_id=user)
                msg = await self.delivery.send(group, text, markup, ephemeral=params, thread=thread)
            else:
                params = EphemeralMessageParameters(
                    receiver_user_id=user, callback_query_id=press.query_id
                )
                msg = await self.delivery.send_reply(
                    group, text, markup, params, fresh_until=press.fresh_until, thread=thread
                )
        except TelegramAPIError as e:
            log.info("no ephemeral hand for %s in %s: %s", user, group, e.message)
        await self.ui.set_prefs(user, plays=GROUP)  # where he last pressed
        if msg is None or not msg.ephemeral_message_id:
            await self._private(table_id, user, (group, thread), text, markup)
            return
        await self._place(table_id, user, -msg.ephemeral_message_id, (text, markup))

    async def _screen(
        self, table_id: str, user: int, *, group: bool = False
    ) -> tuple[Snapshot, int, str, InlineKeyboardMarkup | None] | None:
        """His hand as it is now (no lock: :meth:`_place` brings it up to date) --
        ``group``: to show in the group (:func:`hand_view`); None when he has no
        seat there or no game is on."""
        try:
            snap = await self.snapshots.load(table_id)
        except LiveError:
            return None
        t = snap.table
        seat = t.seat_of(user)
        if seat is None or snap.loaded.state is None:
            return None
        lang = (await self.snapshots.langs(t, snap.ui)).get(user, "en")
        snap.ui.langs.setdefault(user, lang)
        sel = Selection.from_json(snap.ui.selections.get(user))  # its revision too
        text, markup = hand_view(
            snap, seat, user, sel, group=group, bot_username=self.bot_username, app=self.app
        )
        return snap, seat, text, markup

    async def _place(
        self,
        table_id: str,
        user: int,
        new: int,
        shown: Screen,
        *,
        expect: object = ANY_HAND,
    ) -> bool:
        """Record ``new`` as ``user``'s hand (a private message id, or minus an
        ephemeral one) the moment it went out, by compare-and-set in Redis -- only
        while his hand is ``expect`` (if given; else False, nothing recorded).
        Renders from then on edit ``new``; no table lock is taken, so nothing
        waits for flood tokens under it (#28).  ``new`` was sent showing
        ``shown``: should the table have moved on meanwhile (a render read the
        old hand), an edit (queued) brings it up to date.  The hand it replaces:
        an ephemeral one is deleted (its pending edits dropped), a private one
        becomes a note when the hand went to the group."""
        placed, old = await self.ui.swap_hand(table_id, user, new, expect)
        if not placed:
            return False
        try:
            snap = await self.snapshots.load(table_id)
        except LiveError:
            return True
        t = snap.table
        group, seat = group_of(t), t.seat_of(user)
        lang = (await self.snapshots.langs(t, snap.ui)).get(user, "en")
        snap.ui.langs.setdefault(user, lang)
        current = snap.ui.hands.get(user) == new
        if current and seat is not None and snap.loaded.state is not None:
            sel = Selection.from_json(snap.ui.selections.get(user))
            to = Address(*hand_target(user, new, group))
            fresh = hand_view(
                snap,
                seat,
                user,
                sel,
                group=to.ephemeral,
                bot_username=self.bot_username,
                app=self.app,
            )
            if fresh != shown:
                version = table_version(table_id, snap.version)
                await self.delivery.edit(to, *fresh, Urgency.SOON, version=version)
        was = None if old is None else Address(*hand_target(user, old, group))
        if was is not None and was.ephemeral and old != new:
            await self.delivery.delete_ephemeral(was, table_id)
        elif old is not None and old > 0 and new < 0:  # his private hand: no more edits
            await self._moved(table_id, user, old, lang)
        elif old is not None and old > 0 and new > 0 and old != new:
            await self._retired(user, old, lang)
        return True

    async def _retired(self, user: int, msg: int, lang: str) -> None:
        """His old private hand ``msg`` after *Open my table* sent a new one: a
        line saying where his cards are, no buttons -- a press on it would only
        draw "not your current hand message" (#29).  SOON: it replaces any hand
        edit of that message still pending."""
        _ = Translator(lang)
        try:
            await self.delivery.edit(
                Address(user, msg), _(texts.HAND_MOVED_DOWN), None, Urgency.SOON
            )
        except TelegramAPIError as e:  # best effort: the new hand is there already
            log.info("old private hand %s of %s stays: %s", msg, user, e.message)

    def queue(self, table_id: str, user: int) -> None:
        """His hand goes to the group once the game's start is rendered."""
        self.later.append((table_id, user))

    async def send_later(self) -> None:
        """The ephemeral hands a game start left to send (outside the table's lock)."""
        while self.later:
            table_id, user = self.later.pop(0)
            await self.show_in_group(table_id, user, None)

    def watch(self, done: asyncio.Future[bool], table_id: str, hand: Address) -> None:
        """Once the edit of an ephemeral ``hand`` settles: if it failed,
        :meth:`fall_back` (a task kept here)."""
        assert hand.receiver is not None
        assert hand.message is not None
        user, stored = hand.receiver, -hand.message  # as the chat state keeps it

        def settled(future: asyncio.Future[bool]) -> None:
            if future.cancelled() or future.result():
                return
            task = asyncio.get_running_loop().create_task(self.fall_back(table_id, user, stored))
            self.fallbacks.add(task)
            task.add_done_callback(self.fallbacks.discard)

        done.add_done_callback(settled)

    async def open_private(self, table_id: str, user: int) -> None:
        """He opened his cards in private (the deep link): his hand there from now
        on (the ephemeral one is deleted, :meth:`_place`)."""
        await self.ui.set_prefs(user, plays=PRIVATE)
        await self.resend(user, table_id=table_id, again=True)

    async def resend(self, user: int, *, table_id: str = "", again: bool = False) -> bool:
        """``user`` can be written to again (he unblocked the bot): a game he sits
        at (``table_id``, else where he sits) gets a new hand message in private
        (with the take-back button if the AI plays) -- if it has none, or
        ``again`` (he asked for his table: the new message replaces the old one).
        Sent outside the table's lock (it may wait for flood tokens, #28), then
        placed.  True when sent."""
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
        screen = await self._screen(table.id, user)
        if screen is None:
            return False
        snap, _seat, text, markup = screen
        old = snap.ui.hands.get(user)
        if old and not again:
            return False
        msg = await self.delivery.send(user, text, markup)
        if msg is None:
            return False
        await self._place(table.id, user, msg.message_id, (text, markup), **_expect(old, again))
        return True

    async def note_left(self, c: LeftNoted) -> None:
        """He left mid-game: one message says so, with *Take my seat back* while the
        game lasts (issue 13) -- his hand message, or a new one in his private
        chat if he has none (a reply to his /leave there, #41)."""
        _ = Translator(c.locale)
        text = _(texts.LEFT_GAME)
        markup: InlineKeyboardMarkup | None = take_back_keyboard(c.table.id, _(texts.TAKE_BACK))
        if c.over:  # the AI played the game out (no human left): say how to go on (#29)
            text, markup = _(texts.LEFT_OVER), None
        msg = (await self.ui.table(c.table.id)).hands.get(c.user)
        if msg is None:
            await self.delivery.send(c.user, text, markup, reply_to=c.reply_to)
            return
        to = Address(*hand_target(c.user, msg, group_of(c.table)))
        await self.delivery.edit(to, text, markup, urgency=Urgency.NOW)

    async def fall_back(self, table_id: str, user: int, failed: int) -> None:
        """An edit of ``user``'s ephemeral hand ``failed``: his private hand instead
        (or, if he never started the bot, a link to it in the group)."""
        screen = await self._screen(table_id, user)
        if screen is None:
            return
        snap, _seat, text, markup = screen
        group = group_of(snap.table)
        if snap.ui.hands.get(user) != failed or group is None:
            return  # already replaced
        where = (group, snap.table.thread)
        await self._private(table_id, user, where, text, markup, expect=failed)

    async def _private(
        self,
        table_id: str,
        user: int,
        where: tuple[int, int | None],
        text: str,
        markup: InlineKeyboardMarkup | None,
        *,
        expect: object = ANY_HAND,
    ) -> bool:
        """His hand in his private chat if he started the bot (True); else a message in
        the group naming him, with the deep link that opens it -- ``where``: the
        group and the table's topic there (None: none).  (Outside the table's
        lock: the sends may wait for flood tokens, #28.)"""
        group, thread = where
        prefs = await self.ui.prefs(user)
        if prefs.started:
            msg = await self.delivery.send(user, text, markup)
            if msg is not None:
                await self._place(table_id, user, msg.message_id, (text, markup), expect=expect)
                return True
        placed, old = await self.ui.swap_hand(table_id, user, None, expect)
        if not placed:
            return False
        if old is not None and old < 0:
            await self.delivery.delete_ephemeral(Address(group, -old, user), table_id)
        _ = Translator(prefs.lang or prefs.tg or "en")
        name = user_text(prefs.name or str(user))
        link = url_keyboard("🔒 " + _(texts.OPEN_MY_CARDS), deep_link(self.bot_username, table_id))
        await self.delivery.send(group, _(texts.CARDS_OPEN_PRIVATE, name=name), link, thread=thread)
        return False

    async def _moved(self, table_id: str, user: int, msg: int, lang: str) -> None:
        """His private hand ``msg`` is no longer edited: it becomes a note (no card,
        no card button) with the deep link that brings his cards back there.  SOON:
        it replaces any hand edit of that message still pending."""
        _ = Translator(lang)
        link = url_keyboard("🔒 " + _(texts.OPEN_MY_CARDS), deep_link(self.bot_username, table_id))
        try:
            await self.delivery.edit(Address(user, msg), _(texts.CARDS_MOVED), link, Urgency.SOON)
        except TelegramAPIError as e:  # best effort: his cards are in the group already
            log.info("old private hand %s of %s stays: %s", msg, user, e.message)
