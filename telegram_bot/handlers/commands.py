"""/rules, /lang, /stats, /top, /play (solo against AI), /leave; unknown
commands get a short help."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, Message

from engine.live import TableService
from telegram_bot import texts
from telegram_bot.chat_state import ChatStateStore
from telegram_bot.delivery_api import Delivery
from telegram_bot.handlers.common import parse_play, parse_variant, player, reply
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
from telegram_bot.usecases.lobby import LobbyActions
from telegram_bot.usecases.player import leave_table, set_language

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
    ui: ChatStateStore,
    publisher: Publisher,
    _: Translator,
) -> None:
    choice = (command.args or "").strip().lower()
    if choice in LANGUAGES and message.from_user is not None:
        user = message.from_user.id
        await set_language(message.chat.id, user, choice, prefs, svc, ui, publisher)
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
    ui: ChatStateStore,
    publisher: Publisher,
) -> None:
    choice = callback_data.lang
    chat = callback.message.chat.id if callback.message is not None else callback.from_user.id
    await set_language(chat, callback.from_user.id, choice, prefs, svc, ui, publisher)
    group = chat < 0
    await callback.answer(
        Translator(choice)(texts.GROUP_LANGUAGE_SET if group else texts.LANGUAGE_SET)
    )


@router.message(Command("stats"))
async def stats(message: Message, svc: TableService, locale: str) -> None:
    user = message.from_user
    if user is None:
        return
    counts = await svc.user_stats(user.id)
    flat = {f"{v}:{k}": n for v, d in counts.counts.items() for k, n in d.items()}
    await message.answer(render_stats(display_name(user), stats_from_counts(flat), locale=locale))


@router.message(Command("top"))
async def top(message: Message, svc: TableService, chat_locale: str, _: Translator) -> None:
    if message.chat.type == "private":
        await message.answer(_(texts.TOP_IN_GROUPS))
        return
    rows = await svc.leaderboard(message.chat.id, limit=50)
    board = [LeaderRow(r.name, r.games, r.losses, r.draws) for r in rows]
    await message.answer(render_top(board, locale=chat_locale))


@router.message(Command("play"), F.chat.type == "private")
async def play(
    message: Message,
    command: CommandObject,
    lobby_actions: LobbyActions,
    settings: Settings,
    locale: str,
    _: Translator,
) -> None:
    """A private game against AI players, started at once: ``/play [game]
    [easy|normal|hard]``."""
    if message.from_user is None:
        return
    parsed = parse_play(command.args)
    if parsed is None:
        await message.answer(_(texts.UNKNOWN_PLAY))
        return
    variant, level = parsed
    outcome = await lobby_actions.play_solo(
        player(message.from_user, locale),
        variant=variant,
        timer=settings.default_timer,
        opponents=settings.solo_opponents,
        level=level,
    )
    await reply(message, outcome, _)


@router.message(Command("leave"))
async def leave(
    message: Message,
    svc: TableService,
    ui: ChatStateStore,
    publisher: Publisher,
    delivery: Delivery,
    locale: str,
    _: Translator,
) -> None:
    if message.from_user is None:
        return
    me = player(message.from_user, locale)
    await reply(message, await leave_table(svc, ui, publisher, delivery, me), _)


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


@router.message(F.chat.type == "private", F.text)
async def plain_text(message: Message, locale: str, _: Translator) -> None:
    """Plain text in the private chat (issue 13: it got no reply): a short help."""
    await message.answer(_(texts.PLAIN_TEXT) + "\n\n" + help_text(locale))
