"""The bot's own membership: added to a group -> a two-line how-to; a user
blocks or unblocks the bot -> remember whether it may write to him (blocked
mid-game: the AI plays his seat at once, as after a 403; unblocked mid-game: a
new hand message, from which he may take his seat back)."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import JOIN_TRANSITION, LEAVE_TRANSITION, ChatMemberUpdatedFilter
from aiogram.types import ChatMemberUpdated

from telegram_bot.publishing.hands import HandPlacement
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.usecases.delivery_events import DeliveryEvents
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator

router = Router(name=__name__)


@router.my_chat_member(ChatMemberUpdatedFilter(JOIN_TRANSITION))
async def added(
    event: ChatMemberUpdated, prefs: PrefsCache, chat_locale: str, hands: HandPlacement
) -> None:
    if event.chat.type == "private":  # he (re)started or unblocked the bot
        await prefs.update(event.chat.id, started=True)
        await hands.resend(event.chat.id)  # mid-game: his cards again
        return
    await event.answer(Translator(chat_locale)(texts.GREETING))


@router.my_chat_member(ChatMemberUpdatedFilter(LEAVE_TRANSITION))
async def removed(
    event: ChatMemberUpdated, prefs: PrefsCache, delivery_events: DeliveryEvents
) -> None:
    if event.chat.type == "private":  # he blocked the bot
        await prefs.update(event.chat.id, started=False)
        # his hand cannot reach him: the AI plays his seat now -- waiting for the next
        # 403 would stall a game that waits for his move (and has no turn timer)
        await delivery_events.forbidden(event.chat.id)
