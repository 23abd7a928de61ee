"""Helpers shared by the handler modules: variant and AI level names in commands, the
player a message or button comes from, answering with a lobby outcome,
answering a button press."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any, TypeVar

from aiogram.exceptions import TelegramBadRequest
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message, User

from engine import EngineError
from telegram_bot.handlers.middlewares import display_name
from telegram_bot.publishing.changes import Shows
from telegram_bot.settings import Settings
from telegram_bot.usecases.lobby import LobbyActions, LobbyOutcome, Person
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator
from telegram_bot.views.keyboards import open_table_keyboard

log = logging.getLogger(__name__)

VARIANT_WORDS = {
    "chuvash": "chuvash",
    "c": "chuvash",
    "rooster": "chuvash",
    "чуваш": "chuvash",
    "чувашский": "chuvash",
    "петух": "chuvash",
    "shchelkovsky": "shchelkovsky",
    "s": "shchelkovsky",
    "durak": "shchelkovsky",
    "щелковский": "shchelkovsky",
    "щёлковский": "shchelkovsky",
    "дурак": "shchelkovsky",
}


def parse_variant(args: str | None) -> str | None:
    """``/new [game]``: the variant named (default chuvash), or None if unknown."""
    word = (args or "").strip().split(maxsplit=1)[0].lower() if (args or "").strip() else ""
    if not word:
        return "chuvash"
    return VARIANT_WORDS.get(word)


LEVEL_WORDS = {
    "easy": "easy",
    "лёгкий": "easy",
    "легкий": "easy",
    "normal": "normal",
    "обычный": "normal",
    "звичайний": "normal",
    "середній": "normal",
    "hard": "hard",
    "сложный": "hard",
    "складний": "hard",
    "expert": "expert",
    "эксперт": "expert",
    "експерт": "expert",
}
"""The AI levels (``engine.ai.LEVELS``) as /play accepts them."""


def parse_play(args: str | None) -> tuple[str, str] | None:
    """``/play [game] [level]`` in either order: (variant, level), chuvash and
    normal by default; None if a word is neither."""
    variant, level = "chuvash", "normal"
    words = (args or "").lower().split()
    if len(words) > 2:
        return None
    for word in words:
        if word in LEVEL_WORDS:
            level = LEVEL_WORDS[word]
        elif word in VARIANT_WORDS:
            variant = VARIANT_WORDS[word]
        else:
            return None
    return variant, level


def solo_link(variant: str, level: str) -> str:
    """The ``/start`` payload of a solo game at that AI level (``play_<game>``,
    ``play_<game>_<level>`` unless normal): a group's /play links to it."""
    return f"play_{variant}" if level == "normal" else f"play_{variant}_{level}"


def player(user: User, locale: str) -> Person:
    return Person(user.id, display_name(user), locale)


def refusal_markup(error: EngineError, _: Translator) -> InlineKeyboardMarkup | None:
    """``seated_elsewhere`` always offers the button that opens that table."""
    code = getattr(error, "info", {}).get("table") if error.code == "seated_elsewhere" else None
    return open_table_keyboard(str(code), _(texts.OPEN_TABLE)) if code else None


async def open_lobby_at(
    message: Message,
    user: User,
    variant: str,
    deps: tuple[LobbyActions, Settings],
    locale: str,
    chat_locale: str,
) -> LobbyOutcome:
    """A lobby where ``message`` was sent: in a group, its lobby message there
    -- in a forum group, in the topic ``message`` is in; in a private chat, a
    private lobby (/new, /start from *Add me to a group*, *Open a lobby here*)."""
    lobby_actions, settings = deps
    private = message.chat.type == "private"
    return await lobby_actions.open(
        player(user, locale),
        variant=variant,
        timer=settings.default_timer,
        group=None if private else message.chat.id,
        group_lang=chat_locale,
        thread=None if private else topic_of(message),
    )


def topic_of(message: Message) -> int | None:
    """The forum topic ``message`` is in (None: General, or no forum).  Only a
    topic's message says so (``is_topic_message``): a reply in General carries
    a ``message_thread_id`` too -- its reply thread's, no topic, which a send
    would be refused ("message thread not found")."""
    return message.message_thread_id if message.is_topic_message else None


async def reply(
    message: Message,
    outcome: LobbyOutcome,
    _: Translator,
    publisher: Shows,
    *,
    quote: bool = False,
) -> None:
    """Answer a command with a lobby use case's outcome, then show what changed.
    ``quote``: as a reply to the command (#41: a command whose outcome edits a
    message higher up -- /leave -- is answered where it was typed, too)."""
    text, markup = None, None
    if outcome.error is not None:
        text = texts.refusal(outcome.error, _, message.chat.id)
        markup = refusal_markup(outcome.error, _)
    elif outcome.notice is not None:
        text = _(outcome.notice, **outcome.params)
    if text is not None and quote:
        await message.reply(text, reply_markup=markup)
    elif text is not None:
        await message.answer(text, reply_markup=markup)
    await publisher.show(*outcome.changes)


async def finish_press(
    callback: CallbackQuery, outcome: LobbyOutcome, _: Translator, publisher: Shows
) -> None:
    """Answer a button press with a use case's outcome (a refusal as an alert, a
    notice as a toast, a link to open), then show what changed."""
    if outcome.error is not None:
        await answer(callback, texts.refusal(outcome.error, _), show_alert=True)
    elif outcome.url is not None:
        await answer(callback, url=outcome.url)
    else:
        notice = _(outcome.notice, **outcome.params) if outcome.notice is not None else None
        await answer(callback, notice)
    await publisher.show(*outcome.changes)


T = TypeVar("T")

ANSWER_PATIENCE = 3.0
"""Seconds a press waits for its use case before it is answered silently all
the same (#37): a move the AI answers in the same write waits for the AI's
decisions (the worker pool; on a loaded machine, many seconds), and Telegram
drops an answer that comes after about 15 s -- the spinner then turns on and
on.  The outcome still shows in his hand; a refusal's text that comes later
than that is lost (a refusal comes at once: it runs no AI).  Real seconds,
whatever Telegram's time scale: it bounds our own latency."""


async def answered_in_time(
    callback: CallbackQuery, work: Awaitable[T], patience: float = ANSWER_PATIENCE
) -> tuple[T, bool]:
    """``work``'s result, and whether the press was answered meanwhile: silently,
    once ``work`` took ``patience`` seconds (:data:`ANSWER_PATIENCE`).  Cancelled,
    it cancels ``work``."""
    task = asyncio.ensure_future(work)
    try:
        done, _pending = await asyncio.wait({task}, timeout=patience)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if done:
        return task.result(), False
    log.info("callback query %s answered before its outcome (%.0f s)", callback.id, patience)
    await answer(callback)
    try:
        return await task, True
    except Exception as e:  # the error handler must not answer it again
        e.add_note(ANSWERED)
        raise


ANSWERED = "the press was answered before this (telegram_bot.handlers.common.answered_in_time)"
"""The note :func:`answered_in_time` adds to a failure of a press it answered
silently: :func:`telegram_bot.handlers.errors.on_error` then sends no apology
Telegram would refuse (#40: a press that waited for a failover past its
patience, and the promotion did not come in time)."""


async def answer(callback: CallbackQuery, text: str | None = None, **options: Any) -> None:
    """Answer a button press, best effort: Telegram refuses a second answer of one
    callback query (a copy delivered to another process answered it) or a late
    one -- the press's outcome is still shown after (the publisher shows its change)."""
    try:
        await callback.answer(text, **options)
    except TelegramBadRequest as e:
        log.info("callback query %s not answered: %s", callback.id, e.message)
