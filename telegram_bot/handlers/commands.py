"""/rules, /lang, /stats, /top, /play (solo against AI), /leave; unknown
commands get a short help."""

from __future__ import annotations

from aiogram import Bot, F, Router
from aiogram.filters import Command, CommandObject
from aiogram.types import (
    BotCommandScopeChat,
    CallbackQuery,
    Chat,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    User,
)

from tables import TableService
from telegram_bot.buttons.callbacks import LangCb, NewLobbyCb
from telegram_bot.delivery import Delivery
from telegram_bot.handlers.common import parse_play, parse_variant, player, reply, solo_link
from telegram_bot.handlers.middlewares import display_name
from telegram_bot.publishing.publisher import Publisher
from telegram_bot.settings import Settings
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.usecases.lobby import LobbyActions
from telegram_bot.usecases.player import leave_table, set_language
from telegram_bot.views import texts
from telegram_bot.views.i18n import (
    GROUP_COMMANDS,
    LANGUAGES,
    PRIVATE_COMMANDS,
    Translator,
    bot_commands,
    help_text,
    pick_language,
    rules_message,
)
from telegram_bot.views.keyboards import language_keyboard
from telegram_bot.views.lobby import LeaderRow, render_stats, render_top, stats_from_counts

router = Router(name=__name__)


@router.message(Command("rules"))
async def rules(message: Message, command: CommandObject, chat_locale: str) -> None:
    """One message: a summary and both games' rules in expandable quotes."""
    variant = parse_variant(command.args) if command.args else None
    await message.answer(rules_message(chat_locale, variant))


async def is_group_admin(bot: Bot, chat: Chat, user: int, sender_chat: Chat | None) -> bool:
    """Telegram's word (getChatMember): the group's creator or an administrator;
    an anonymous admin writes as the group itself."""
    if sender_chat is not None and sender_chat.id == chat.id:
        return True
    member = await bot.get_chat_member(chat.id, user)
    return member.status in ("creator", "administrator")


async def set_chat_menu(bot: Bot, chat: int, lang: str) -> None:
    """The command menu of this one chat (BotCommandScopeChat) in ``lang``: after
    /lang the menu speaks it too, not only the messages (issue 13)."""
    only = GROUP_COMMANDS if chat < 0 else PRIVATE_COMMANDS
    await bot.set_my_commands(bot_commands(lang, only), scope=BotCommandScopeChat(chat_id=chat))


async def choose_language(
    bot: Bot,
    chat: Chat,
    user: User,
    choice: str,
    deps: tuple[PrefsCache, TableService, ChatStateStore, Publisher],
    sender_chat: Chat | None = None,
) -> str:
    """/lang or its keyboard: the answer's text.  In a group only its admins
    choose the group's language."""
    group = chat.type != "private"
    if group and not await is_group_admin(bot, chat, user.id, sender_chat):
        return Translator(pick_language(user.language_code))(texts.ONLY_ADMINS)
    await set_language(chat.id, user.id, choice, *deps)
    await set_chat_menu(bot, chat.id, choice)
    return Translator(choice)(texts.GROUP_LANGUAGE_SET if group else texts.LANGUAGE_SET)


@router.message(Command("lang"))
async def lang(
    message: Message,
    command: CommandObject,
    bot: Bot,
    prefs: PrefsCache,
    svc: TableService,
    ui: ChatStateStore,
    publisher: Publisher,
    _: Translator,
) -> None:
    choice = (command.args or "").strip().lower()
    if choice in LANGUAGES and message.from_user is not None:
        deps = (prefs, svc, ui, publisher)
        text = await choose_language(
            bot, message.chat, message.from_user, choice, deps, message.sender_chat
        )
        await message.answer(text)
        return
    await message.answer(_(texts.CHOOSE_LANGUAGE), reply_markup=language_keyboard())


@router.callback_query(LangCb.filter())
async def lang_button(
    callback: CallbackQuery,
    callback_data: LangCb,
    bot: Bot,
    prefs: PrefsCache,
    svc: TableService,
    ui: ChatStateStore,
    publisher: Publisher,
) -> None:
    message = callback.message
    chat = message.chat if message is not None else Chat(id=callback.from_user.id, type="private")
    deps = (prefs, svc, ui, publisher)
    text = await choose_language(bot, chat, callback.from_user, callback_data.lang, deps)
    await callback.answer(text)


@router.message(Command("stats"))
async def stats(message: Message, svc: TableService, locale: str) -> None:
    user = message.from_user
    if user is None:
        return
    counts = await svc.results.user_stats(user.id)
    flat = {f"{v}:{k}": n for v, d in counts.counts.items() for k, n in d.items()}
    await message.answer(render_stats(display_name(user), stats_from_counts(flat), locale=locale))


@router.message(Command("top"))
async def top(message: Message, svc: TableService, chat_locale: str, _: Translator) -> None:
    if message.chat.type == "private":
        await message.answer(_(texts.TOP_IN_GROUPS))
        return
    rows = await svc.results.leaderboard(message.chat.id, limit=50)
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


@router.message(Command("play"))
async def play_in_group(
    message: Message, command: CommandObject, publisher: Publisher, chat_locale: str
) -> None:
    """/play in a group (issue 13: no reply): a game against the AI is private --
    a button opens it there; or a lobby in this group."""
    _ = Translator(chat_locale)
    variant, level = parse_play(command.args) or (
        parse_variant(command.args) or "chuvash",
        "normal",
    )
    solo = f"https://t.me/{publisher.bot_username}?start={solo_link(variant, level)}"
    markup = InlineKeyboardMarkup(
        inline_keyboard=[
            [InlineKeyboardButton(text="🤖 " + _(texts.PLAY_SOLO), url=solo)],
            [
                InlineKeyboardButton(
                    text="🃏 " + _(texts.OPEN_LOBBY),
                    callback_data=NewLobbyCb(variant=variant).pack(),  # type: ignore[arg-type]
                )
            ],
        ]
    )
    await message.answer(_(texts.PLAY_IN_GROUP), reply_markup=markup)


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
    outcome = await leave_table(svc, ui, publisher, delivery, me, message.chat.id)
    await reply(message, outcome, _)


@router.message(F.text.startswith("/"))
async def unknown_command(
    message: Message, publisher: Publisher, locale: str, _: Translator
) -> None:
    """Commands we do not know: in a private chat (or addressed to us) a short help."""
    head = (message.text or "").split(maxsplit=1)[0]
    mention = "@" + publisher.bot_username.lower()
    if message.chat.type != "private" and not head.lower().endswith(mention):
        return
    group = message.chat.type != "private"
    await message.answer(_(texts.UNKNOWN_COMMAND) + "\n\n" + help_text(locale, group=group))


@router.message(F.chat.type == "private", F.text)
async def plain_text(message: Message, locale: str, _: Translator) -> None:
    """Plain text in the private chat (issue 13: it got no reply): a short help."""
    await message.answer(_(texts.PLAIN_TEXT) + "\n\n" + help_text(locale))
