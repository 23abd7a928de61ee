"""This process's share of the fleet-wide flood window: entries counted in
``rl:{all}`` in small batches (one round trip a batch, ``LEASE_LUA``) make a
local allowance, used only while its lease is ``ttl`` fresh -- so a message
goes out within ``ttl`` of the entry that counts it.

Every entry is handled by its name (#28): a message that does not go out gives
back exactly its own; entries never used are removed by name with the next
lease -- never "some entries counted since my lease", which may be another
process's (the fleet would overspend by as many).

On a Cluster, when the window's master dies (``fleet`` given), the chats on the
other masters must not fall back with it (#40): the allowance comes from this
process's share, counted in its journal, and the key is asked again every
``probe`` seconds, the journal charged there first (``recharge``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from engine.clock import Clock
from tables import ServiceUnavailable
from telegram_bot.delivery.flood.journal import Journal

log = logging.getLogger(__name__)

Script = Callable[[list[str], list[Any]], Awaitable[Any]]
"""``svc.kv.script(LEASE_LUA)``"""


class Taken(NamedTuple):
    """:meth:`OverallLease.take`'s answer: ``wait`` 0 and the ``entries`` taken,
    counted at ``at``; or the seconds to wait."""

    wait: float
    entries: tuple[str, ...] = ()
    at: float = 0.0
    shared: tuple[str, ...] = ()  # entries of the share, in the journal only (#40)


KEY_LIFE = 60.0
"""Seconds the window's key is given to live past a lease that sets its TTL
(#39: once a minute a process, not a PEXPIRE a lease).  Every script that
sets it (a lease, a charge, a late answer's stamp) gives it this long at
least and otherwise only raises it, so the process that set it knows it
lives that long; a fault forgets that (the key may have been lost)."""


def lease_of(entry: str) -> str:
    """The name of the lease an entry ('<lease>:<i>') belongs to."""
    return entry.rpartition(":")[0]


@dataclass
class OverallLease:
    """The local allowance; ``bucket`` (key), ``limit``, ``seconds`` and
    ``reserve`` of the overall window; ``batch`` entries leased at a time;
    ``journal``: this process's entries (the leases are recorded there);
    ``clock``: the limiter's."""

    script: Script
    bucket: str
    limit: int
    seconds: float
    reserve: int
    batch: int
    ttl: float
    journal: Journal
    clock: Clock
    free: list[str] = field(default_factory=list)  # the current lease's unused entries
    name: str = ""  # the current lease's name
    leased_at: float = float("-inf")
    unused: list[str] = field(default_factory=list)  # to remove with the next lease
    level: float | None = None  # free entries at the last lease (None: never)
    level_at: float = 0.0
    leases: int = 0  # round trips to the overall window
    refused_until: float = float("-inf")  # a lease was refused: no asking before
    # one lease in flight at a time: concurrent messages wait for it and use its
    # batch instead of each leasing its own (a burst would drain the fleet's window)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    # the bot processes alive (cluster only): the share of the window taken
    # here while its key's master is down (#40); None: a failure is raised
    fleet: Callable[[], int] | None = None
    probe: float = 0.5  # seconds between asks of a key that failed
    down_until: float = float("-inf")  # no asking before (the key failed)
    down: bool = False  # the key failed and has not answered since
    # charges this process's journal in the window again (FloodLimiter.charge)
    recharge: Callable[[], Awaitable[Any]] | None = None
    lives_until: float = float("-inf")  # the window's key lives until then at least (#39)

    def fresh(self, now: float) -> bool:
        return now - self.leased_at <= self.ttl

    def take_local(self, now: float) -> str | None:
        """An entry of the allowance if it holds one (and is fresh)."""
        return self.free.pop() if self.fresh(now) and self.free else None

    def give_back(self, taken: Taken) -> None:
        """What ``take`` gave a message that did not go out: the current lease's
        entries go back to the allowance (used only while it is fresh), any
        other is removed from the window with the next lease; the share's
        leave the journal."""
        for entry in taken.entries:
            (self.free if lease_of(entry) == self.name else self.unused).append(entry)
        if taken.shared:
            self.journal.discard(self.bucket, taken.shared)

    async def take(self) -> Taken:
        """An entry from the allowance, leasing a batch when it is short."""
        taken = self.take_local(float(self.clock()))
        if taken is not None:
            return Taken(0.0, (taken,), self.leased_at)
        async with self.lock:
            now = float(self.clock())  # after the lease we may have waited for
            taken = self.take_local(now)
            if taken is not None:  # that lease brought some
                return Taken(0.0, (taken,), self.leased_at)
            return await self.lease(now)

    async def lease(self, now: float) -> Taken:
        """Lease a batch and take an entry of it; else the seconds until the
        overall window has one free (after a refusal this process does not ask
        again before that time is up).  The entries of the leases before,
        unused, are removed in the same round trip."""
        if now < self.refused_until:
            return Taken(self.refused_until - now)
        if self.down:
            if now < self.down_until:
                return self._share(now)
            try:  # asked again: what the share let through counts there first
                if self.recharge is not None:
                    await self.recharge()
            except ServiceUnavailable:
                self.down_until = now + self.probe
                return self._share(now)
            self.down = False
        # the entries before, unused, go in the same round trip; what is given
        # back meanwhile waits for the next (``name`` is no lease's) -- unless
        # the window had half its entries free at the last lease: then they
        # leave it by themselves within its seconds, and removing them would
        # cost a command a lease for room nobody is short of (#39)
        dropped, self.unused, self.free, self.name = self.unused + self.free, [], [], ""
        if (
            dropped
            and self.level is not None
            and self.level >= self.limit / 2
            and now - self.level_at < self.seconds  # seen within the window
        ):
            dropped = []
        name = self.journal.name()
        # its entries count ``seconds``, and the key's TTL a second more
        life = "" if now + self.seconds + 1 < self.lives_until else repr(KEY_LIFE)
        self.leases += 1
        try:
            raw = await self.script(
                [self.bucket],
                [
                    repr(now),
                    repr(float(self.seconds)),
                    self.limit,
                    self.batch,
                    1,
                    name,
                    life,
                    *dropped,
                ],
            )
        except ServiceUnavailable as e:
            self.unused = dropped + self.unused  # not removed: with the next lease
            self.lives_until = float("-inf")  # the key may be lost: its TTL set again
            if self.fleet is None:
                raise
            if not self.down:
                log.warning(
                    "flood limiter: the fleet-wide window is unavailable, a share here: %s", e
                )
            self.down, self.down_until = True, now + self.probe
            return self._share(now)
        except BaseException:
            self.unused = dropped + self.unused  # not removed: with the next lease
            raise
        self.journal.discard(self.bucket, dropped)  # an entry gone from the window: no-op
        # entries lent (0: refused, wait), entries still free in the window
        answer = (raw.decode() if isinstance(raw, bytes) else str(raw)).split(";")
        granted, self.level, wait = (float(x) for x in answer)
        self.level_at = now
        if life and granted > 0:
            self.lives_until = now + KEY_LIFE
        if granted <= 0:
            self.refused_until = now + wait
            return Taken(wait)
        k = int(granted)
        self.journal.record(self.bucket, self.seconds, now, name, k)
        self.free = [f"{name}:{j}" for j in range(k, 0, -1)]  # taken from the end
        self.name, self.leased_at = name, now
        return Taken(0.0, (self.free.pop(),), now)

    def _share(self, now: float) -> Taken:
        """An entry of this process's share of the window while its key is
        down, counted in the journal only (``shared``: given back there if the
        message does not go out); else the seconds to wait."""
        assert self.fleet is not None
        limit = max(1, self.limit // max(1, self.fleet()))
        wait = self.journal.wait(self.bucket, limit, self.seconds, now, 1)
        if wait > 0:
            return Taken(wait)
        name = self.journal.name()
        self.journal.record(self.bucket, self.seconds, now, name)
        return Taken(0.0, (), now, (f"{name}:1",))

    def headroom(self, now: float) -> float:
        """Seconds until this process could take a token and leave the overall
        reserve: from its allowance and the window's free entries seen at its
        last lease, freed again at the window's pace since (other processes'
        leases since are not seen; the next lease corrects it)."""
        pace = self.limit / self.seconds
        level = float(self.limit) if self.level is None else self.level
        level = min(float(self.limit), level + max(0.0, now - self.level_at) * pace)
        have = level + (len(self.free) if self.fresh(now) else 0.0)
        need = 1.0 + self.reserve
        return 0.0 if have >= need else (need - have) / pace
