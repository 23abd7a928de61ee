"""Windows this process was refused by, and until when they are full (#39): asked
again before then, they would cost a script of five commands to say so.  Another
process may give an entry back, so a refusal is remembered :data:`REMEMBERED`
seconds at most; a refund here forgets it, and a call that waited its turn asks
Redis again (``again``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.clock import Clock
from telegram_bot.delivery.flood.rates import Window

Key = tuple[tuple[str, int, float], ...]
"""A chat's windows (key, limit, seconds)."""

KEPT = 1024
"""Refusals kept at most: past that the lapsed ones go (if none, all of them)."""

REMEMBERED = 2.0
"""Seconds a refusal is remembered at most."""


def _key(buckets: Sequence[tuple[str, Window]]) -> Key:
    return tuple((k, w.limit, w.seconds) for k, w in buckets)


class KnownFull:
    """Until when a chat's windows are known full (``clock``: the limiter's)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        # -> until when they are full, and until when that is trusted
        self._until: dict[Key, tuple[float, float]] = {}
        self._by_window: dict[str, set[Key]] = {}  # a window key -> its refusals

    def wait(self, buckets: Sequence[tuple[str, Window]]) -> float:
        """Seconds ``buckets`` are still known full (0: ask Redis)."""
        if not buckets:
            return 0.0
        key = _key(buckets)
        known = self._until.get(key)
        if known is None:
            return 0.0
        now = float(self.clock())
        until, trusted = known
        if now >= min(until, trusted):
            self._drop(key)
            return 0.0
        return until - now

    def note(self, buckets: Sequence[tuple[str, Window]], until: float) -> None:
        """They refused a call until ``until``."""
        now = float(self.clock())
        if len(self._until) >= KEPT:
            for lapsed in [k for k, (t, r) in self._until.items() if min(t, r) <= now]:
                self._drop(lapsed)
            if len(self._until) >= KEPT:
                self._until.clear()
                self._by_window.clear()
        key = _key(buckets)
        self._until[key] = (until, now + REMEMBERED)
        for window, _limit, _seconds in key:
            self._by_window.setdefault(window, set()).add(key)

    def forget(self, keys: Iterable[str]) -> None:
        """Entries of these windows went back: they may have room again."""
        for window in keys:
            for key in list(self._by_window.get(window, ())):
                self._drop(key)

    def _drop(self, key: Key) -> None:
        self._until.pop(key, None)
        for window, _limit, _seconds in key:
            refusals = self._by_window.get(window)
            if refusals is not None:
                refusals.discard(key)
                if not refusals:
                    del self._by_window[window]
