"""/start (welcome), ``/start <code>`` (a deep link: join that lobby), /help."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.filters import Command, CommandObject, CommandStart
from aiogram.types import Message

from engine import EngineError
from engine.live import OPEN, PLAYING, LiveError, TableService
from telegram_bot import texts
from telegram_bot.callbacks import CODE_PATTERN
from telegram_bot.chat_state import ChatStateStore as UiStore
from telegram_bot.delivery_api import Delivery
from telegram_bot.handlers.common import join_lobby
from telegram_bot.i18n import Translator, help_text
from telegram_bot.keyboards import url_keyboard
from telegram_bot.publisher import Publisher
from telegram_bot.render_lobby import render_lobby

router = Router(name=__name__)


@router.message(
    CommandStart(deep_link=True, magic=F.args.regexp(CODE_PATTERN)), F.chat.type == "private"
)
async def start_with_code(
    message: Message,
    command: CommandObject,
    svc: TableService,
    ui: UiStore,
    publisher: Publisher,
    delivery: Delivery,
    locale: str,
    _: Translator,
) -> None:
    """Someone opened ``t.me/<bot>?start=<code>``: seat him at that lobby."""
    user = message.from_user
    assert user is not None and command.args
    code = command.args
    try:
        table = await svc.lobby(code)
    except LiveError:
        await message.answer(_(texts.NO_SUCH_LOBBY))
        return
    if table.seat_of(user.id) is not None and table.status == PLAYING:
        await message.answer(_(texts.GAME_STARTED_PRIVATE))
        await publisher.refresh(code, seats=[table.seat_of(user.id) or 0], actor=user.id)
        return
    try:
        table = await join_lobby(svc, publisher, ui, code, user, locale)
    except EngineError as e:
        await message.answer(texts.refusal(e, _))
        return
    await message.answer(_(texts.JOINED))
    if table.status == OPEN and (table.chat is None or table.chat > 0):
        # a private lobby: every player keeps a copy of the lobby message
        text, markup = render_lobby(table, locale=locale, bot_username=publisher.bot_username)
        sent = await delivery.send(user.id, text, markup)
        if sent is not None:
            await ui.update_table(code, lobby_messages={user.id: sent.message_id})


@router.message(CommandStart())
async def start(
    message: Message, _: Translator, locale: str, chat_locale: str, publisher: Publisher
) -> None:
    if message.chat.type != "private":  # in a group: the group's language
        await message.answer(Translator(chat_locale)(texts.GREETING))
        return
    link = f"https://t.me/{publisher.bot_username}?startgroup=new"
    await message.answer(
        _(texts.WELCOME) + "\n\n" + help_text(locale),
        reply_markup=url_keyboard("➕ " + _(texts.ADD_TO_GROUP), link),
    )


@router.message(Command("help"))
async def help_command(message: Message, chat_locale: str) -> None:
    """In a group the group's language (/lang there), else the user's."""
    await message.answer(help_text(chat_locale))
