"""What the delivery reports back about a chat: a player the bot may no longer
write to (403: he blocked it, or left the group) -- the AI takes his seat and
his hand message is forgotten until he comes back
(:meth:`telegram_bot.publishing.hands.HandPlacement.resend`) -- and a message
that was gone and sent anew under a new id."""

from __future__ import annotations

import logging

from tables import PLAYING, LiveError, ServiceUnavailable, TableService
from telegram_bot.state.chat_state import ChatStateStore

log = logging.getLogger(__name__)


class DeliveryEvents:
    def __init__(self, svc: TableService, ui: ChatStateStore) -> None:
        self.svc = svc
        self.ui = ui

    async def forbidden(self, user: int) -> None:
        """The bot may no longer write to ``user`` (403, or he blocked it): the AI
        plays his seat, and his hand message is forgotten -- no more edits that
        could only fail -- until he comes back."""
        table = await self.svc.tables.where(user)
        if table is None or table.status != PLAYING:
            return
        seat = table.seat_of(user)
        if seat is None:
            return
        if not table.seats[seat].ai_controlled:
            try:
                await self.svc.admin.admin_hand_to_ai(table.id, seat, by="bot:forbidden")
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
