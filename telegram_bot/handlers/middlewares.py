"""Middlewares: the reader's language (aiogram i18n) and what the handlers need
to know about the user, from the chat state (:mod:`telegram_bot.state.chat_state`);
and :class:`InFlight`, the updates being handled (a stop waits for them).

``locale`` -- the user's language: his /lang choice, else Telegram's
``language_code`` (ru/uk/en).  ``chat_locale`` -- the language of messages to the
chat: in a group the group's /lang choice, else the user's.  ``_`` -- a
:class:`telegram_bot.views.i18n.Translator` for ``locale``.  A private message marks
the user as having started the bot (so it may write to him).

Preferences are read afresh for every update (the user's and the group's in
ONE round trip): with several bot processes a cache in one of them would keep
showing the old language after /lang was answered by another (issue #12).
``PrefsCache(ui, ttl=...)`` can still cache for a single-process bot."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware
from aiogram.types import Chat, TelegramObject, User
from aiogram.utils.i18n import I18n
from aiogram.utils.i18n.middleware import I18nMiddleware

from tables.model import ServiceUnavailable
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.views.i18n import Translator, pick_language

log = logging.getLogger(__name__)


def display_name(user: User) -> str:
    name = user.full_name.strip() or (user.username or "") or str(user.id)
    return name[:64]


class InFlight(BaseMiddleware):
    """``dp.update.outer_middleware(InFlight())``: the updates being handled, so a
    stopping process lets them finish before it closes Redis and the bot's
    session.  aiogram's polling handles each update in a task of its own and does
    not wait for them when it stops: a command answered a moment before the stop
    went on to use a closed client (a new connection, never closed)."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[Any]] = set()

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        task = asyncio.current_task()
        if task is None:  # pragma: no cover - always inside a task under aiogram
            return await handler(event, data)
        self.tasks.add(task)
        try:
            return await handler(event, data)
        finally:
            self.tasks.discard(task)

    async def drain(self, within: float) -> int:
        """Wait up to ``within`` seconds for the updates in hand; cancel (and
        await) the ones still running then.  How many were cut short."""
        pending = self.tasks - {asyncio.current_task()}
        if not pending:
            return 0
        log.info("stopping: %d update(s) in flight, waiting for them", len(pending))
        _done, late = await asyncio.wait(pending, timeout=within)
        if late:
            log.warning("stopping with %d update(s) unfinished: cancelled", len(late))
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        return len(late)


class LocaleMiddleware(I18nMiddleware):
    """aiogram's i18n middleware with our per-user/per-group choice of language."""

    def __init__(self, i18n: I18n, prefs: PrefsCache) -> None:
        super().__init__(i18n)
        self.prefs = prefs

    async def get_locale(self, event: TelegramObject, data: dict[str, Any]) -> str:
        return str(data.get("locale") or pick_language(None))

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        user: User | None = data.get("event_from_user")
        chat: Chat | None = data.get("event_chat")
        locale = pick_language(user.language_code if user else None)
        chat_locale = locale
        try:
            group_id = chat.id if chat is not None and chat.type != "private" else None
            wanted = [i for i in (user.id if user else None, group_id) if i is not None]
            read = await self.prefs.get_many(*wanted) if wanted else {}
            if user is not None:
                prefs = read[user.id]
                if prefs.lang:
                    locale = chat_locale = prefs.lang
                private = chat is not None and chat.type == "private"
                tg = pick_language(user.language_code)
                name = display_name(user)
                if (private and not prefs.started) or prefs.tg != tg or prefs.name != name:
                    await self.prefs.update(
                        user.id, tg=tg, name=name, started=True if private else None
                    )
            if group_id is not None:
                chat_locale = read[group_id].lang or locale
        except ServiceUnavailable as e:  # a fault we expect: one line, no traceback (#40)
            log.warning("preferences unavailable (%s): handled in the sender's own language", e)
        data["locale"] = locale
        data["chat_locale"] = chat_locale
        data["_"] = Translator(locale)
        return await super().__call__(handler, event, data)
