"""The values of the flood limiter (:mod:`telegram_bot.delivery.flood.limiter`): its rates and
configuration, and what its calls answer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple


@dataclass(frozen=True)
class Rate:
    """A token bucket: ``per_second`` refill, ``burst`` capacity (starts full).

    ``reserve``: tokens that deferrable messages leave in the bucket for urgent
    ones (see :meth:`FloodLimiter.headroom`)."""

    per_second: float
    burst: float
    reserve: float = 0.0

    def __post_init__(self) -> None:
        if self.per_second <= 0 or self.burst < 1:
            raise ValueError(f"bad rate {self!r}: per_second > 0 and burst >= 1 needed")
        if not 0 <= self.reserve <= self.burst - 1:
            raise ValueError(f"bad rate {self!r}: 0 <= reserve <= burst - 1 needed")

    @property
    def ttl_ms(self) -> int:
        """How long until an empty bucket is full again (then the key may go)."""
        return math.ceil(self.burst / self.per_second * 1000) + 1000


@dataclass(frozen=True)
class FloodConfig:
    """Rates of the outgoing flood limiter (keys: under the service's prefix)."""

    overall: Rate = field(default_factory=lambda: Rate(25.0, 20, reserve=8))
    per_chat: Rate = field(default_factory=lambda: Rate(1.0, 2, reserve=1))
    per_group: Rate = field(default_factory=lambda: Rate(19 / 60, 18, reserve=4))
    digest_ttl: float = 3600.0  # seconds a message's last content is remembered (refreshed)
    lease: float = 5  # overall tokens a process takes at a time
    lease_ttl: float = 0.25  # seconds a process may keep unused leased tokens
    edit_ttl: float = 10.0  # seconds a message's last edit time is kept (>= the longest gap)
    edit_lease: float = 5.0  # seconds an edit in flight may keep its message (a crash: it lapses)
    lease_poll: float = 0.05  # seconds between looks at another call's edit lease
    prepaid_ttl: float = 0.25  # seconds prepaid tokens still count (older: taken again)

    @classmethod
    def with_overall(cls, per_second: float, burst: int) -> FloodConfig:
        """The default rates with the fleet-wide bucket set (``FLOOD_OVERALL_RATE``,
        ``FLOOD_OVERALL_BURST``): its reserve for urgent messages as in the default,
        within the burst."""
        default = cls()
        reserve = min(default.overall.reserve, burst - 1)
        return replace(default, overall=Rate(per_second, burst, reserve=reserve))


NOOP = -1.0  # admit_edit: the message already shows this content
STALE = -2.0  # admit_edit: the message shows a newer table version already
BUSY = -3.0  # admit_edit: another call's edit of the message is in flight (its lease)


class Verdict(NamedTuple):
    """An attempt to take tokens: ``wait`` -3 (BUSY: another call's edit of the
    message is in flight), -2 (STALE: the message shows a newer
    version), -1 (NOOP: the edit changes nothing), 0 (taken) or the seconds to wait (nothing taken); ``overall``: the bucket
    that is short is the overall one (every chat of every process waits on it)."""

    wait: float
    overall: bool = False


class Headroom(NamedTuple):
    """Seconds a deferrable message should hold back: for the overall bucket's
    reserve and for its chat's (and group's) reserve (``wait``: the longer);
    and, asked for one message, until its last edit by any process is its
    coalescing gap old (``message``)."""

    overall: float
    chat: float
    message: float = 0.0

    @property
    def wait(self) -> float:
        return max(self.overall, self.chat)
