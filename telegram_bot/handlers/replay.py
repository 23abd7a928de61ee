"""Replays (issue #16): ``/replay`` lists one's recent finished games (in the
private chat); a *Replay* button under a game's result opens it there; ◀ ▶ ⏮ ⏭
step through it by editing that message (:mod:`telegram_bot.usecases.replay`)."""

from __future__ import annotations

import contextlib

from aiogram import Bot, Router
from aiogram.exceptions import TelegramBadRequest, TelegramForbiddenError
from aiogram.filters import Command
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message

from tables import LiveError, TableService
from telegram_bot.buttons.callbacks import ReplayCb, ReplayOp
from telegram_bot.handlers.common import answer
from telegram_bot.usecases.replay import replay_step
from telegram_bot.views.i18n import Translator
from telegram_bot.views.replay import (
    EXPIRED,
    IN_PRIVATE,
    NO_GAMES,
    NOT_YOURS,
    PICK_GAME,
    SENT,
    START_FIRST,
    render_replay,
    replay_label,
)

router = Router(name=__name__)


def _days(svc: TableService) -> int:
    return max(1, round(svc.config.replay_ttl / 86400))


@router.message(Command("replay"))
async def replay_command(message: Message, svc: TableService, locale: str, _: Translator) -> None:
    if message.chat.type != "private":
        await message.answer(_(IN_PRIVATE))
        return
    if message.from_user is None:
        return
    rows: list[list[InlineKeyboardButton]] = []
    for table, game in await svc.replays.recent(message.from_user.id):
        try:
            record = await svc.replays.record(table, game)
        except LiveError as e:
            if e.code == "no_record":
                continue  # expired since
            raise
        data = ReplayCb(table=table, game=game, step=0, op=ReplayOp.OPEN).pack()
        rows.append([InlineKeyboardButton(text=replay_label(record, _), callback_data=data)])
    if not rows:
        await message.answer(_(NO_GAMES, days=_days(svc)))
        return
    await message.answer(_(PICK_GAME), reply_markup=InlineKeyboardMarkup(inline_keyboard=rows))


@router.callback_query(ReplayCb.filter())
async def replay_button(
    callback: CallbackQuery,
    callback_data: ReplayCb,
    svc: TableService,
    bot: Bot,
    locale: str,
    _: Translator,
) -> None:
    user = callback.from_user.id
    cb = callback_data
    try:
        step = await replay_step(svc, cb.table, cb.game, cb.step, user)
    except LiveError as e:
        if e.code == "no_record":
            await answer(callback, _(EXPIRED, days=_days(svc)), show_alert=True)
        elif e.code == "not_allowed":
            await answer(callback, _(NOT_YOURS), show_alert=True)
        else:
            raise
        return
    text, markup = render_replay(step, locale=locale)
    message = callback.message
    if cb.op == ReplayOp.STEP and message is not None and message.chat.id == user:
        await answer(callback)
        with contextlib.suppress(TelegramBadRequest):  # "not modified": the same step again
            await bot.edit_message_text(
                text, chat_id=user, message_id=message.message_id, reply_markup=markup
            )
        return
    try:
        await bot.send_message(user, text, reply_markup=markup)
    except TelegramForbiddenError:
        await answer(callback, _(START_FIRST), show_alert=True)
        return
    in_private = message is not None and message.chat.id == user
    await answer(callback, None if in_private else _(SENT))


__all__ = ["router"]
