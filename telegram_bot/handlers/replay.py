"""Replays (issue #16): ``/replay`` lists one's recent finished games (in the
private chat); a *Replay* button under a game's result opens it there; ◀ ▶ ⏮ ⏭
step through it by editing that message (:mod:`telegram_bot.usecases.replay`);
*Check the deal* sends the game's seed and how to check it there (#29)."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import CallbackQuery, InlineKeyboardButton, InlineKeyboardMarkup, Message

from telegram_bot.buttons.callbacks import ReplayCb, ReplayOp
from telegram_bot.handlers.common import answer
from telegram_bot.publishing.changes import Shows
from telegram_bot.usecases.cases import UseCases
from telegram_bot.usecases.replay import ReplayStatus
from telegram_bot.views.fair import CHECK_SENT, CHECK_SHORT
from telegram_bot.views.i18n import Translator
from telegram_bot.views.miniapp import MiniApp, player_button
from telegram_bot.views.replay import (
    EXPIRED,
    IN_PRIVATE,
    NO_GAMES,
    NOT_YOURS,
    PICK_GAME,
    SENT,
    START_FIRST,
    replay_label,
)

router = Router(name=__name__)


@router.message(Command("replay"))
async def replay_command(
    message: Message, cases: UseCases, miniapp: MiniApp | None, _: Translator
) -> None:
    if message.chat.type != "private":
        await message.answer(_(IN_PRIVATE))
        return
    if message.from_user is None:
        return
    rows = [
        [InlineKeyboardButton(text=replay_label(record, _), callback_data=open_data(table, game))]
        for table, game, record in await cases.replay.recent(message.from_user.id)
    ]
    if not rows:
        await message.answer(_(NO_GAMES, days=cases.replay.days))
        return
    if miniapp is not None:  # #42: his games and ratings in the Mini App
        rows.append([player_button(miniapp, _)])
    await message.answer(_(PICK_GAME), reply_markup=InlineKeyboardMarkup(inline_keyboard=rows))


def open_data(table: str, game: int) -> str:
    return ReplayCb(table=table, game=game, step=0, op=ReplayOp.OPEN).pack()


@router.callback_query(ReplayCb.filter())
async def replay_button(
    callback: CallbackQuery,
    callback_data: ReplayCb,
    cases: UseCases,
    publisher: Shows,
    locale: str,
    _: Translator,
) -> None:
    user = callback.from_user.id
    cb, message = callback_data, callback.message
    in_private = message is not None and message.chat.id == user
    if cb.op == ReplayOp.CHECK:  # #29
        checked, seed = await cases.replay.check(cb.table, cb.game, user, locale)
        if checked is ReplayStatus.EXPIRED:
            await answer(callback, _(EXPIRED, days=cases.replay.days), show_alert=True)
        elif seed is not None:
            await answer(callback, _(CHECK_SHORT, seed=seed), show_alert=True)
        else:
            await answer(callback, None if in_private else _(CHECK_SENT))
        return
    edit = (
        message.message_id
        if message is not None and in_private and cb.op == ReplayOp.STEP
        else None
    )
    status, change = await cases.replay.show(cb.table, cb.game, cb.step, user, locale, edit=edit)
    if status is ReplayStatus.EXPIRED:
        await answer(callback, _(EXPIRED, days=cases.replay.days), show_alert=True)
    elif status is ReplayStatus.NOT_YOURS:
        await answer(callback, _(NOT_YOURS), show_alert=True)
    elif status is ReplayStatus.START_FIRST:
        await answer(callback, _(START_FIRST), show_alert=True)
    else:
        await answer(callback, None if in_private else _(SENT))
    await publisher.show(change)


__all__ = ["router"]
