"""What a message shows, as two short digests (text, keyboard): from the values
as they go on the wire, and remembered (:class:`ShownStore`) in Redis by the
shared limiter or -- without one -- in a bounded in-process LRU
(:class:`LocalMemory`)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from aiogram import Bot
from aiogram.methods import TelegramMethod

from tables import survived
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.digest import is_older, shown_after

if TYPE_CHECKING:
    from telegram_bot.delivery.flood.gate import Receipt
    from telegram_bot.delivery.flood.limiter import FloodLimiter

log = logging.getLogger(__name__)

EDITS = frozenset(
    {
        "editMessageText",
        "editMessageReplyMarkup",
        "editEphemeralMessageText",
        "editEphemeralMessageReplyMarkup",
    }
)
"""Edits of one message."""
MARKUP_ONLY = frozenset({"editMessageReplyMarkup", "editEphemeralMessageReplyMarkup"})
TEXT_FIELDS = ("text", "parse_mode", "entities", "link_preview_options", "rich_message")

GONE_DIGEST = "gone"
"""The digests a deleted message is recorded with (no content digest equals it)."""


class LocalMemory:
    """What each message shows, in a bounded in-process LRU: its two digests and
    the table version it renders.  As in Redis, an edit of an older version of
    the same table is refused (a stale press's redraw once hid a seat's takeover)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._d: OrderedDict[Address, tuple[str, str, str]] = OrderedDict()

    def admit(self, key: Address, text: str | None, markup: str, version: str = "") -> bool:
        """True (and remembered) when the edit changes something and does not
        go backwards."""
        ct, cm, cv = self._d.get(key, ("?", "?", ""))
        if is_older(version, cv):
            return False
        v = shown_after(version, cv)
        t = text if text is not None else ct
        self.set(key, (t, markup), v)
        return (t, markup) != (ct, cm)

    def set(self, key: Address, value: tuple[str, str], version: str | None = None) -> None:
        """Remember what the message shows (``version``: None keeps the one known)."""
        if version is None:
            version = self._d.get(key, ("", "", ""))[2]
        self._d[key] = (*value, version)
        self._d.move_to_end(key)
        while len(self._d) > self.size:
            self._d.popitem(last=False)

    def forget(self, key: Address) -> None:
        """Its content is unknown; the version asked stays (the edit may have landed)."""
        cur = self._d.get(key)
        if cur is not None:
            self._d[key] = ("?", "?", cur[2])

    def bury(self, key: Address, version: str) -> None:
        """Deleted: every edit of it renders an older version (``version`` is a
        :func:`telegram_bot.delivery.digest.gone_version`)."""
        self.set(key, (GONE_DIGEST, GONE_DIGEST), version)


class ShownStore:
    """What the messages show: in Redis through ``limiter``, else in ``memory``."""

    def __init__(self, limiter: FloodLimiter | None, memory_size: int) -> None:
        self.limiter = limiter
        self.memory = LocalMemory(memory_size)
        self._background: set[asyncio.Task[None]] = set()

    async def remember(self, key: Address, text: str, markup: str) -> None:
        if self.limiter is None:
            self.memory.set(key, (text, markup))
        else:
            await self.limiter.remember(key, text, markup)

    async def bury(self, key: Address, version: str) -> None:
        """The message was deleted (#28): recorded as showing ``version`` (a
        :func:`telegram_bot.delivery.digest.gone_version`), newer than any edit
        of its table, so every process drops its later edits (``STALE``)."""
        if self.limiter is None:
            self.memory.bury(key, version)
            return
        # Redis down: this process drops its edits; a 400 is quiet
        with survived(log, "%s not recorded as deleted; a later edit's 400 is quiet", key):
            await self.limiter.remember(key, GONE_DIGEST, GONE_DIGEST, version)

    async def forget(self, key: Address | None, receipt: Receipt | None = None) -> None:
        """An edit failed: what the message shows is unknown (the lease goes)."""
        if key is None:
            return
        if self.limiter is None:
            self.memory.forget(key)
            return
        owner = receipt.owner if receipt is not None and receipt.held else ""
        if receipt is not None:
            receipt.held = False
        # never hide the original error
        with survived(log, "the digest of %s not forgotten; it lapses by itself", key):
            await self.limiter.forget(key, owner)

    def forget_later(self, key: Address | None, receipt: Receipt | None = None) -> None:
        """Cancelled mid-call: forget without awaiting (the edit may not have landed)."""
        if key is None:
            return
        self.memory.forget(key)
        if self.limiter is not None:
            task = asyncio.get_running_loop().create_task(self.forget(key, receipt))
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def release(self, key: Address | None, receipt: Receipt) -> None:
        """The edit went out: its lease goes and its entries count from now, in
        one round trip (a lease it outlived is logged)."""
        if key is None or not receipt.held or self.limiter is None:
            return
        receipt.held = False
        stamp = receipt.take()
        with survived(log, "the edit lease of %s not released; it lapses by itself", key):
            if not await self.limiter.release_edit(key, receipt.owner, stamp):
                log.warning("the edit of %s outlived its lease: its content is unknown", key)


def digest(value: Any) -> str:
    raw = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(raw.encode(), digest_size=8).hexdigest()


def content_digests(bot: Bot, method: TelegramMethod[Any]) -> tuple[str | None, str]:
    """(text digest, None for a markup-only edit; keyboard digest) of a send or
    edit, from the values as they go on the wire (the bot's defaults applied)."""
    data = method.model_dump(warnings=False)

    def prepared(name: str) -> Any:
        return bot.session.prepare_value(data.get(name), bot=bot, files={})

    markup = digest(prepared("reply_markup"))
    if method.__api_method__ in MARKUP_ONLY:
        return None, markup
    return digest([prepared(name) for name in TEXT_FIELDS]), markup
