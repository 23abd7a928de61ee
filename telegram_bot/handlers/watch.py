"""Spectators (issue #16): *Watch* under a group's table message and
``/watch CODE`` in the private chat (:mod:`telegram_bot.usecases.watch`)."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, Message

from telegram_bot.buttons.callbacks import WatchCb
from telegram_bot.delivery import Delivery
from telegram_bot.handlers.common import answer
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.snapshot import Snapshots
from telegram_bot.usecases.watch import WatchStatus, watch
from telegram_bot.views.fair import WATCH_ANSWERS, WATCH_HOW
from telegram_bot.views.i18n import Translator

router = Router(name=__name__)


@router.callback_query(WatchCb.filter())
async def watch_button(
    callback: CallbackQuery,
    callback_data: WatchCb,
    snapshots: Snapshots,
    ui: ChatStateStore,
    delivery: Delivery,
    locale: str,
    _: Translator,
) -> None:
    user = callback.from_user.id
    status = await watch(callback_data.table, user, locale, snapshots, ui, delivery)
    await answer(callback, _(WATCH_ANSWERS[status]), show_alert=status != WatchStatus.WATCHING)


@router.message(Command("watch"))
async def watch_command(
    message: Message,
    command: CommandObject,
    snapshots: Snapshots,
    ui: ChatStateStore,
    delivery: Delivery,
    locale: str,
    _: Translator,
) -> None:
    code = (command.args or "").strip()
    if message.chat.type != "private" or not code or message.from_user is None:
        await message.answer(_(WATCH_HOW))
        return
    status = await watch(code, message.from_user.id, locale, snapshots, ui, delivery)
    if status != WatchStatus.WATCHING:
        await message.answer(_(WATCH_ANSWERS[status]))


__all__ = ["router"]
