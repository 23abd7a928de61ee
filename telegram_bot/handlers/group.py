"""The bot's own membership: added to a group -> a two-line how-to; removed
from one (left, or kicked) -> the group's arena and tables stop, their players
told in private (#38) -- a rated game of the user who removed it is forfeited
by him (:meth:`tables.groups.Groups.close`); a group that became a supergroup (the service messages
with ``migrate_to_chat_id`` and ``migrate_from_chat_id``) -> the same for the
old id, and a word in the supergroup; a user blocks or unblocks the bot ->
remember whether it may write to him (blocked mid-game: the AI plays his seat
at once, as after a 403; unblocked mid-game: a new hand message, from which he
may take his seat back)."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.filters import JOIN_TRANSITION, LEAVE_TRANSITION, ChatMemberUpdatedFilter
from aiogram.types import ChatMemberUpdated, Message

from telegram_bot.publishing.changes import Shows
from telegram_bot.usecases.cases import UseCases
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator

router = Router(name=__name__)


@router.my_chat_member(ChatMemberUpdatedFilter(JOIN_TRANSITION))
async def added(
    event: ChatMemberUpdated, cases: UseCases, chat_locale: str, publisher: Shows
) -> None:
    if event.chat.type == "private":  # he (re)started or unblocked the bot
        await publisher.show(await cases.player.started(event.chat.id))
        return
    await event.answer(Translator(chat_locale)(texts.GREETING))


@router.my_chat_member(ChatMemberUpdatedFilter(LEAVE_TRANSITION))
async def removed(event: ChatMemberUpdated, cases: UseCases, publisher: Shows) -> None:
    if event.chat.type == "private":  # he blocked the bot
        await cases.player.blocked(event.chat.id)
        return
    # removed or kicked from a group (#38): nothing of it may go on; the user
    # who did it forfeits a rated game he plays there (his act, not a fault)
    outcome = await cases.arena.removed(event.chat.id, event.chat.title or "", event.from_user.id)
    await publisher.show(*outcome.changes)


@router.message(F.migrate_to_chat_id)
async def upgraded(message: Message, cases: UseCases, publisher: Shows) -> None:
    """In the old group: it lives on as the supergroup ``migrate_to_chat_id`` (#38)."""
    new = message.migrate_to_chat_id
    assert new is not None  # the filter
    outcome = await cases.arena.upgraded(message.chat.id, new, message.chat.title or "")
    await publisher.show(*outcome.changes)


@router.message(F.migrate_from_chat_id)
async def upgraded_here(message: Message, cases: UseCases, publisher: Shows) -> None:
    """In the supergroup: the same, should the old group's message be missed."""
    old = message.migrate_from_chat_id
    if old is None:
        return
    outcome = await cases.arena.upgraded(old, message.chat.id, message.chat.title or "")
    await publisher.show(*outcome.changes)
