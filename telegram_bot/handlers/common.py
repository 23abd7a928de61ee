"""Helpers shared by the handler modules: joining a lobby (from a button or a
deep link), posting a lobby message, variant names in commands."""

from __future__ import annotations

from aiogram.types import CallbackQuery, Message, User

from engine.live import OPEN, LiveError, Table, TableService
from telegram_bot.chat_state import ChatStateStore as UiStore
from telegram_bot.delivery_api import Delivery
from telegram_bot.i18n import Translator
from telegram_bot.middlewares import display_name
from telegram_bot.publisher import Publisher
from telegram_bot.render_lobby import render_lobby

VARIANT_WORDS = {
    "chuvash": "chuvash",
    "c": "chuvash",
    "rooster": "chuvash",
    "чуваш": "chuvash",
    "чувашский": "chuvash",
    "петух": "chuvash",
    "shchelkovsky": "shchelkovsky",
    "s": "shchelkovsky",
    "durak": "shchelkovsky",
    "щелковский": "shchelkovsky",
    "щёлковский": "shchelkovsky",
    "дурак": "shchelkovsky",
}


def parse_variant(args: str | None) -> str | None:
    """``/new [game]``: the variant named (default chuvash), or None if unknown."""
    word = (args or "").strip().split(maxsplit=1)[0].lower() if (args or "").strip() else ""
    if not word:
        return "chuvash"
    return VARIANT_WORDS.get(word)


async def post_lobby(
    publisher: Publisher,
    delivery: Delivery,
    table: Table,
    chat_id: int,
    locale: str,
    *,
    user: int,
    group_lang: str | None = None,
) -> None:
    """Send the lobby message to ``chat_id`` and remember it."""
    text, markup = render_lobby(table, locale=locale, bot_username=publisher.bot_username)
    msg = await delivery.send(chat_id, text, markup)
    await publisher.ui.update_table(
        table.id,
        lobby_messages={chat_id: msg.message_id} if msg is not None else None,
        langs={user: locale},
        group_lang=group_lang,
    )


async def join_lobby(
    svc: TableService,
    publisher: Publisher,
    ui: UiStore,
    code: str,
    user: User,
    locale: str,
) -> Table:
    """Seat ``user`` at the lobby (LiveError when refused); remember his language;
    re-render the lobby messages."""
    result = await svc.join(code, user.id, display_name(user))
    await ui.update_table(code, langs={user.id: locale})
    await publisher.refresh(code, actor=user.id)
    return result.table


async def answer_error(
    event: CallbackQuery | Message, error: LiveError | Exception, text: str
) -> None:
    if isinstance(event, CallbackQuery):
        await event.answer(text, show_alert=True)
    else:
        await event.answer(text)


def is_open(table: Table) -> bool:
    return table.status == OPEN


def tr(locale: str) -> Translator:
    return Translator(locale)
