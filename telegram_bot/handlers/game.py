"""Buttons of a player's hand message (:mod:`telegram_bot.usecases.press` decides
what a press does), *My cards*, taking a seat back from the AI, and "Open my
table".  Each handler calls one use case, answers the press, then hands what
changed to the publisher (an edit may wait for flood tokens; Telegram drops an
answer that comes too late)."""

from __future__ import annotations

import logging

from aiogram import Router
from aiogram.types import CallbackQuery

from telegram_bot.buttons.callbacks import CardsCb, GameCb, SeatCb, TableCb
from telegram_bot.handlers.common import answer, answered_in_time, finish_press, player
from telegram_bot.publishing.changes import Shows
from telegram_bot.usecases.cases import UseCases
from telegram_bot.usecases.press import ButtonPress, PressOutcome, PressStatus
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator

router = Router(name=__name__)
log = logging.getLogger(__name__)

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
    callback: CallbackQuery,
    callback_data: GameCb,
    cases: UseCases,
    publisher: Shows,
    _: Translator,
) -> None:
    message = callback.message
    message_id = None
    if message is not None:  # an ephemeral hand in the group: minus its id (issue 14)
        ephemeral = getattr(message, "ephemeral_message_id", None)
        message_id = -ephemeral if ephemeral else message.message_id
    press = ButtonPress(
        user=callback.from_user.id,
        button=callback_data,
        chat=message.chat.id if message is not None else None,
        message_id=message_id,
        request_id=f"cb{callback.id}"[:64],
    )
    # a move waits for the AI's answer in the same write: a long one is
    # answered silently before Telegram's window for the answer closes (#37)
    outcome, answered = await answered_in_time(callback, cases.press(press))
    text = alert(outcome, _)
    if answered:  # silently, a while ago
        log.info("press %s: %s, not said (answered before)", callback.id, outcome.status)
    elif text is None:
        await answer(callback)
    else:
        await answer(callback, text, show_alert=outcome.status not in NOTICES)
    await publisher.show(outcome.change)


@router.callback_query(CardsCb.filter())
async def cards_button(
    callback: CallbackQuery,
    callback_data: CardsCb,
    cases: UseCases,
    publisher: Shows,
    _: Translator,
) -> None:
    """*My cards* on the group's table message: his hand, in the group, to him
    alone (a non-seated presser: a toast).  Answered before his hand goes out
    (#28): that may wait for the group's flood tokens."""
    outcome = await cases.my_cards(callback_data.code, callback.from_user.id, callback.id)
    await answer(callback, _(outcome.said))
    await publisher.show(outcome.change)


@router.callback_query(SeatCb.filter())
async def seat_button(
    callback: CallbackQuery,
    callback_data: SeatCb,
    cases: UseCases,
    publisher: Shows,
    _: Translator,
) -> None:
    request_id = f"cb{callback.id}"[:64]
    outcome = await cases.player.take_seat_back(
        callback_data.game, callback.from_user.id, request_id
    )
    await finish_press(callback, outcome, _, publisher)


@router.callback_query(TableCb.filter())
async def table_button(
    callback: CallbackQuery,
    callback_data: TableCb,
    cases: UseCases,
    publisher: Shows,
    locale: str,
    _: Translator,
) -> None:
    """ "Open my table" (under a ``seated_elsewhere`` refusal)."""
    outcome = await cases.player.open_table(callback_data.code, player(callback.from_user, locale))
    await finish_press(callback, outcome, _, publisher)
