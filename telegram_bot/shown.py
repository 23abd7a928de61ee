"""What a message shows, as two short digests (text, keyboard): from the values
as they go on the wire, and -- without a shared limiter -- remembered in a
bounded in-process LRU (:class:`LocalMemory`)."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from typing import Any

from aiogram import Bot
from aiogram.methods import TelegramMethod

EDITS = frozenset(
    {
        "editMessageText",
        "editMessageReplyMarkup",
        "editEphemeralMessageText",
        "editEphemeralMessageReplyMarkup",
    }
)
"""Edits of one message; an ephemeral one's key is (chat, -ephemeral_message_id)."""
MARKUP_ONLY = frozenset({"editMessageReplyMarkup", "editEphemeralMessageReplyMarkup"})
TEXT_FIELDS = ("text", "parse_mode", "entities", "link_preview_options", "rich_message")

MessageKey = tuple[int, int]
"""(chat id, message id)"""


class LocalMemory:
    """What each message shows, in process memory (bounded LRU)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._d: OrderedDict[MessageKey, tuple[str, str]] = OrderedDict()

    def admit(self, key: MessageKey, text: str | None, markup: str) -> bool:
        """True (and remembered) when the edit changes something."""
        cur = self._d.get(key)
        new = (text if text is not None else (cur[0] if cur else "?"), markup)
        if cur == new:
            self._d.move_to_end(key)
            return False
        self.set(key, new)
        return True

    def set(self, key: MessageKey, value: tuple[str, str]) -> None:
        self._d[key] = value
        self._d.move_to_end(key)
        while len(self._d) > self.size:
            self._d.popitem(last=False)

    def forget(self, key: MessageKey) -> None:
        self._d.pop(key, None)


def digest(value: Any) -> str:
    raw = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(raw.encode(), digest_size=8).hexdigest()


def content_digests(bot: Bot, method: TelegramMethod[Any]) -> tuple[str | None, str]:
    """(text digest or None for a markup-only edit, keyboard digest) of a send or edit,
    from the values as they go on the wire (bot defaults such as parse_mode applied)."""
    data = method.model_dump(warnings=False)

    def prepared(name: str) -> Any:
        return bot.session.prepare_value(data.get(name), bot=bot, files={})

    markup = digest(prepared("reply_markup"))
    if method.__api_method__ in MARKUP_ONLY:
        return None, markup
    return digest([prepared(name) for name in TEXT_FIELDS]), markup
