"""Telegram's flood limits as token buckets on the fake's clock, and call statistics.

Telegram does not publish exact values; the Bots FAQ says about one message per
second in a chat (short bursts allowed), 20 messages per minute in a group and
about 30 messages per second overall. Edits count like sends.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from engine.clock import Clock


class ManualClock:
    """A clock that only moves when told to (for rate-limit tests without sleeping)."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass(frozen=True)
class RateLimits:
    """Flood limits; ``RateLimits.off()`` disables them all."""

    enabled: bool = True
    per_chat_per_second: float = 1.0
    per_chat_burst: int = 3
    per_group_per_minute: float = 20.0
    per_group_burst: int = 20
    global_per_second: float = 30.0
    global_burst: int = 30

    @classmethod
    def off(cls) -> RateLimits:
        return cls(enabled=False)


@dataclass
class TokenBucket:
    rate: float  # tokens per second
    capacity: float
    tokens: float
    stamp: float

    def refill(self, now: float) -> None:
        if now > self.stamp:
            self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
            self.stamp = now

    def wait_time(self, now: float) -> float:
        """Seconds until one token is available (0 if one is available now)."""
        self.refill(now)
        if self.tokens >= 1.0:
            return 0.0
        return (1.0 - self.tokens) / self.rate


class FakeFloodControl:
    """Per-chat, per-group and global buckets; a send takes one token from each."""

    def __init__(self, limits: RateLimits, clock: Clock) -> None:
        self.limits = limits
        self.clock = clock
        self._chat: dict[int, TokenBucket] = {}
        self._group: dict[int, TokenBucket] = {}
        self._global: TokenBucket | None = None

    def _bucket(self, rate: float, capacity: int) -> TokenBucket:
        return TokenBucket(rate=rate, capacity=capacity, tokens=capacity, stamp=self.clock())

    def acquire(self, chat_id: int | None, is_group: bool) -> int:
        """Take the tokens for one outgoing message; return 0, or ``retry_after`` seconds."""
        lim = self.limits
        if not lim.enabled:
            return 0
        now = self.clock()
        buckets: list[TokenBucket] = []
        if self._global is None:
            self._global = self._bucket(lim.global_per_second, lim.global_burst)
        buckets.append(self._global)
        if chat_id is not None:
            if chat_id not in self._chat:
                self._chat[chat_id] = self._bucket(lim.per_chat_per_second, lim.per_chat_burst)
            buckets.append(self._chat[chat_id])
            if is_group:
                if chat_id not in self._group:
                    self._group[chat_id] = self._bucket(
                        lim.per_group_per_minute / 60.0, lim.per_group_burst
                    )
                buckets.append(self._group[chat_id])
        wait = max(bucket.wait_time(now) for bucket in buckets)
        if wait > 0:
            return max(1, math.ceil(wait))
        for bucket in buckets:
            bucket.tokens -= 1.0
        return 0


@dataclass
class Stats:
    """What the bot asked of the fake: calls per method, errors, 429s."""

    calls: Counter[str] = field(default_factory=Counter)
    errors: Counter[tuple[str, int]] = field(default_factory=Counter)
    retry_after: int = 0  # number of 429 answers
    retry_after_by_chat: Counter[int] = field(default_factory=Counter)  # 429s per chat id
    late_answers: int = 0  # callback queries answered after the answer window
    started_at: float = field(default_factory=time.monotonic)

    def record(self, method: str, error_code: int | None) -> None:
        self.calls[method] += 1
        if error_code is not None:
            self.errors[(method, error_code)] += 1
            if error_code == 429:
                self.retry_after += 1

    @property
    def total_calls(self) -> int:
        return sum(self.calls.values())

    def reset(self) -> None:
        self.calls.clear()
        self.errors.clear()
        self.retry_after = 0
        self.retry_after_by_chat.clear()
        self.started_at = time.monotonic()

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": dict(self.calls),
            "total_calls": self.total_calls,
            "errors": [
                {"method": method, "error_code": code, "count": count}
                for (method, code), count in sorted(self.errors.items())
            ],
            "retry_after": self.retry_after,
        }
