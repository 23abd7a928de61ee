"""Preferences of users and chats (language, where hands go), read through the
chat state, with an optional short in-process cache."""

from __future__ import annotations

import time
from typing import Any

from telegram_bot.state.chat_state import ChatStateStore, Prefs

CACHE_SECONDS = 0.0
"""No cache across updates by default: correct with any number of processes."""


class PrefsCache:
    """Preferences of users and chats with a short in-process cache."""

    def __init__(self, ui: ChatStateStore, ttl: float = CACHE_SECONDS) -> None:
        self.ui = ui
        self.ttl = ttl
        self._cache: dict[int, tuple[float, Prefs]] = {}

    async def get(self, who: int) -> Prefs:
        return (await self.get_many(who))[who]

    async def get_many(self, *who: int) -> dict[int, Prefs]:
        """Preferences of users and chats: those not cached in ONE round trip."""
        now = time.monotonic()
        out: dict[int, Prefs] = {}
        for w in who:
            hit = self._cache.get(w)
            if hit is not None and hit[0] > now:
                out[w] = hit[1]
        missing = [w for w in who if w not in out]
        if missing:
            read = await self.ui.many_prefs(missing)
            for w, prefs in read.items():
                self.put(w, prefs)
            out.update(read)
        return out

    def put(self, who: int, prefs: Prefs) -> None:
        if self.ttl <= 0:
            return
        if len(self._cache) > 50_000:
            self._cache.clear()
        self._cache[who] = (time.monotonic() + self.ttl, prefs)

    async def update(self, who: int, **changes: Any) -> None:
        await self.ui.set_prefs(who, **changes)
        self._cache.pop(who, None)
