"""Windows this process was refused by, and until when they are full (#39).

A chat's windows that refused a call a moment ago refuse the next new call
the same way: asked again before then, they cost a script of five commands
to say so.  Other processes only fill them more (or give an entry back,
which is waited out here); a refund in this process forgets them.  A call
that waited its turn asks Redis again (:meth:`FloodLimiter._run`'s
``again``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from engine.clock import Clock
from telegram_bot.delivery.flood.rates import Window

Key = tuple[tuple[tuple[str, int, float], ...], float]
"""A chat's windows (key, limit, seconds) and a call's cost."""

KEPT = 1024
"""Windows kept at most before the lapsed ones are dropped."""


def _key(buckets: Sequence[tuple[str, Window]], cost: float) -> Key:
    return tuple((k, w.limit, w.seconds) for k, w in buckets), cost


class KnownFull:
    """Until when a chat's windows are known full for a cost (``clock``: the
    limiter's)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._until: dict[Key, float] = {}

    def wait(self, buckets: Sequence[tuple[str, Window]], cost: float) -> float:
        """Seconds ``buckets`` are still known full for ``cost`` (0: ask Redis)."""
        if not buckets:
            return 0.0
        key = _key(buckets, cost)
        until = self._until.get(key)
        if until is None:
            return 0.0
        left = until - float(self.clock())
        if left <= 0:
            del self._until[key]
            return 0.0
        return left

    def note(self, buckets: Sequence[tuple[str, Window]], cost: float, until: float) -> None:
        """They refused a call of ``cost`` until ``until``."""
        if len(self._until) >= KEPT:  # the lapsed ones go
            now = float(self.clock())
            self._until = {k: t for k, t in self._until.items() if t > now}
        self._until[_key(buckets, cost)] = until

    def forget(self, keys: Iterable[str]) -> None:
        """Entries of these windows went back: they may have room again."""
        gone = set(keys)
        for key in [k for k in self._until if any(b[0] in gone for b in k[0])]:
            del self._until[key]
