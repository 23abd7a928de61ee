"""What the delivery reports back about a chat: a player the bot may no longer
write to in private (403), and a message that was gone and sent anew under a
new id.

A 403 is told apart by Telegram's description (#38,
:class:`telegram_bot.delivery.events.Forbidden`):

* he blocked the bot, or his account was deleted -- his own act: the AI takes
  his seat (no offence of his, docs/RATINGS.md) and his hand message is
  forgotten until he comes back
  (:meth:`telegram_bot.publishing.hands.HandPlacement.resend`) -- unless he
  blocked it while his hand is in the group: his cards reach him there, only
  the private writes stop;
* the bot "can't initiate conversation" (he never pressed Start -- he may play
  with his hand in the group all the same), or any other 403 -- the bot's
  delivery trouble, never his act: it is remembered that the bot may not write
  to him in private (until he sends it something there, /start), and his seat
  and his hand in the group stay his.

A hand held back (:class:`telegram_bot.delivery.events.HeldBack`: his hand in
the group waited seconds for the chat's flood budget) is the bot's delivery
trouble too: if the game waits for him, his turn starts again, once a turn
(:meth:`tables.games.Games.view_late`)."""

from __future__ import annotations

import logging

from tables import PLAYING, LiveError, ServiceUnavailable, TableService
from telegram_bot.delivery.events import Forbidden, HeldBack
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.snapshot import group_of, hand_target

log = logging.getLogger(__name__)


class DeliveryEvents:
    def __init__(self, svc: TableService, ui: ChatStateStore) -> None:
        self.svc = svc
        self.ui = ui

    async def forbidden(self, user: int, kind: Forbidden) -> None:
        """The bot may not write to ``user`` in private (the caller remembered it
        in his preferences).  He blocked it or his account is gone: the AI plays
        his seat, and his hand message is forgotten -- no more edits that could
        only fail -- until he comes back.  Any other 403 (he never started the
        bot) is not his act: nothing more (#38)."""
        if kind not in (Forbidden.BLOCKED, Forbidden.DEACTIVATED):
            return
        table = await self.svc.tables.where(user)
        if table is None or table.status != PLAYING:
            return
        seat = table.seat_of(user)
        if seat is None:
            return
        hand = (await self.ui.table(table.id)).hands.get(user)
        if kind is Forbidden.BLOCKED and hand is not None:
            _chat, _msg, receiver = hand_target(user, hand, group_of(table))
            if receiver is not None:
                # his hand is in the group, where his cards still reach him:
                # only the private writes stop, the seat stays his (review2)
                return
        if not table.seats[seat].ai_controlled:
            try:
                # by the bot, not a leave of his: no offence, no cooldown (#38)
                by = f"bot:forbidden:{kind}"
                await self.svc.admin.admin_hand_to_ai(table.id, seat, by=by)
            except (LiveError, ServiceUnavailable):  # an outage too: never "gone" (#38)
                log.warning("could not hand %s's seat at %s to the AI", user, table.id)
                return  # his hand message stays: the next failing write tries again
            # the write is published on the notify channel: every process re-renders
        await self.ui.update_table(table.id, drop_hands=[user])

    async def replaced(self, chat: int, old: int, new: int) -> None:
        """Delivery sent a gone message anew: a hand message in a private chat gets
        its new id (a group's table message keeps being found by its table)."""
        if chat > 0:
            table = await self.svc.tables.where(chat)
            if table is not None:
                ui = await self.ui.table(table.id)
                if ui.hands.get(chat) == old:
                    await self.ui.update_table(table.id, hands={chat: new})

    async def held_back(self, held: HeldBack) -> None:
        """``held.to.receiver``'s hand in the group waited for the chat's flood
        budget: while the game waits for him, his turn starts again (once a
        turn; the write is announced, so every process shows its deadline)."""
        table_id = held.version.rpartition("#")[0]
        user = held.to.receiver
        if not table_id or user is None:
            return
        try:
            await self.svc.games.view_late(table_id, user)
        except (LiveError, ServiceUnavailable) as e:  # gone, or an outage: his next hold
            log.info("no late view for %s at %s: %s", user, table_id, e)
