"""A player's own commands: leaving his table (``/leave``) and choosing a
language (``/lang``, for himself or, in a group, for the group)."""

from __future__ import annotations

from engine import EngineError
from engine.live import PLAYING, TableService
from telegram_bot import texts
from telegram_bot.chat_state import ChatStateStore
from telegram_bot.delivery_api import Delivery, Urgency
from telegram_bot.i18n import Translator
from telegram_bot.middlewares import PrefsCache
from telegram_bot.publisher import Publisher
from telegram_bot.usecases.lobby import LobbyOutcome, Person


async def leave_table(
    svc: TableService, ui: ChatStateStore, publisher: Publisher, delivery: Delivery, player: Person
) -> LobbyOutcome:
    """He leaves the table he sits at: a lobby seat, or a game (the AI plays on;
    his hand message says he left)."""
    table = await svc.where(player.id)
    if table is None:
        return LobbyOutcome(texts.NOT_SITTING)
    try:
        await svc.leave(table.id, player.id)
    except EngineError as e:
        return LobbyOutcome(error=e)
    notice = texts.LEFT
    if table.status == PLAYING:
        msg = (await ui.table(table.id)).hands.get(player.id)
        if msg is not None:
            left = Translator(player.locale)(texts.LEFT_GAME)
            await delivery.edit(player.id, msg, left, None, urgency=Urgency.NOW)
        notice = texts.LEFT_GAME
    return LobbyOutcome(notice, then=lambda: publisher.refresh(table.id, actor=player.id))


async def set_language(
    chat: int,
    user: int,
    choice: str,
    prefs: PrefsCache,
    svc: TableService,
    ui: ChatStateStore,
    publisher: Publisher,
) -> None:
    """In a group /lang sets the group's language: lobbies opened there from now on
    speak it, and so does the lobby or game of this group where the sender sits
    (its messages are redrawn now).  In private it sets the user's language, and
    his messages at his current table are redrawn in it."""
    await prefs.update(chat, lang=choice)
    table = await svc.where(user)
    if table is None:
        return
    if chat < 0:
        if table.chat != chat:
            return
        await ui.update_table(table.id, group_lang=choice)
        await publisher.refresh(table.id, seats=(), actor=user)
        return
    await ui.update_table(table.id, langs={user: choice})
    seat = table.seat_of(user)
    await publisher.refresh(table.id, seats=() if seat is None else (seat,), actor=user)
