"""/rules, /lang, /stats, /top, /play (solo against AI), /leave; unknown
commands get a short help."""

from __future__ import annotations

import contextlib

from aiogram import F, Router
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, Message

from engine import EngineError
from engine.live import PLAYING, TableService
from engine.live.ui import UiStore
from telegram_bot import texts
from telegram_bot.delivery_api import Delivery, Urgency
from telegram_bot.handlers.common import parse_variant
from telegram_bot.i18n import LANGUAGES, Translator, help_text, rules_text
from telegram_bot.keyboards import LangCb, language_keyboard
from telegram_bot.middlewares import PrefsCache, display_name
from telegram_bot.publisher import Publisher
from telegram_bot.render_lobby import (
    LeaderRow,
    render_stats,
    render_top,
    stats_from_counts,
)
from telegram_bot.settings import Settings

router = Router(name=__name__)


@router.message(Command("rules"))
async def rules(message: Message, command: CommandObject, chat_locale: str) -> None:
    variant = parse_variant(command.args) if command.args else None
    for v in [variant] if variant else ["chuvash", "shchelkovsky"]:
        await message.answer(rules_text(v, chat_locale))


@router.message(Command("lang"))
async def lang(
    message: Message,
    command: CommandObject,
    prefs: PrefsCache,
    svc: TableService,
    ui: UiStore,
    publisher: Publisher,
    _: Translator,
) -> None:
    choice = (command.args or "").strip().lower()
    if choice in LANGUAGES and message.from_user is not None:
        user = message.from_user.id
        await _set_language(message.chat.id, user, choice, prefs, svc, ui, publisher)
        group = message.chat.type != "private"
        await message.answer(
            Translator(choice)(texts.GROUP_LANGUAGE_SET if group else texts.LANGUAGE_SET)
        )
        return
    await message.answer(_(texts.CHOOSE_LANGUAGE), reply_markup=language_keyboard())


@router.callback_query(LangCb.filter())
async def lang_button(
    callback: CallbackQuery,
    callback_data: LangCb,
    prefs: PrefsCache,
    svc: TableService,
    ui: UiStore,
    publisher: Publisher,
) -> None:
    choice = callback_data.lang
    chat = callback.message.chat.id if callback.message is not None else callback.from_user.id
    await _set_language(chat, callback.from_user.id, choice, prefs, svc, ui, publisher)
    group = chat < 0
    await callback.answer(
        Translator(choice)(texts.GROUP_LANGUAGE_SET if group else texts.LANGUAGE_SET)
    )


async def _set_language(
    chat: int,
    user: int,
    choice: str,
    prefs: PrefsCache,
    svc: TableService,
    ui: UiStore,
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


@router.message(Command("stats"))
async def stats(message: Message, svc: TableService, locale: str) -> None:
    user = message.from_user
    if user is None:
        return
    counts = await svc.user_stats(user.id)
    flat = {f"{v}:{k}": n for v, d in counts.items() for k, n in d.items()}
    await message.answer(render_stats(display_name(user), stats_from_counts(flat), locale=locale))


@router.message(Command("top"))
async def top(message: Message, svc: TableService, chat_locale: str, _: Translator) -> None:
    if message.chat.type == "private":
        await message.answer(_(texts.TOP_IN_GROUPS))
        return
    rows = await svc.leaderboard(message.chat.id, limit=50)
    board = [LeaderRow(r["name"], r["games"], r["losses"], r["draws"]) for r in rows]
    await message.answer(render_top(board, locale=chat_locale))


@router.message(Command("play"), F.chat.type == "private")
async def play(
    message: Message,
    command: CommandObject,
    svc: TableService,
    ui: UiStore,
    publisher: Publisher,
    settings: Settings,
    locale: str,
    _: Translator,
) -> None:
    """A private game against AI players, started at once."""
    user = message.from_user
    if user is None:
        return
    variant = parse_variant(command.args)
    if variant is None:
        await message.answer(_(texts.UNKNOWN_GAME))
        return
    try:
        lobby = await svc.create_lobby(
            user.id,
            display_name(user),
            variant=variant,
            timer=settings.default_timer,
            private=True,
        )
    except EngineError as e:
        await message.answer(texts.refusal(e, _))
        return
    code = lobby.table.id
    try:
        for _n in range(settings.solo_opponents):
            await svc.add_ai(code, user.id)
        await ui.update_table(code, langs={user.id: locale})
        await svc.start(code, user.id)
    except EngineError as e:
        with contextlib.suppress(EngineError):
            await svc.cancel(code, user.id)
        await message.answer(texts.refusal(e, _))
        return
    await publisher.start_game(code)


@router.message(Command("leave"))
async def leave(
    message: Message,
    svc: TableService,
    ui: UiStore,
    publisher: Publisher,
    delivery: Delivery,
    _: Translator,
) -> None:
    user = message.from_user
    if user is None:
        return
    table = await svc.where(user.id)
    if table is None:
        await message.answer(_(texts.NOT_SITTING))
        return
    try:
        await svc.leave(table.id, user.id)
    except EngineError as e:
        await message.answer(texts.refusal(e, _))
        return
    if table.status == PLAYING:
        snap_ui = await ui.table(table.id)
        msg = snap_ui.hands.get(user.id)
        if msg is not None:
            await delivery.edit(user.id, msg, _(texts.LEFT_GAME), None, urgency=Urgency.NOW)
        await message.answer(_(texts.LEFT_GAME))
    else:
        await message.answer(_(texts.LEFT))
    await publisher.refresh(table.id, actor=user.id)


@router.message(F.text.startswith("/"))
async def unknown_command(
    message: Message, publisher: Publisher, locale: str, _: Translator
) -> None:
    """Commands we do not know: in a private chat (or addressed to us) a short help."""
    head = (message.text or "").split(maxsplit=1)[0]
    mention = "@" + publisher.bot_username.lower()
    if message.chat.type != "private" and not head.lower().endswith(mention):
        return
    await message.answer(_(texts.UNKNOWN_COMMAND) + "\n\n" + help_text(locale))
