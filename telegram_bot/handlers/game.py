"""Buttons of a player's hand message (:mod:`telegram_bot.usecases.press` decides
what a press does), taking a seat back from the AI, and "Open my table"."""

from __future__ import annotations

from aiogram import Router
from aiogram.types import CallbackQuery

from engine import EngineError
from tables import TableService
from telegram_bot.buttons.callbacks import CardsCb, GameCb, SeatCb, TableCb
from telegram_bot.delivery import Delivery
from telegram_bot.handlers.common import answer, player
from telegram_bot.publishing.group_hands import show_in_group
from telegram_bot.publishing.publisher import Publisher
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.usecases.player import open_table
from telegram_bot.usecases.press import ButtonPress, PressButton, PressOutcome, PressStatus
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator

router = Router(name=__name__)

ALERTS = {
    PressStatus.STALE: texts.STALE,
    PressStatus.NOT_SEATED: texts.REFUSALS["not_seated"],
    PressStatus.NOT_YOUR_MESSAGE: texts.NOT_YOUR_MESSAGE,
    PressStatus.AI_CONTROLLED: texts.REFUSALS["ai_controlled"],
    PressStatus.GAME_OVER: texts.REFUSALS["game_over"],
}
"""The alert (a msgid) of each refused press without a reason of its own."""


NOTICES = frozenset({PressStatus.STALE, PressStatus.ILLEGAL, PressStatus.NOT_YOUR_TURN})
"""Presses answered with a short notice (a toast that goes by itself), not a modal
alert: the fresh keyboard or the reason says enough (issue 13)."""


def alert(outcome: PressOutcome, _: Translator) -> str | None:
    """The text a press's outcome is answered with (None: a silent answer)."""
    if outcome.ok:
        return None
    if outcome.error is not None:
        return texts.refusal(outcome.error, _)
    if outcome.reason is not None:
        return _(texts.MOVE_REFUSALS[outcome.reason], **outcome.reason_args)
    return _(ALERTS[outcome.status])


@router.callback_query(GameCb.filter())
async def game_button(
    callback: CallbackQuery, callback_data: GameCb, press_button: PressButton, _: Translator
) -> None:
    message = callback.message
    message_id = None
    if message is not None:  # an ephemeral hand in the group: minus its id (issue 14)
        ephemeral = getattr(message, "ephemeral_message_id", None)
        message_id = -ephemeral if ephemeral else message.message_id
    outcome = await press_button(
        ButtonPress(
            user=callback.from_user.id,
            button=callback_data,
            chat=message.chat.id if message is not None else None,
            message_id=message_id,
            request_id=f"cb{callback.id}"[:64],
        )
    )
    text = alert(outcome, _)
    if text is None:
        await answer(callback)
    else:
        await answer(callback, text, show_alert=outcome.status not in NOTICES)
    if outcome.then is not None:  # answered first: an edit may wait for flood tokens
        await outcome.then()


@router.callback_query(CardsCb.filter())
async def cards_button(
    callback: CallbackQuery, callback_data: CardsCb, publisher: Publisher, _: Translator
) -> None:
    """*My cards* on the group's table message: his hand, in the group, to him
    alone (a non-seated presser: a toast)."""
    said = await show_in_group(publisher, callback_data.code, callback.from_user.id, callback.id)
    await answer(callback, _(said), show_alert=said == texts.CARDS_OPEN_PRIVATE)


@router.callback_query(SeatCb.filter())
async def seat_button(
    callback: CallbackQuery,
    callback_data: SeatCb,
    svc: TableService,
    publisher: Publisher,
    _: Translator,
) -> None:
    try:
        await svc.games.take_seat_back(
            callback_data.game, callback.from_user.id, request_id=f"cb{callback.id}"[:64]
        )
    except EngineError as e:
        await answer(callback, texts.refusal(e, _), show_alert=True)
        return
    await answer(callback, _(texts.SEAT_BACK))
    await publisher.refresh(callback_data.game, actor=callback.from_user.id)


@router.callback_query(TableCb.filter())
async def table_button(
    callback: CallbackQuery,
    callback_data: TableCb,
    svc: TableService,
    ui: ChatStateStore,
    publisher: Publisher,
    delivery: Delivery,
    locale: str,
    _: Translator,
) -> None:
    """ "Open my table" (under a ``seated_elsewhere`` refusal)."""
    me = player(callback.from_user, locale)
    outcome = await open_table(callback_data.code, me, svc, ui, publisher, delivery)
    if outcome.error is not None:
        await answer(callback, texts.refusal(outcome.error, _), show_alert=True)
    else:
        await answer(callback, _(outcome.notice) if outcome.notice is not None else None)
