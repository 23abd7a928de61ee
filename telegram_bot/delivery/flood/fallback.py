"""The flood limiter when Redis is unreachable: replies still go out.

:class:`FallbackFloodLimiter` wraps the shared Redis limiter
(:class:`telegram_bot.delivery.flood.limiter.FloodLimiter`): every call goes to
it, and when one fails (:class:`tables.ServiceUnavailable`) the tokens come
from in-process buckets of the same rates (:class:`LocalBuckets`) -- so an
apology ("the game is unavailable for a moment") is not held up by the very
outage it reports -- for ``fallback_for`` seconds before it asks Redis again (a
stopped Redis would otherwise make every message wait for the socket timeout).
While it falls back nothing is remembered of what a message shows: every edit
is sent (Telegram answers "not modified" to a no-op one), and the messages
touched meanwhile have their Redis digest forgotten before their next edit --
a digest from before the outage would drop an edit back to that content as a
no-op -- and no edit lease is taken (the process's own per-message lock orders
its edits, as with one process).  Each switch to the fallback is logged once.
"""

from __future__ import annotations

import logging

from engine.clock import Clock
from tables import ServiceUnavailable
from telegram_bot.delivery.flood.limiter import EditTicket, FloodLimiter, Headroom, Rate, Verdict

log = logging.getLogger(__name__)

FALLBACK_FOR = 5.0
"""Seconds the limiter stays on its in-process buckets after Redis failed."""


class LocalBuckets:
    """In-process token buckets (key -> tokens, stamp), the same arithmetic as the
    Redis script of :mod:`telegram_bot.delivery.flood.limiter`: all-or-nothing takes."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._state: dict[str, tuple[float, float]] = {}

    def _level(self, key: str, rate: Rate, now: float) -> float:
        tokens, stamp = self._state.get(key, (rate.burst, now))
        if now > stamp:
            tokens = min(rate.burst, tokens + (now - stamp) * rate.per_second)
        return tokens

    def take(self, buckets: list[tuple[str, Rate]], cost: float) -> Verdict:
        now = float(self.clock())
        levels = [self._level(key, rate, now) for key, rate in buckets]
        wait, short = 0.0, -1
        for i, ((_key, rate), level) in enumerate(zip(buckets, levels, strict=True)):
            if level < cost and (need := (cost - level) / rate.per_second) > wait:
                wait, short = need, i
        if wait > 0:
            return Verdict(max(wait, 1e-6), short == 0)
        for (key, _rate), level in zip(buckets, levels, strict=True):
            self._state[key] = (level - cost, now)
        return Verdict(0.0)

    def refund(self, buckets: list[tuple[str, Rate]], cost: float, held: float = 0.0) -> None:
        now = float(self.clock())
        for key, rate in buckets:
            if key in self._state and held * rate.per_second < cost:
                self._state[key] = (min(rate.burst, self._level(key, rate, now) + cost), now)

    def headroom(self, buckets: list[tuple[str, Rate]]) -> Headroom:
        now = float(self.clock())
        first, rest = 0.0, 0.0
        for i, (key, rate) in enumerate(buckets):
            need = 1.0 + rate.reserve
            level = self._level(key, rate, now)
            if level < need:
                w = (need - level) / rate.per_second
                if i == 0:
                    first = w
                else:
                    rest = max(rest, w)
        return Headroom(first, rest)


class FallbackFloodLimiter:
    """``FallbackFloodLimiter(FloodLimiter(svc.kv, config))``: the limiter
    ``redis``, falling back to :class:`LocalBuckets` while Redis is unreachable
    (see the module docstring).  A :class:`telegram_bot.delivery.flood.limiter.Limiter`;
    the Redis limiter's own extras (``acquire``, ``wait``, ``shown``, its keys and
    round trips) are on ``redis``."""

    def __init__(self, redis: FloodLimiter, *, fallback_for: float = FALLBACK_FOR) -> None:
        self.redis = redis
        self.config = redis.config
        self.clock = redis.clock
        self.local = LocalBuckets(redis.clock)
        self.fallback_for = fallback_for
        self.fallbacks = 0  # calls answered by the local buckets
        self._down_until = float("-inf")
        self._touched: set[tuple[int, int]] = set()  # messages sent or edited meanwhile

    @property
    def falling_back(self) -> bool:
        """True while the limiter does not ask Redis (it failed a moment ago)."""
        return float(self.clock()) < self._down_until

    def _failed(self, error: ServiceUnavailable) -> None:
        if not self.falling_back:
            log.warning("flood limiter: Redis unavailable, in-process buckets for now: %s", error)
        self._down_until = float(self.clock()) + self.fallback_for

    def _local_take(self, chat_id: int | None, cost: float) -> Verdict:
        self.fallbacks += 1
        return self.local.take(self.redis.buckets(chat_id), cost)

    async def take(self, chat_id: int | None = None, *, cost: float = 1) -> Verdict:
        if not self.falling_back:
            try:
                return await self.redis.take(chat_id, cost=cost)
            except ServiceUnavailable as e:
                self._failed(e)
        return self._local_take(chat_id, cost)

    async def _forget_touched(self, chat_id: int, message_id: int) -> None:
        """Before Redis judges an edit of a message changed during the fallback."""
        if (chat_id, message_id) in self._touched:
            await self.redis.forget(chat_id, message_id)
            self._touched.discard((chat_id, message_id))

    async def admit_edit(self, edit: EditTicket) -> Verdict:
        key = (edit.chat_id, edit.message_id)
        if not self.falling_back:
            try:
                await self._forget_touched(*key)
                return await self.redis.admit_edit(edit)
            except ServiceUnavailable as e:
                self._failed(e)
        self._touched.add(key)
        if edit.prepaid:
            return Verdict(0.0)  # unknown: send it (no lease: the process's own order)
        return self._local_take(edit.chat_id, 1)

    async def refund(
        self, chat_id: int | None = None, *, cost: float = 1, held: float = 0.0
    ) -> None:
        if not self.falling_back:
            try:
                await self.redis.refund(chat_id, cost=cost, held=held)
                return
            except ServiceUnavailable as e:
                self._failed(e)
        self.local.refund(self.redis.buckets(chat_id), cost, held)

    async def headroom(
        self, chat_id: int | None = None, message_id: int | None = None, gap: float = 0.0
    ) -> Headroom:
        if not self.falling_back:  # (falling back: no edit is spaced across processes)
            try:
                return await self.redis.headroom(chat_id, message_id, gap)
            except ServiceUnavailable as e:
                self._failed(e)
        return self.local.headroom(self.redis.buckets(chat_id))

    async def remember(
        self, chat_id: int, message_id: int, text_digest: str, markup_digest: str, version: str = ""
    ) -> None:
        if not self.falling_back:
            try:
                await self.redis.remember(chat_id, message_id, text_digest, markup_digest, version)
                self._touched.discard((chat_id, message_id))
                return
            except ServiceUnavailable as e:
                self._failed(e)
        self._touched.add((chat_id, message_id))

    async def forget(self, chat_id: int, message_id: int, lease: str = "") -> None:
        if not self.falling_back:
            try:
                await self.redis.forget(chat_id, message_id, lease)
                self._touched.discard((chat_id, message_id))
                return
            except ServiceUnavailable as e:
                self._failed(e)
        self._touched.add((chat_id, message_id))

    async def release_edit(self, chat_id: int, message_id: int, lease: str) -> bool:
        if not self.falling_back:
            try:
                return await self.redis.release_edit(chat_id, message_id, lease)
            except ServiceUnavailable as e:  # the lease lapses by itself
                self._failed(e)
        return True

    async def last_digest(self, chat_id: int, message_id: int) -> str | None:
        if not self.falling_back:
            try:
                return await self.redis.last_digest(chat_id, message_id)
            except ServiceUnavailable as e:
                self._failed(e)
        return None
