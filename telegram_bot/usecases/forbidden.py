"""A player the bot may no longer write to (403: he blocked it): the AI takes
his seat and his hand message is forgotten until he comes back
(:meth:`telegram_bot.publishing.publisher.Publisher.resend_hand`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from tables import PLAYING, LiveError

if TYPE_CHECKING:
    from telegram_bot.publishing.publisher import Publisher

log = logging.getLogger(__name__)


async def hand_to_ai(pub: Publisher, user: int) -> None:
    """The bot may no longer write to ``user`` (403, or he blocked it): the AI
    plays his seat, and his hand message is forgotten -- no more edits that
    could only fail -- until he comes back (:meth:`resend_hand`)."""
    table = await pub.svc.tables.where(user)
    if table is None or table.status != PLAYING:
        return
    seat = table.seat_of(user)
    if seat is None:
        return
    if not table.seats[seat].ai_controlled:
        try:
            await pub.svc.admin.admin_hand_to_ai(table.id, seat, by="bot:forbidden")
        except LiveError:
            log.warning("could not hand %s's seat at %s to the AI", user, table.id)
            return  # his hand message stays: the next failing write tries again
        # the write is published on the notify channel: every process re-renders
    await pub.ui.update_table(table.id, drop_hands=[user])
