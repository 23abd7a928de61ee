"""A minimal stand-in for :mod:`telegram_bot.delivery` with the same interface:
no coalescing, no shared limiter -- every edit goes out at once.  Used only
while that module is absent (see :mod:`telegram_bot.delivery_api`)."""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest, TelegramForbiddenError, TelegramRetryAfter
from aiogram.types import InlineKeyboardMarkup, Message

log = logging.getLogger(__name__)


class Urgency(enum.Enum):
    NOW = "now"
    SOON = "soon"
    TABLE = "table"


class Delivery:
    def __init__(
        self,
        bot: Bot,
        *,
        soon_delay: float = 1.0,
        table_delay: float = 3.0,
        on_forbidden: Callable[[int], Awaitable[None]] | None = None,
        **_: Any,
    ) -> None:
        self.bot = bot
        self.on_forbidden = on_forbidden
        self._last: dict[tuple[int, int], tuple[str, str]] = {}

    async def _call(self, chat_id: int, make: Callable[[], Awaitable[Any]]) -> Any:
        for _attempt in range(3):
            try:
                return await make()
            except TelegramRetryAfter as e:
                await asyncio.sleep(e.retry_after)
            except TelegramForbiddenError:
                if self.on_forbidden is not None and chat_id > 0:
                    await self.on_forbidden(chat_id)
                return None
            except TelegramBadRequest as e:
                if "not modified" not in str(e):
                    log.info("edit failed in %s: %s", chat_id, e)
                return None
        return None

    async def send(
        self,
        chat_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None = None,
        *,
        parse_mode: str | None = "HTML",
    ) -> Message | None:
        msg: Message | None = await self._call(
            chat_id,
            lambda: self.bot.send_message(
                chat_id, text, reply_markup=markup, parse_mode=parse_mode
            ),
        )
        if msg is not None:
            self._last[(chat_id, msg.message_id)] = (text, _dump(markup))
        return msg

    async def edit(
        self,
        chat_id: int,
        message_id: int,
        text: str,
        markup: InlineKeyboardMarkup | None = None,
        urgency: Urgency = Urgency.NOW,
    ) -> Any:
        key = (chat_id, message_id)
        now = (text, _dump(markup))
        if self._last.get(key) == now:
            return None
        self._last[key] = now
        return await self._call(
            chat_id,
            lambda: self.bot.edit_message_text(
                text=text,
                chat_id=chat_id,
                message_id=message_id,
                reply_markup=markup,
                parse_mode="HTML",
            ),
        )

    async def flush(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def _dump(markup: InlineKeyboardMarkup | None) -> str:
    return markup.model_dump_json(exclude_none=True) if markup is not None else ""
