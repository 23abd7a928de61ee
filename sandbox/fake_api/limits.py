"""Telegram's flood limits as sliding windows on the fake's clock, and call statistics.

Telegram does not publish exact values; the Bots FAQ says about one message per
second in a chat (short bursts allowed), 20 messages per minute in a group and
about 30 messages per second overall. Edits count like sends.  Telegram counts
windows, not buckets (#28): a message is refused when ANY window of the limit's
length ending now already holds its limit -- 30 in any second overall, 20 in any
minute per group, and per chat ``per_chat_burst`` in any ``per_chat_burst /
per_chat_per_second`` seconds (3 in any 3 s: a short burst of 3, one a second
on average).  A token bucket with a burst lets more through than that in its
first second or minute; this fake does not.

Ephemeral messages (Bot API 10.2: a message in a group that only its receiver
sees) are the one write whose count Telegram's docs leave open, so the fake plays
either Telegram, as ``RateLimits.ephemeral_counted`` says (#24):

- counted (the default, the safe reading for a bot): an ephemeral send or edit is
  a message in that group like any other -- the group's chat window and its 20
  in any minute;
- not counted: an ephemeral message is a message to one user, so it is counted
  like one -- in a window of its own per (group, receiver) with the per-chat rule
  (``per_chat_burst`` in any ``per_chat_burst / per_chat_per_second`` seconds)
  and in the bot's overall 30 a second, never in the group's chat window nor its
  minute.  Public writes to the group are counted as always.

Both answer a write over a limit with the same 429 (``Too Many Requests: retry
after N``, ``parameters.retry_after``), N the seconds until the fullest window
that refused it lets one more through.  Where the fake is started for people
the environment picks the Telegram: ``FAKE_EPHEMERAL_COUNTED`` (``1`` or ``0``,
:meth:`RateLimits.from_env`; the sandbox's limits are off unless ``FAKE_LIMITS``
is ``1``, :func:`sandbox.page.server.sandbox_limits`).
"""

from __future__ import annotations

import math
import os
import time
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from engine.clock import Clock

EPHEMERAL_COUNTED_ENV = "FAKE_EPHEMERAL_COUNTED"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def env_flag(name: str, default: bool, environ: Mapping[str, str] | None = None) -> bool:
    """A yes/no environment variable (``1``/``0``, ``true``/``false``, ``yes``/``no``,
    ``on``/``off``, as the bot's settings read them); unset or empty: ``default``."""
    raw = (os.environ if environ is None else environ).get(name, "").strip().lower()
    if not raw:
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ValueError(f"{name}={raw!r}: expected 1 or 0")


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
    """Flood limits; ``RateLimits.off()`` disables them all.  Each limit is a
    sliding window of ``burst`` messages in ``burst / rate`` seconds: per chat 3
    in any 3 s, per group 20 in any 60 s, overall 30 in any second.
    ``ephemeral_counted``: which Telegram (see the module) -- an ephemeral write
    counts in its group's windows (True), or in its receiver's window there."""

    enabled: bool = True
    per_chat_per_second: float = 1.0
    per_chat_burst: int = 3
    per_group_per_minute: float = 20.0
    per_group_burst: int = 20
    global_per_second: float = 30.0
    global_burst: int = 30
    ephemeral_counted: bool = True

    @classmethod
    def off(cls) -> RateLimits:
        return cls(enabled=False)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **values: Any) -> RateLimits:
        """Telegram's limits (``values`` change some), ephemeral writes counted or
        not as ``FAKE_EPHEMERAL_COUNTED`` says (default 1: counted)."""
        counted = env_flag(EPHEMERAL_COUNTED_ENV, True, environ)
        return cls(**{"ephemeral_counted": counted, **values})


@dataclass
class SlidingWindow:
    """At most ``limit`` messages in any ``seconds`` (the times of those still in
    the window, oldest first)."""

    limit: int
    seconds: float
    times: deque[float] = field(default_factory=deque)

    def wait_time(self, now: float) -> float:
        """Seconds until one more message fits (0 if it fits now)."""
        while self.times and self.times[0] <= now - self.seconds:
            self.times.popleft()
        if len(self.times) < self.limit:
            return 0.0
        return self.times[len(self.times) - self.limit] + self.seconds - now

    def take(self, now: float) -> None:
        self.times.append(now)


class FakeFloodControl:
    """Per-chat, per-group and global windows; a send counts in each of them (an
    ephemeral one, when not counted in its group: per receiver and global)."""

    def __init__(self, limits: RateLimits, clock: Clock) -> None:
        self.limits = limits
        self.clock = clock
        self._chat: dict[int, SlidingWindow] = {}
        self._group: dict[int, SlidingWindow] = {}
        self._receiver: dict[tuple[int, int], SlidingWindow] = {}
        lim = limits
        self._global = SlidingWindow(lim.global_burst, lim.global_burst / lim.global_per_second)
        # what the last refusal was: which window, when, and the times it held
        self.last_refusal = ""

    def spend(self, chat_id: int, is_group: bool, seconds: float) -> None:
        """A test's burst: the chat's budget (and a group's per-minute one) is spent
        -- its next message goes through once ``seconds`` are over (429 before)."""
        now = self.clock()
        windows = [self._chat_window(chat_id)]
        if is_group:
            windows.append(self._group_window(chat_id))
        for window in windows:  # full, its oldest entry leaving in ``seconds``
            window.times = deque([now + seconds - window.seconds] * window.limit)

    def _per_chat(self) -> SlidingWindow:
        lim = self.limits
        return SlidingWindow(lim.per_chat_burst, lim.per_chat_burst / lim.per_chat_per_second)

    def _chat_window(self, chat_id: int) -> SlidingWindow:
        if chat_id not in self._chat:
            self._chat[chat_id] = self._per_chat()
        return self._chat[chat_id]

    def _receiver_window(self, chat_id: int, receiver: int) -> SlidingWindow:
        """An ephemeral message's own window, as a chat with its receiver alone."""
        key = (chat_id, receiver)
        if key not in self._receiver:
            self._receiver[key] = self._per_chat()
        return self._receiver[key]

    def _group_window(self, chat_id: int) -> SlidingWindow:
        lim = self.limits
        if chat_id not in self._group:
            seconds = lim.per_group_burst / (lim.per_group_per_minute / 60.0)
            self._group[chat_id] = SlidingWindow(lim.per_group_burst, seconds)
        return self._group[chat_id]

    def acquire(self, chat_id: int | None, is_group: bool, receiver: int | None = None) -> int:
        """Count one outgoing message (``receiver``: an ephemeral message's, in a
        group); return 0, or ``retry_after`` seconds (not counted)."""
        lim = self.limits
        if not lim.enabled:
            return 0
        now = float(self.clock())
        windows = [self._global]
        if chat_id is not None and receiver is not None and not lim.ephemeral_counted:
            windows.append(self._receiver_window(chat_id, receiver))
        elif chat_id is not None:
            windows.append(self._chat_window(chat_id))
            if is_group:
                windows.append(self._group_window(chat_id))
        wait = max(window.wait_time(now) for window in windows)
        if wait > 0:
            self.last_refusal = self._describe(windows, now, chat_id, receiver)
            return max(1, math.ceil(wait))
        for window in windows:
            window.take(now)
        return 0

    def _describe(
        self, windows: list[SlidingWindow], now: float, chat_id: int | None, receiver: int | None
    ) -> str:
        """A refusal, for a test's message: the full window and its messages'
        times (seconds before now)."""
        full = max(windows, key=lambda window: window.wait_time(now))
        kind = (
            "overall"
            if full is self._global
            else "group minute"
            if full in self._group.values()
            else "receiver"
            if receiver is not None and full in self._receiver.values()
            else "chat"
        )
        ago = ", ".join(f"{now - t:.3f}" for t in full.times)
        return (
            f"chat {chat_id}: {kind} window ({full.limit} in {full.seconds:g} s) "
            f"held messages {ago} s ago"
        )


@dataclass
class Stats:
    """What the bot asked of the fake: calls per method, errors, 429s."""

    calls: Counter[str] = field(default_factory=Counter)
    errors: Counter[tuple[str, int]] = field(default_factory=Counter)
    retry_after: int = 0  # number of 429 answers
    retry_after_by_chat: Counter[int] = field(default_factory=Counter)  # 429s per chat id
    refusals: list[str] = field(default_factory=list)  # which window refused each 429
    refused_at: list[float] = field(default_factory=list)  # when (the fake's clock), each
    late_answers: int = 0  # callback queries answered after the answer window
    not_modified: int = 0  # edits refused as "message is not modified" (a wasted call)
    # the first error answers in words (a test's failure message says which)
    error_texts: list[str] = field(default_factory=list)
    started_at: float = field(default_factory=time.monotonic)

    def record(self, method: str, error_code: int | None, description: str = "") -> None:
        self.calls[method] += 1
        if error_code is not None:
            self.errors[(method, error_code)] += 1
            if len(self.error_texts) < 20:
                self.error_texts.append(f"{method} {error_code}: {description}")
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
        self.refusals.clear()
        self.error_texts.clear()
        self.late_answers = self.not_modified = 0
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
