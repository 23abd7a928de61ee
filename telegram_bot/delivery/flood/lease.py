"""This process's share of the fleet-wide flood bucket (see
:mod:`telegram_bot.delivery.flood.limiter`): tokens leased from ``rl:{all}`` in small batches
(one round trip per batch, :data:`telegram_bot.delivery.flood.scripts.LEASE_LUA`) into a
local allowance that messages use up without asking Redis.  A lease unused for
``ttl`` seconds is given back with the next lease (never kept: the fleet stays
within the overall rate plus ``ttl`` seconds of it)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

Script = Callable[[list[str], list[Any]], Awaitable[Any]]
"""``svc.kv.script(LEASE_LUA)``"""


class Grant(NamedTuple):
    """A lease: ``tokens`` lent (0: refused, wait ``wait`` seconds), the overall
    bucket's ``level`` left behind."""

    tokens: float
    level: float
    wait: float


@dataclass
class OverallLease:
    """The local allowance; ``bucket`` (key), ``per_second``, ``burst`` and
    ``reserve`` of the overall rate; ``batch`` tokens leased at a time."""

    script: Script
    bucket: str
    per_second: float
    burst: float
    reserve: float
    batch: float
    ttl: float
    bucket_ttl_ms: int
    tokens: float = 0.0  # leased and not used yet
    leased_at: float = float("-inf")
    level: float | None = None  # the bucket's level at the last lease (None: never)
    level_at: float = 0.0
    leases: int = 0  # round trips to the overall bucket
    refused_until: float = float("-inf")  # a lease was refused: no asking before
    # one lease in flight at a time: concurrent messages wait for it and use its
    # batch instead of each leasing its own (a burst would drain the fleet's bucket)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def take_local(self, cost: float, now: float) -> bool:
        """Use ``cost`` tokens of the allowance if it holds them (and is fresh)."""
        if now - self.leased_at <= self.ttl and self.tokens >= cost:
            self.tokens -= cost
            return True
        return False

    def give_back(self, cost: float) -> None:
        """Tokens taken but not used (the chat was short, or a refund)."""
        self.tokens += cost

    async def take(self, cost: float, now: float) -> float:
        """``cost`` tokens from the allowance, leasing a batch when it is short:
        0 when taken, else the seconds to wait."""
        if self.take_local(cost, now):
            return 0.0
        async with self.lock:
            if self.take_local(cost, now):  # the lease we waited for brought some
                return 0.0
            return await self.lease(cost, now)

    async def lease(self, cost: float, now: float) -> float:
        """Lease a batch (at least ``cost``) and take ``cost`` of it: 0 when
        taken, else the seconds until the overall bucket holds ``cost`` (after
        a refusal this process does not ask again before that time is up)."""
        if now < self.refused_until:
            return self.refused_until - now
        back = self.tokens if now - self.leased_at > self.ttl else 0.0
        if back:
            self.tokens = 0.0
        want = max(self.batch, cost)
        self.leases += 1
        try:
            raw = await self.script(
                [self.bucket],
                [
                    repr(now),
                    repr(self.per_second),
                    repr(float(self.burst)),
                    repr(float(want)),
                    repr(float(cost)),
                    repr(float(back)),
                    self.bucket_ttl_ms,
                ],
            )
        except BaseException:
            self.tokens += back  # not given back after all
            raise
        granted, level, wait = (raw.decode() if isinstance(raw, bytes) else str(raw)).split(";")
        grant = Grant(float(granted), float(level), float(wait))
        self.level, self.level_at = grant.level, now
        if grant.tokens <= 0:
            self.refused_until = now + grant.wait
            return grant.wait
        self.tokens += grant.tokens - cost
        self.leased_at = now
        return 0.0

    def headroom(self, now: float) -> float:
        """Seconds until this process could take a token and leave the overall
        reserve: from its allowance and the level seen at its last lease (other
        processes' leases since are not seen; the next lease corrects it)."""
        fresh = now - self.leased_at <= self.ttl
        level = self.burst if self.level is None else self.level
        level = min(self.burst, level + max(0.0, now - self.level_at) * self.per_second)
        have = level + (self.tokens if fresh else 0.0)
        need = 1.0 + self.reserve
        return 0.0 if have >= need else (need - have) / self.per_second
