"""Inline mode: ``@bot <code>`` (the lobby's Share button) answers with an
invitation card whose Join button opens the private chat and seats the friend."""

from __future__ import annotations

from aiogram import Router
from aiogram.types import InlineQuery, InlineQueryResultArticle, InputTextMessageContent

from telegram_bot.usecases.cases import UseCases
from telegram_bot.views.i18n import INVITE_TITLES, Translator
from telegram_bot.views.lobby import render_invite

router = Router(name=__name__)


@router.inline_query()
async def invite(
    query: InlineQuery, cases: UseCases, bot_username: str, locale: str, _: Translator
) -> None:
    table = await cases.standings.invitation(query.query.strip(), query.from_user.id)
    if table is None:
        await query.answer([], cache_time=0, is_personal=True)
        return
    text, markup = render_invite(table, locale=locale, bot_username=bot_username)
    article = InlineQueryResultArticle(
        id=table.id,
        title=_(INVITE_TITLES[table.variant]),
        description=_("lobby {code}", code=table.id),
        input_message_content=InputTextMessageContent(message_text=text, parse_mode="HTML"),
        reply_markup=markup,
    )
    await query.answer([article], cache_time=0, is_personal=True)
