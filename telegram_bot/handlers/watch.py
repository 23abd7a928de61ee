"""Spectators (issue #16): *Watch* under a group's table message and
``/watch CODE`` in the private chat (:mod:`telegram_bot.usecases.watch`)."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, Message

from telegram_bot.buttons.callbacks import WatchCb
from telegram_bot.handlers.common import answer
from telegram_bot.usecases.cases import UseCases
from telegram_bot.usecases.watch import WatchStatus
from telegram_bot.views.fair import WATCH_ANSWERS, WATCH_HOW
from telegram_bot.views.i18n import Translator

router = Router(name=__name__)


@router.callback_query(WatchCb.filter())
async def watch_button(
    callback: CallbackQuery,
    callback_data: WatchCb,
    cases: UseCases,
    locale: str,
    _: Translator,
) -> None:
    user = callback.from_user.id
    status = await cases.watch(callback_data.table, user, locale)
    # a toast where nothing was refused: he watches, or he plays there (#29)
    modal = status not in (WatchStatus.WATCHING, WatchStatus.SEATED)
    await answer(callback, _(WATCH_ANSWERS[status]), show_alert=modal)


@router.message(Command("watch"))
async def watch_command(
    message: Message,
    command: CommandObject,
    cases: UseCases,
    locale: str,
    _: Translator,
) -> None:
    code = (command.args or "").strip()
    if message.chat.type != "private" or not code or message.from_user is None:
        await message.answer(_(WATCH_HOW))
        return
    status = await cases.watch(code, message.from_user.id, locale)
    if status != WatchStatus.WATCHING:
        await message.answer(_(WATCH_ANSWERS[status]))


__all__ = ["router"]
