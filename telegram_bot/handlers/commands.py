"""/rules, /lang, /stats, /top, /play (solo against AI) and its choice of game
and level, /leave; unknown commands get a short help."""

from __future__ import annotations

import contextlib

from aiogram import F, Router
from aiogram.exceptions import TelegramBadRequest
from aiogram.filters import Command, CommandObject
from aiogram.types import (
    CallbackQuery,
    Chat,
    InlineKeyboardMarkup,
    Message,
    User,
)

from telegram_bot.buttons.callbacks import LangCb, PlayCb
from telegram_bot.handlers.common import (
    answer,
    answered_in_time,
    parse_play,
    parse_variant,
    player,
    reply,
    solo_link,
    topic_of,
)
from telegram_bot.handlers.middlewares import display_name
from telegram_bot.publishing.changes import Shows
from telegram_bot.settings import Settings
from telegram_bot.usecases.cases import UseCases
from telegram_bot.usecases.player import LanguageChosen
from telegram_bot.views import texts
from telegram_bot.views.i18n import (
    LANGUAGES,
    Translator,
    help_text,
    rules_message,
)
from telegram_bot.views.keyboards import language_keyboard, play_here_keyboard, play_screen
from telegram_bot.views.lobby import (
    render_rating_top,
    render_ratings,
    render_stats,
    stats_from_counts,
)
from telegram_bot.views.miniapp import RATING_HISTORY, MiniApp, player_button

router = Router(name=__name__)


@router.message(Command("rules"))
async def rules(message: Message, command: CommandObject, chat_locale: str) -> None:
    """One message: a summary and both games' rules in expandable quotes."""
    variant = parse_variant(command.args) if command.args else None
    await message.answer(rules_message(chat_locale, variant))


async def choose_language(
    cases: UseCases,
    chat: Chat,
    user: User,
    choice: str,
    chat_locale: str,
    sender_chat: Chat | None = None,
) -> LanguageChosen:
    """/lang or its keyboard: the answer's text and what to redraw (an anonymous
    admin writes as the group itself); a refusal in ``chat_locale``, the
    language the prompt was in (#29)."""
    anonymous_admin = sender_chat is not None and sender_chat.id == chat.id
    return await cases.player.choose_language(
        chat.id,
        chat.type == "private",
        user.id,
        chat_locale,
        choice,
        admin=anonymous_admin,
    )


@router.message(Command("lang"))
async def lang(
    message: Message,
    command: CommandObject,
    cases: UseCases,
    publisher: Shows,
    chat_locale: str,
) -> None:
    choice = (command.args or "").strip().lower()
    if choice in LANGUAGES and message.from_user is not None:
        chosen = await choose_language(
            cases, message.chat, message.from_user, choice, chat_locale, message.sender_chat
        )
        await publisher.show(chosen.menu)  # the menu speaks it once the reply does
        await message.answer(chosen.said)
        await publisher.show(chosen.change)
        return
    # in the chat's language: a group's prompt and its refusal speak the same (#29)
    prompt = Translator(chat_locale)(texts.CHOOSE_LANGUAGE)
    await message.answer(prompt, reply_markup=language_keyboard())


@router.callback_query(LangCb.filter())
async def lang_button(
    callback: CallbackQuery,
    callback_data: LangCb,
    cases: UseCases,
    publisher: Shows,
    chat_locale: str,
) -> None:
    message = callback.message
    chat = message.chat if message is not None else Chat(id=callback.from_user.id, type="private")
    chosen = await choose_language(cases, chat, callback.from_user, callback_data.lang, chat_locale)
    await answer(callback, chosen.said)  # at once: the menu and the redraw come after (#28)
    if chosen.menu is not None and isinstance(message, Message):
        # the prompt itself says it, in the new language, not the old one's words (#29)
        with contextlib.suppress(TelegramBadRequest):  # the same choice again: unchanged
            await message.edit_text(chosen.said, reply_markup=language_keyboard())
    await publisher.show(chosen.menu, chosen.change)


@router.message(Command("stats"))
async def stats(message: Message, cases: UseCases, locale: str) -> None:
    user = message.from_user
    if user is None:
        return
    counts = await cases.standings.stats(user.id)
    flat = {f"{v}:{k}": n for v, d in counts.counts.items() for k, n in d.items()}
    await message.answer(render_stats(display_name(user), stats_from_counts(flat), locale=locale))


@router.message(Command("top"))
async def top(
    message: Message,
    cases: UseCases,
    publisher: Shows,
    locale: str,
    chat_locale: str,
    _: Translator,
) -> None:
    """The group's players by rating.  #38: while the group's arena is on, to the
    member's private chat (or to the group once a minute, at low priority)."""
    if message.chat.type == "private":
        await message.answer(_(texts.TOP_IN_GROUPS))
        return
    user = message.from_user.id if message.from_user is not None else None
    outcome = await cases.standings.rating_top(
        message.chat.id, user, locale, chat_locale, topic_of(message)
    )
    if outcome.here:
        await message.answer(render_rating_top(outcome.boards, locale=chat_locale))
    await publisher.show(*outcome.changes)


@router.message(Command("rating"))
async def rating(
    message: Message, cases: UseCases, locale: str, miniapp: MiniApp | None, _: Translator
) -> None:
    """His ratings in both games, reliability and cooldown (#25); in his
    private chat with the Mini App on, a button to his player page (#42)."""
    user = message.from_user
    if user is None:
        return
    me = await cases.standings.ratings(user.id)
    now = int(message.date.timestamp() * 1000)
    markup = None
    if miniapp is not None and message.chat.type == "private":
        button = player_button(miniapp, _, RATING_HISTORY)
        markup = InlineKeyboardMarkup(inline_keyboard=[[button]])
    text = render_ratings(me, display_name(user), locale=locale, now_ms=now)
    await message.answer(text, reply_markup=markup)


@router.message(Command("play"), F.chat.type == "private")
async def play(
    message: Message,
    command: CommandObject,
    cases: UseCases,
    settings: Settings,
    locale: str,
    _: Translator,
    publisher: Shows,
) -> None:
    """A private game against AI players: ``/play [game] [easy|normal|hard|expert]``
    starts it at once; ``/play`` alone offers each game and level, a tap each,
    his last choice first (#41), or -- while he sits at a table -- says so."""
    if message.from_user is None:
        return
    if not (command.args or "").strip():
        offer = await cases.lobby.offer_play(player(message.from_user, locale))
        if offer.refused is not None:
            await reply(message, offer.refused, _, publisher)
            return
        text, markup = play_screen(offer.last, _)
        await message.answer(text, reply_markup=markup)
        return
    parsed = parse_play(command.args)
    if parsed is None:
        await message.answer(_(texts.UNKNOWN_PLAY))
        return
    variant, level = parsed
    outcome = await cases.lobby.play_solo(
        player(message.from_user, locale),
        variant=variant,
        timer=settings.default_timer,
        opponents=settings.solo_opponents,
        level=level,
    )
    await reply(message, outcome, _, publisher)


@router.callback_query(PlayCb.filter())
async def play_button(
    callback: CallbackQuery,
    callback_data: PlayCb,
    cases: UseCases,
    settings: Settings,
    locale: str,
    _: Translator,
    publisher: Shows,
) -> None:
    """A game and level tapped under ``/play`` (#41): that game starts at once,
    as ``/play <game> <level>`` would -- and a tap while he sits at a table
    (an old keyboard) gets what ``/play`` says then, with his table."""
    message = callback.message
    if not isinstance(message, Message) or message.chat.type != "private":
        await answer(callback, _(texts.BAD_BUTTON), show_alert=True)
        return
    started = cases.lobby.play_solo(
        player(callback.from_user, locale),
        variant=callback_data.variant,
        timer=settings.default_timer,
        opponents=settings.solo_opponents,
        level=callback_data.level,
    )
    outcome, answered = await answered_in_time(callback, started)
    if not answered:
        await answer(callback)
    await reply(message, outcome, _, publisher)


@router.message(Command("play"))
async def play_in_group(
    message: Message, command: CommandObject, bot_username: str, chat_locale: str
) -> None:
    """/play in a group (issue 13: no reply): a game against the AI is private --
    a button opens it there; or a lobby in this group."""
    _ = Translator(chat_locale)
    variant, level = parse_play(command.args) or (
        parse_variant(command.args) or "chuvash",
        "normal",
    )
    solo = f"https://t.me/{bot_username}?start={solo_link(variant, level)}"
    await message.answer(_(texts.PLAY_IN_GROUP), reply_markup=play_here_keyboard(solo, variant, _))


@router.message(Command("leave"))
async def leave(
    message: Message,
    cases: UseCases,
    publisher: Shows,
    locale: str,
    _: Translator,
) -> None:
    """#41: always answered below the command, as a reply to it -- its note
    mid-game edits his hand message higher up (or, without one, is that reply)."""
    if message.from_user is None:
        return
    me = player(message.from_user, locale)
    outcome = await cases.player.leave(me, message.chat.id, message.message_id)
    await reply(message, outcome, _, publisher, quote=True)


@router.message(F.text.startswith("/"))
async def unknown_command(message: Message, bot_username: str, locale: str, _: Translator) -> None:
    """Commands we do not know: in a private chat (or addressed to us) a short help."""
    head = (message.text or "").split(maxsplit=1)[0]
    mention = "@" + bot_username.lower()
    if message.chat.type != "private" and not head.lower().endswith(mention):
        return
    group = message.chat.type != "private"
    await message.answer(_(texts.UNKNOWN_COMMAND) + "\n\n" + help_text(locale, group=group))


@router.message(F.chat.type == "private", F.text)
async def plain_text(message: Message, locale: str, _: Translator) -> None:
    """Plain text in the private chat (issue 13: it got no reply): a short help."""
    await message.answer(_(texts.PLAIN_TEXT) + "\n\n" + help_text(locale))
