"""A player's own commands: leaving his table (``/leave``), choosing a
language (``/lang``, for himself or, in a group, for the group) and opening his
table again (the button under a ``seated_elsewhere`` refusal)."""

from __future__ import annotations

from aiogram.types import InlineKeyboardMarkup

from engine import EngineError
from tables import OPEN, PLAYING, LiveError, TableService
from telegram_bot.delivery import Delivery, Urgency
from telegram_bot.publishing.publisher import Publisher
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.state.snapshot import hand_target
from telegram_bot.usecases.lobby import LobbyOutcome, Person
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator
from telegram_bot.views.keyboards import take_back_keyboard
from telegram_bot.views.lobby import render_lobby


async def leave_table(
    svc: TableService,
    ui: ChatStateStore,
    publisher: Publisher,
    delivery: Delivery,
    player: Person,
    chat: int,
) -> LobbyOutcome:
    """He leaves the table he sits at (``/leave`` sent in ``chat``): a lobby seat,
    or a game (the AI plays on).  Mid-game one message says so, with *Take my
    seat back* while the game lasts (issue 13): his hand message, or a new one
    in his private chat if he has none; the command gets no second copy of it
    there (in a group, a short "You left")."""
    table = await svc.tables.where(player.id)
    if table is None:
        return LobbyOutcome(texts.NOT_SITTING)
    try:
        result = await svc.lobbies.leave(table.id, player.id)
    except EngineError as e:
        return LobbyOutcome(error=e)

    async def refresh() -> None:
        await publisher.refresh(table.id, actor=player.id)

    if table.status != PLAYING:
        return LobbyOutcome(texts.LEFT, then=refresh)
    _ = Translator(player.locale)
    text = _(texts.LEFT_GAME)
    markup: InlineKeyboardMarkup | None = take_back_keyboard(table.id, _(texts.TAKE_BACK))
    if result.table.status != PLAYING:  # the AI played the game out (no human left)
        text, markup = _(texts.LEFT), None
    msg = (await ui.table(table.id)).hands.get(player.id)
    if msg is not None:
        chat, key, receiver = hand_target(player.id, msg, table.chat)
        await delivery.edit(chat, key, text, markup, urgency=Urgency.NOW, receiver=receiver)
    else:
        await delivery.send(player.id, text, markup)
    return LobbyOutcome(None if chat == player.id else texts.LEFT, then=refresh)


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
    table = await svc.tables.where(user)
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


async def open_table(
    code: str,
    player: Person,
    svc: TableService,
    ui: ChatStateStore,
    publisher: Publisher,
    delivery: Delivery,
) -> LobbyOutcome:
    """ "Open my table": the game he sits at gets his hand message again, below (the
    old one no longer takes presses); a lobby, a copy of its message in his
    private chat.  A table he no longer sits at: ``not_seated``; one that is
    gone: ``no_table``."""
    try:
        table = await svc.lobbies.lobby(code)
        seat = table.seat_of(player.id)
        if seat is None or table.status not in (OPEN, PLAYING) or table.seats[seat].left:
            raise LiveError("not_seated", "you do not sit at this table")
        if table.status == PLAYING:
            await publisher.resend_hand(player.id, table_id=code, again=True)
            return LobbyOutcome(texts.HERE_IS_YOUR_TABLE)
        text, markup = render_lobby(
            table, locale=player.locale, bot_username=publisher.bot_username
        )
        sent = await delivery.send(player.id, text, markup)
        if sent is not None:
            await ui.update_table(code, lobby_messages={player.id: sent.message_id})
    except EngineError as e:
        return LobbyOutcome(error=e)
    return LobbyOutcome(texts.HERE_IS_YOUR_TABLE)
