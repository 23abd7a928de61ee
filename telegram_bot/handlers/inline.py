"""Inline mode: ``@bot <code>`` (the lobby's Share button) answers with an
invitation card whose Join button opens the private chat and seats the friend."""

from __future__ import annotations

from aiogram import Router
from aiogram.types import InlineQuery, InlineQueryResultArticle, InputTextMessageContent

from engine import EngineError
from tables import OPEN, Table, TableService
from telegram_bot.buttons.callbacks import CODE_PATTERN
from telegram_bot.publishing.publisher import Publisher
from telegram_bot.views.i18n import INVITE_TITLES, Translator
from telegram_bot.views.lobby import render_invite

router = Router(name=__name__)


@router.inline_query()
async def invite(
    query: InlineQuery, svc: TableService, publisher: Publisher, locale: str, _: Translator
) -> None:
    code = query.query.strip()
    table: Table | None = None
    try:
        import re

        if re.match(CODE_PATTERN, code):
            table = await svc.lobbies.lobby(code)
        if table is None or table.status != OPEN:
            table = await svc.tables.where(query.from_user.id)
    except EngineError:
        table = None
    if table is None or table.status != OPEN:
        await query.answer([], cache_time=0, is_personal=True)
        return
    text, markup = render_invite(table, locale=locale, bot_username=publisher.bot_username)
    article = InlineQueryResultArticle(
        id=table.id,
        title=_(INVITE_TITLES[table.variant]),
        description=_("lobby {code}", code=table.id),
        input_message_content=InputTextMessageContent(message_text=text, parse_mode="HTML"),
        reply_markup=markup,
    )
    await query.answer([article], cache_time=0, is_personal=True)
