"""LobbyActions: ``/new [game]`` (in a group: a lobby message there; in a private chat:
a private lobby with its invitation link) and the lobby message's buttons
(Join, Leave, Add/Remove AI, Settings, Start, Cancel) and Rematch -- carried out
by :class:`telegram_bot.usecases.lobby.LobbyActions`."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, Message

from telegram_bot.buttons.callbacks import LobbyCb, NewLobbyCb
from telegram_bot.handlers.common import (
    answer,
    finish_press,
    open_lobby_at,
    parse_variant,
    player,
    reply,
)
from telegram_bot.publishing.changes import Shows
from telegram_bot.settings import Settings
from telegram_bot.usecases.cases import UseCases
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator

router = Router(name=__name__)


@router.message(Command("new"))
async def new_lobby(
    message: Message,
    command: CommandObject,
    cases: UseCases,
    settings: Settings,
    locale: str,
    chat_locale: str,
    publisher: Shows,
    _: Translator,
) -> None:
    if message.from_user is None:
        return
    variant = parse_variant(command.args)
    if variant is None:
        await message.answer(_(texts.UNKNOWN_GAME))
        return
    deps = (cases.lobby, settings)
    outcome = await open_lobby_at(message, message.from_user, variant, deps, locale, chat_locale)
    await reply(message, outcome, _, publisher)


@router.callback_query(NewLobbyCb.filter())
async def new_lobby_button(
    callback: CallbackQuery,
    callback_data: NewLobbyCb,
    cases: UseCases,
    settings: Settings,
    locale: str,
    chat_locale: str,
    publisher: Shows,
    _: Translator,
) -> None:
    """ "Open a lobby here" (the group's answer to /play)."""
    message = callback.message
    if not isinstance(message, Message):
        await answer(callback, _(texts.BAD_BUTTON), show_alert=True)
        return
    deps = (cases.lobby, settings)
    user = callback.from_user
    outcome = await open_lobby_at(message, user, callback_data.variant, deps, locale, chat_locale)
    if outcome.error is not None:
        await answer(callback, texts.refusal(outcome.error, _, message.chat.id), show_alert=True)
    else:
        await answer(callback)
    await publisher.show(*outcome.changes)


@router.callback_query(LobbyCb.filter())
async def lobby_button(
    callback: CallbackQuery,
    callback_data: LobbyCb,
    cases: UseCases,
    locale: str,
    publisher: Shows,
    _: Translator,
) -> None:
    message = callback.message
    where = (message.chat.id, message.message_id) if message is not None else None
    outcome = await cases.lobby.press(
        callback_data,
        player(callback.from_user, locale),
        where,
        request_id=f"cb{callback.id}"[:64],
    )
    await finish_press(callback, outcome, _, publisher)
