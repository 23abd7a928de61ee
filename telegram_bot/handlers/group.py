"""The bot's own membership: added to a group -> a two-line how-to; a user
blocks or unblocks the bot -> remember whether it may write to him (blocked
mid-game: the AI plays his seat at once, as after a 403; unblocked mid-game: a
new hand message, from which he may take his seat back)."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import JOIN_TRANSITION, LEAVE_TRANSITION, ChatMemberUpdatedFilter
from aiogram.types import ChatMemberUpdated

from telegram_bot.publishing.publisher import Publisher
from telegram_bot.usecases.cases import UseCases
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator

router = Router(name=__name__)


@router.my_chat_member(ChatMemberUpdatedFilter(JOIN_TRANSITION))
async def added(
    event: ChatMemberUpdated, cases: UseCases, chat_locale: str, publisher: Publisher
) -> None:
    if event.chat.type == "private":  # he (re)started or unblocked the bot
        await publisher.show(await cases.player.started(event.chat.id))
        return
    await event.answer(Translator(chat_locale)(texts.GREETING))


@router.my_chat_member(ChatMemberUpdatedFilter(LEAVE_TRANSITION))
async def removed(event: ChatMemberUpdated, cases: UseCases) -> None:
    if event.chat.type == "private":  # he blocked the bot
        await cases.player.blocked(event.chat.id)
