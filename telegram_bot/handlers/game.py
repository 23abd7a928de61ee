"""Buttons of a player's hand message: a card, Play/Clear/Back, a page, an action
(Take, Done/Pass, Transfer, Pass-ticket) -- mapped to a move by
:func:`telegram_bot.moves.resolve` and applied through the table service by
compare-and-set; and taking a seat back from the AI.

Exactly one move per press.  A button drawn at an older version is honoured only
while the presser's decision stamp (:func:`telegram_bot.moves.stamp`: his hand
and options in the same bout) is unchanged -- another player's throw-in, cover
or pass does not void it; otherwise (an old keyboard, a double tap, his options
changed) it is stale and answered with a short alert and a fresh message.  A
redelivered update has the same request id (the callback query id) and is
applied once.  The seat is always the presser's
own: a button pressed on a message that is not his current hand message, or a
payload that does not fit his hand, gets an alert and changes nothing."""

from __future__ import annotations

import asyncio

from aiogram import Router
from aiogram.types import CallbackQuery

from engine import EngineError, view
from engine.live import PLAYING, StaleVersion, TableService
from engine.live.ui import UiStore
from telegram_bot import texts
from telegram_bot.callbacks import GameCb
from telegram_bot.i18n import Translator
from telegram_bot.keyboards import SeatCb
from telegram_bot.moves import Selection, resolve, stamp
from telegram_bot.publisher import Publisher

router = Router(name=__name__)

APPLY_ATTEMPTS = 3
"""A press whose move loses a compare-and-set race is tried again on the newer
state (while its stamp still matches) this many times in all."""


@router.callback_query(GameCb.filter())
async def game_button(
    callback: CallbackQuery,
    callback_data: GameCb,
    svc: TableService,
    ui: UiStore,
    publisher: Publisher,
    _: Translator,
) -> None:
    user = callback.from_user.id
    tid = callback_data.game
    try:
        snap = await publisher.snapshot(tid)
    except EngineError as e:
        await callback.answer(texts.refusal(e, _), show_alert=True)
        return
    table, state = snap.table, snap.loaded.state
    seat = table.seat_of(user)
    if seat is None:
        await callback.answer(_(texts.REFUSALS["not_seated"]), show_alert=True)
        return
    message = callback.message
    if message is None or snap.ui.hands.get(user) != message.message_id or message.chat.id != user:
        await callback.answer(_(texts.NOT_YOUR_MESSAGE), show_alert=True)
        return
    if table.status != PLAYING or state is None:
        await callback.answer(_(texts.REFUSALS["game_over"]), show_alert=True)
        return
    selection = Selection.from_json(snap.ui.selections.get(user))
    if table.seats[seat].ai_controlled:
        await callback.answer(_(texts.REFUSALS["ai_controlled"]), show_alert=True)
        return
    for attempt in range(APPLY_ATTEMPTS):
        seat_view = view(state, seat)
        if callback_data.version != snap.version and (
            not callback_data.stamp or callback_data.stamp != stamp(seat_view)
        ):  # his hand or options changed since the keyboard was drawn
            await publisher.render_seat(snap, user, selection)
            await callback.answer(_(texts.STALE), show_alert=True)
            return
        outcome = resolve(seat_view, selection, callback_data.press)
        if outcome.error is not None:
            await callback.answer(_(outcome.error), show_alert=True)
            return
        if outcome.selection is not None:
            await asyncio.gather(
                ui.update_table(tid, selections={user: outcome.selection.to_json()}),
                publisher.render_seat(snap, user, outcome.selection),
            )
            await callback.answer()
            return
        assert outcome.action is not None
        try:
            result = await svc.apply(
                tid, user, outcome.action, snap.version, request_id=f"cb{callback.id}"[:64]
            )
        except StaleVersion:
            # another write landed meanwhile: look again (the stamp decides)
            try:
                snap = await publisher.snapshot(tid)
            except EngineError as e:
                await callback.answer(texts.refusal(e, _), show_alert=True)
                return
            table, state = snap.table, snap.loaded.state
            if table.status != PLAYING or state is None:
                await callback.answer(_(texts.REFUSALS["game_over"]), show_alert=True)
                return
            if attempt + 1 < APPLY_ATTEMPTS and not table.seats[seat].ai_controlled:
                continue
            await publisher.refresh(tid, seats=[seat], actor=user)
            await callback.answer(_(texts.STALE), show_alert=True)
            return
        except EngineError as e:
            await callback.answer(texts.refusal(e, _), show_alert=True)
            return
        if result.duplicate:
            await callback.answer()
            return
        if selection.cards or selection.choose:
            await ui.update_table(tid, selections={user: None})
        seats = None if result.game_over else result.changed_seats
        # his own message first; the write's notification re-renders nothing more
        await publisher.refresh(tid, seats=seats, actor=user, wrote=result.version)
        await callback.answer()
        return


@router.callback_query(SeatCb.filter())
async def seat_button(
    callback: CallbackQuery,
    callback_data: SeatCb,
    svc: TableService,
    publisher: Publisher,
    _: Translator,
) -> None:
    try:
        await svc.take_seat_back(callback_data.game, callback.from_user.id)
    except EngineError as e:
        await callback.answer(texts.refusal(e, _), show_alert=True)
        return
    await callback.answer(_(texts.SEAT_BACK))
    await publisher.refresh(callback_data.game, actor=callback.from_user.id)
