"""Lobbies: ``/new [game]`` (in a group: a lobby message there; in a private chat:
a private lobby with its invitation link) and the lobby message's buttons
(Join, Leave, Add/Remove AI, Settings, Start, Cancel) and Rematch."""

from __future__ import annotations

from typing import Any

from aiogram import Router
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, Message

from engine import EngineError
from engine.live import LiveError, TableService
from engine.live.ui import UiStore
from telegram_bot import texts
from telegram_bot.callbacks import LobbyCb, LobbyOp
from telegram_bot.delivery_api import Delivery, Urgency
from telegram_bot.handlers.common import join_lobby, parse_variant, post_lobby
from telegram_bot.i18n import Translator
from telegram_bot.middlewares import PrefsCache, display_name
from telegram_bot.publisher import Publisher
from telegram_bot.render_lobby import deep_link, render_lobby, settings_keyboard, settings_text
from telegram_bot.screens import lobby_lang
from telegram_bot.settings import Settings

router = Router(name=__name__)


@router.message(Command("new"))
async def new_lobby(
    message: Message,
    command: CommandObject,
    svc: TableService,
    publisher: Publisher,
    delivery: Delivery,
    settings: Settings,
    locale: str,
    chat_locale: str,
    _: Translator,
) -> None:
    user = message.from_user
    if user is None:
        return
    variant = parse_variant(command.args)
    if variant is None:
        await message.answer(_(texts.UNKNOWN_GAME))
        return
    private = message.chat.type == "private"
    try:
        result = await svc.create_lobby(
            user.id,
            display_name(user),
            chat=None if private else message.chat.id,
            variant=variant,
            timer=settings.default_timer,
            private=private,
        )
    except EngineError as e:
        await message.answer(texts.refusal(e, _))
        return
    if private:
        await message.answer(_(texts.NEW_GAME_LOBBY))
        await post_lobby(publisher, delivery, result.table, user.id, locale, user=user.id)
    else:
        await post_lobby(
            publisher,
            delivery,
            result.table,
            message.chat.id,
            chat_locale,
            user=user.id,
            group_lang=chat_locale,
        )
        await publisher.ui.update_table(result.table.id, langs={user.id: locale})


@router.callback_query(LobbyCb.filter())
async def lobby_button(
    callback: CallbackQuery,
    callback_data: LobbyCb,
    svc: TableService,
    ui: UiStore,
    prefs: PrefsCache,
    publisher: Publisher,
    delivery: Delivery,
    locale: str,
    _: Translator,
) -> None:
    user = callback.from_user
    code = callback_data.code
    op = callback_data.op
    answer: str | None = None
    try:
        if op == LobbyOp.JOIN:
            p = await prefs.get(user.id)
            if not p.started:
                # he never opened the private chat: the deep link opens it and seats him
                await callback.answer(url=deep_link(publisher.bot_username, code))
                return
            await join_lobby(svc, publisher, ui, code, user, locale)
            answer = _(texts.JOINED)
        elif op == LobbyOp.LEAVE:
            await svc.leave(code, user.id)
            await publisher.refresh(code, actor=user.id)
            answer = _(texts.LEFT)
        elif op == LobbyOp.ADD_AI:
            await svc.add_ai(code, user.id)
            await publisher.refresh(code, actor=user.id)
        elif op == LobbyOp.REMOVE_AI:
            table = await svc.lobby(code)
            ai = [i for i, s in enumerate(table.seats) if s.user is None]
            if not ai:
                raise LiveError("bad_seat", "no AI seat")
            await svc.remove_ai(code, user.id, ai[-1])
            await publisher.refresh(code, actor=user.id)
        elif op in (LobbyOp.SETTINGS, LobbyOp.SET, LobbyOp.BACK):
            await _settings(callback, callback_data, svc, publisher, delivery, locale)
        elif op == LobbyOp.START:
            await svc.start(code, user.id)
            await callback.answer()
            await publisher.start_game(code)
            return
        elif op == LobbyOp.REMATCH:
            await svc.rematch(code, user.id)
            await callback.answer()
            await publisher.start_game(code)
            return
        elif op == LobbyOp.CANCEL:
            await svc.cancel(code, user.id)
            await publisher.refresh(code, actor=user.id)
        else:
            answer = _(texts.BAD_BUTTON)
    except EngineError as e:
        await callback.answer(texts.refusal(e, _), show_alert=True)
        return
    await callback.answer(answer)


async def _settings(
    callback: CallbackQuery,
    cb: LobbyCb,
    svc: TableService,
    publisher: Publisher,
    delivery: Delivery,
    locale: str,
) -> None:
    """The settings keyboard on the lobby message itself; a change goes through the
    service (only the creator may)."""
    message = callback.message
    table = await svc.lobby(cb.code)
    if cb.op == LobbyOp.SET and cb.setting is not None:
        key, value = cb.setting
        changes: dict[str, Any] = {}
        if key == "game":
            changes["variant"] = value
        elif key == "timer":
            changes["timer"] = int(value)
        elif key == "max":
            changes["max_seats"] = int(value)
        elif key in ("decks", "joker") and table.variant == "shchelkovsky":
            options = dict(table.options)
            if key == "decks":
                options["decks"] = int(value)
            else:
                options["remove_joker"] = value == "1"
            changes["options"] = options
        table = (await svc.configure(cb.code, callback.from_user.id, **changes)).table
    if message is None or not hasattr(message, "chat"):
        return
    chat = message.chat.id
    snap = await publisher.snapshot(cb.code)
    lang = lobby_lang(snap, chat) if chat < 0 else locale
    if cb.op == LobbyOp.BACK:
        text, markup = render_lobby(table, locale=lang, bot_username=publisher.bot_username)
    else:
        text = settings_text(table, locale=lang)
        markup = settings_keyboard(table, locale=lang)
    await delivery.edit(chat, message.message_id, text, markup, urgency=Urgency.NOW)
    if cb.op == LobbyOp.SET:  # the other lobby messages (private lobbies) show the change
        others = {c: m for c, m in snap.ui.lobby_messages.items() if c != chat}
        for c, m in others.items():
            t2, k2 = render_lobby(
                table, locale=lobby_lang(snap, c), bot_username=publisher.bot_username
            )
            await delivery.edit(c, m, t2, k2, urgency=Urgency.SOON)
