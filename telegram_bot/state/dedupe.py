"""Every update is handled once, however often and wherever it is delivered.

A webhook retry delivers the same update (same ``update_id``) again, perhaps to
another bot process; one press is one callback query with its own id, whichever
update carries it.  :class:`UpdateDedupe`, an outer middleware of the
Dispatcher's ``update`` observer, claims the update in Redis (``SET NX`` with a
short TTL, through ``svc.kv``) before any handler runs, by ONE key:

``P cbq:{<callback query id>}``  -- string, a callback query (the press);
``P upd:{<bot id>:<update id>}`` -- string, any other update
(spelled in :class:`telegram_bot.state.keys.DedupeKeys`).

One key, so a claim is one ``SET NX`` on one node: two keys sit in different
slots of a Redis Cluster, and two processes could each win one of them -- both
then dropped the update, nobody answered it, and the won key was never released
(#28).  Each key is its own hash tag, so the claims spread over the cluster's
slots (no hot slot).  An update whose key is already claimed is a duplicate: it is dropped without running a handler -- and without answering the
callback query: the copy that holds the claim answers it (Telegram refuses a
second answer, and an early silent one would swallow that copy's alert).  When
the handler fails (or a stop cancels it, #28) the claim is released, so a
redelivery is handled afresh (the writes themselves are idempotent by request
id).  When Redis is unavailable the
update goes through unclaimed (logged): a move and a lobby write still carry
their request id, which the table service applies once.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware, Bot
from aiogram.types import TelegramObject, Update

from tables import KeyValueStore, ServiceUnavailable
from telegram_bot.state.keys import DedupeKeys

log = logging.getLogger(__name__)

DEDUPE_TTL = 600.0
"""Seconds a claim lives: far beyond Telegram's webhook retries of one update."""


class UpdateDedupe(BaseMiddleware):
    """``dp.update.outer_middleware(UpdateDedupe(svc.kv))``: see the module."""

    def __init__(self, kv: KeyValueStore, ttl: float = DEDUPE_TTL) -> None:
        self.kv = kv
        self._keys = DedupeKeys(kv)
        self.ttl_ms = max(1, int(ttl * 1000))
        self.duplicates = 0
        """Updates dropped as duplicates by this process (diagnostics)."""

    def keys(self, update: Update, bot_id: int) -> list[str]:
        """The claim key of ``update``, alone (see the module docstring)."""
        if update.callback_query is not None:  # the press, whichever update carries it
            return [self._keys.callback_query(update.callback_query.id)]
        return [self._keys.update(bot_id, update.update_id)]

    async def claim(self, update: Update, bot_id: int) -> list[str] | None:
        """Claim ``update``: the keys now held (to release on failure), ``None``
        for a duplicate; an empty list when Redis could not be asked."""
        keys = self.keys(update, bot_id)
        try:
            claimed = await self.kv.set_nx(keys, "1", ttl_ms=self.ttl_ms)
        except ServiceUnavailable:
            log.warning("update %s not deduplicated: Redis unavailable", update.update_id)
            return []
        if all(claimed):
            return keys
        return None

    async def release(self, keys: list[str]) -> None:
        for key in keys:  # one key a call: they may sit in different cluster slots
            with contextlib.suppress(ServiceUnavailable):
                await self.kv.delete(key)

    async def __call__(
        self,
        handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
        event: TelegramObject,
        data: dict[str, Any],
    ) -> Any:
        if not isinstance(event, Update):  # pragma: no cover - registered on dp.update
            return await handler(event, data)
        bot: Bot | None = data.get("bot")
        held = await self.claim(event, bot.id if bot is not None else 0)
        if held is None:
            self.duplicates += 1
            log.info("update %s is a duplicate: dropped", event.update_id)
            return None
        try:
            return await handler(event, data)
        except BaseException:  # failed, or cut short by a stop (cancelled; #28)
            await self.release(held)
            raise
