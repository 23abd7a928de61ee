"""Pending renders, shared in Redis: "someone must render this table" survives
the process that was rendering it (issue #12).

A render of a table (:meth:`telegram_bot.publishing.publisher.Publisher.refresh`) first
sets a *mark* -- the table and the version to show -- with a deadline a few
seconds ahead (``grace``).  Its edits mostly go out later (coalesced,
:mod:`telegram_bot.delivery.coalesce`), so the mark stays while they wait: the owner
pushes the deadline on (:meth:`RenderMarks.keep`) until every edit of the
render went out, then clears the mark -- unless a newer version was marked
meanwhile (:meth:`RenderMarks.clear` compares).  A mark whose deadline passed
has outlived its owner (the process died, or gave up on a failing edit):
whichever process sweeps first claims it (:meth:`RenderMarks.claim_due`
pushes the deadline on in the same script, so one process repairs it) and
renders the table at its current version.  Repairing a render that did go out
costs no message: the shared digest (:mod:`telegram_bot.delivery.flood.limiter`) drops an edit
that changes nothing and refuses an older version.

A claim is one atomic script per shard: two processes sweeping one shard
never claim one mark twice, and no lease is needed.  The sweep is still split
over the fleet (#39: idle traffic that does not grow with the processes).  At
each sweep (every ``grace / 4`` seconds) a process beats its heartbeat in ``P
render:sweepers`` and reads the live sweepers (heard within ``grace / 2``; two
commands, :meth:`RenderMarks.sweepers_now`), then sweeps only its own shards:
shard ``k`` is the ``k mod n``-th of the ``n`` live sweepers, by name.  A
process that stops leaves the set (:meth:`RenderMarks.leave`): the others take
its shards at their next sweep.  One that dies drops out ``grace / 2`` after
its last sweep, so its shards are swept again within ``3/4 grace`` of its
death (its own marks are due by ``grace`` after it anyway).  While the
sweepers' views differ (a process started or died since another's last read)
a shard may be swept by two (each mark is still claimed once) or, for one
sweep, by none.

The marks are split into ``shards`` slots by ``crc32(table) mod
shards`` (like the timer hints), each shard a sorted set of deadlines and a
hash of versions under one hash tag ``{r<k>}`` (one slot: every script is
cluster-safe, and the shards spread over a cluster's nodes;
:class:`telegram_bot.state.keys.RenderKeys`).  A sweep costs the heartbeat and
one script per own shard; a render costs two scripts (set
and clear), sent alongside its snapshot and after its edits -- it waits for
neither.  A mark is claimed at most ``max_tries`` times without a newer
version (a table whose render keeps failing is not retried forever).  A
mark leaves by its clear or by that last claim, and a shard with no mark is
no key at all (Redis drops an empty hash or sorted set); a shard no process
sweeps any more (fewer shards configured, a retired prefix) expires ``ttl``
after its last sweep: its sweeper renews its TTL every
:data:`CLEAN_SWEEPERS_S` (#39: not at every mark, two commands a press).
Redis failures are logged, never raised: the render itself goes on (the
mark only guards against a crash).
"""

from __future__ import annotations

import logging
import math
import secrets
import time
import zlib
from dataclasses import dataclass

from engine.clock import Clock
from tables import KeyValueStore, ServiceUnavailable
from tables.kv import Script
from telegram_bot.state.keys import RenderKeys

log = logging.getLogger(__name__)

CLEAN_SWEEPERS_S = 30.0
"""How often a sweep also drops the dead sweepers' heartbeats and renews the
``P render:sweepers`` key's TTL (#39: the live ones are told by score meanwhile)."""

# KEYS[1] the shard's deadlines (zset table -> ms), KEYS[2] its marks (hash
# table -> '<version>:<tries>').  ARGV table, version, deadline ms.  A newer
# version starts over (tries 0); an older or equal one keeps what is there.
SET_LUA = r"""
local cur = redis.call('HGET', KEYS[2], ARGV[1])
local v = cur and tonumber(string.match(cur, '^(%d+)')) or -1
if tonumber(ARGV[2]) > v then
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':0')
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""

# The owner still waits for the render's edits: KEYS as SET_LUA; ARGV table,
# deadline ms.  Only a mark that is still there (1: its deadline moved).
KEEP_LUA = r"""
return redis.call('ZADD', KEYS[1], 'XX', 'CH', ARGV[2], ARGV[1])
"""

# A render of ``version`` went out: KEYS as SET_LUA; ARGV table, version.  The
# mark goes unless it asks for a newer version.  Returns 1 when cleared.
CLEAR_LUA = r"""
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if not cur then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
local v = tonumber(string.match(cur, '^(%d+)'))
if v > tonumber(ARGV[2]) then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
return 1
"""

# Claim the marks past their deadline: KEYS as SET_LUA; ARGV now ms, new
# deadline ms, limit, max tries, then the shard's TTL ms to set ('' none).
# Each claimed mark gets the new deadline and one more try; one past ``max
# tries`` goes.  Returns a flat list table, version, tries, ... of the
# claimed ones (dropped ones with tries -1).
CLAIM_LUA = r"""
if ARGV[5] and ARGV[5] ~= '' then
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
end
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
local out = {}
for _, t in ipairs(due) do
  local cur = redis.call('HGET', KEYS[2], t) or '0:0'
  local v, n = string.match(cur, '^(%d+):(%d+)$')
  n = tonumber(n or '0') + 1
  if n > tonumber(ARGV[4]) then
    redis.call('HDEL', KEYS[2], t)
    redis.call('ZREM', KEYS[1], t)
    n = -1
  else
    redis.call('HSET', KEYS[2], t, (v or '0') .. ':' .. n)
    redis.call('ZADD', KEYS[1], ARGV[2], t)
  end
  table.insert(out, t)
  table.insert(out, v or '0')
  table.insert(out, tostring(n))
end
return out
"""

SCRIPTS = {"SET_LUA": SET_LUA, "KEEP_LUA": KEEP_LUA, "CLEAR_LUA": CLEAR_LUA, "CLAIM_LUA": CLAIM_LUA}


@dataclass(frozen=True)
class Claimed:
    """A mark that outlived its owner: render ``table`` (at least ``version``);
    ``tries`` so far (-1: given up, the mark dropped)."""

    table: str
    version: int
    tries: int


def _text(raw: object) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


class RenderMarks:
    """The pending-render marks (see the module docstring)."""

    def __init__(
        self,
        kv: KeyValueStore,
        *,
        grace: float = 10.0,
        shards: int = 4,
        clock: Clock = time.time,
        max_tries: int = 5,
        ttl: float = 3600.0,
        batch: int = 50,
        owner: str | None = None,
    ) -> None:
        if grace <= 0 or shards < 1 or max_tries < 1:
            raise ValueError("grace > 0, shards >= 1 and max_tries >= 1 needed")
        self.kv = kv
        self._keys = RenderKeys(kv)
        self.grace = grace
        self.shards = shards
        self.clock = clock
        self.max_tries = max_tries
        self.ttl_ms = math.ceil(ttl * 1000)
        self._renewed: float | None = None  # when this process last set its shards' TTL
        self.batch = batch
        # this process's name among the sweepers (#39), and when it last
        # dropped the dead ones from their set
        self.owner = owner or secrets.token_hex(8)
        self._cleaned: float | None = None
        # this process's place among the live sweepers (index, count) at the
        # last sweep: the other shard sweeps of the process take the same share
        self.place: tuple[int, int] = (0, 1)
        self._set = kv.script(SET_LUA)
        self._keep = kv.script(KEEP_LUA)
        self._clear = kv.script(CLEAR_LUA)
        self._claim = kv.script(CLAIM_LUA)
        # the deadline (seconds) this process last gave each table's mark: a
        # keep while it is still over 3/4 grace away changes nothing (#39)
        self._given: dict[str, float] = {}
        # the newest version this process marked of each table: a clear of an
        # older one finds a newer mark, or none -- it changes nothing (#39)
        self._newest: dict[str, int] = {}

    # ------------------------------------------------------------------ keys
    def shard_of(self, table_id: str) -> int:
        return zlib.crc32(table_id.encode()) % self.shards

    def keys(self, shard: int) -> list[str]:
        """The KEYS of every script of ``shard``: its deadlines (zset table ->
        deadline ms) and its marks (hash table -> ``<version>:<tries>``), one slot."""
        return [self._keys.due(shard), self._keys.versions(shard)]

    def keys_of(self, table_id: str) -> list[str]:
        return self.keys(self.shard_of(table_id))

    def _deadline(self) -> int:
        return math.ceil((float(self.clock()) + self.grace) * 1000)

    def _gave(self, table_id: str, deadline_ms: int, ok: bool) -> None:
        if not ok:
            self._given.pop(table_id, None)
            return
        if len(self._given) >= 4096:  # bounded: drop the marks long past
            now = float(self.clock())
            self._given = {t: d for t, d in self._given.items() if d > now}
        self._given[table_id] = deadline_ms / 1000

    # ------------------------------------------------------------------ the owner
    async def set(self, table_id: str, version: int) -> bool:
        """A render of ``version`` (0: whatever is current) starts."""
        deadline = self._deadline()
        args: list[str | int] = [table_id, version, deadline]
        ok = await self._run("set", self._set, table_id, args)
        self._gave(table_id, deadline, ok)
        if ok:  # a lower one too: the newer may never have been written (a move
            # refused after its mark) and its mark given up since
            if len(self._newest) >= 4096:  # bounded: forgotten, a clear asks Redis
                self._newest.clear()
            self._newest[table_id] = version
        else:  # not known: every clear asks Redis
            self._newest.pop(table_id, None)
        return ok

    async def keep(self, table_id: str) -> bool:
        """Its edits still wait: the mark's deadline moves on -- unless this
        process moved it less than ``grace / 4`` ago (several renders of one
        table wait at once, each keeping it every ``grace / 2``: the deadline
        stays ahead of each one's next keep; True, no round trip)."""
        if self._given.get(table_id, 0.0) - float(self.clock()) > self.grace * 3 / 4:
            return True
        deadline = self._deadline()
        ok = await self._run("keep", self._keep, table_id, [table_id, deadline])
        self._gave(table_id, deadline, ok)
        return ok

    async def clear(self, table_id: str, version: int) -> bool:
        """Every edit of a render of ``version`` went out: the mark goes, unless
        it asks for a newer version.  A version older than one this process
        marked since changes nothing (no round trip, False: the mark there asks
        for that newer version, or its render cleared it already; #39: a move's
        deferred renders of the versions before it each sent this script)."""
        if version < self._newest.get(table_id, -1):
            return False
        self._given.pop(table_id, None)
        cleared = await self._run("clear", self._clear, table_id, [table_id, version])
        if cleared and self._newest.get(table_id, -1) <= version:
            self._newest.pop(table_id, None)
        return cleared

    async def _run(self, what: str, script: Script, table_id: str, args: list[str | int]) -> bool:
        try:
            return bool(await script(self.keys_of(table_id), args))
        except ServiceUnavailable as e:  # the render goes on; only a crash is unguarded
            log.warning("render mark (%s) of %s: %s", what, table_id, e)
            return False

    # ------------------------------------------------------------------ the sweeper
    @property
    def every(self) -> float:
        """Seconds between two sweeps of a process."""
        return self.grace / 4

    async def sweep(self) -> list[Claimed]:
        """One sweep of this process (#39): its heartbeat, then the marks past
        their deadline in its own shards claimed (:meth:`claim_due`)."""
        return await self.claim_due(await self.sweepers_now())

    async def sweepers_now(self) -> list[int]:
        """Beat this process's heartbeat; the shards that are its share now:
        shard ``k`` is the ``k mod n``-th of the ``n`` live sweepers (heard
        within ``grace / 2``), by name (one round trip, two commands; every
        :data:`CLEAN_SWEEPERS_S` also the dead dropped and the key's TTL
        renewed).  When the set cannot be read (a cluster's node of it
        failed), every shard: swept by each process meanwhile, the shards on
        the live nodes are still repaired (each mark once)."""
        now = float(self.clock())
        now_ms = math.floor(now * 1000)
        clean = self._cleaned is None or not 0 <= now - self._cleaned < CLEAN_SWEEPERS_S
        ttl = math.ceil(max(2 * CLEAN_SWEEPERS_S, 4 * self.grace) * 1000) if clean else None
        since = now_ms - math.ceil(self.grace * 500)
        try:
            live = await self.kv.heartbeat(
                self._keys.sweepers(), self.owner, now_ms, since, ttl_ms=ttl
            )
        except ServiceUnavailable as e:  # its node failed: every shard, as before #39
            log.warning("render sweepers not read, sweeping every shard: %s", e)
            self.place = (0, 1)
            return list(range(self.shards))
        if clean:
            self._cleaned = now
        names = sorted(set(live) | {self.owner})
        me, n = names.index(self.owner), len(names)
        self.place = (me, n)
        return [k for k in range(self.shards) if k % n == me]

    async def leave(self) -> None:
        """This process stops sweeping: the others take its shards at their
        next sweep, not ``grace / 2`` later (raises
        :class:`tables.ServiceUnavailable`)."""
        await self.kv.zrem(self._keys.sweepers(), self.owner)

    async def claim_due(self, shards: list[int] | None = None) -> list[Claimed]:
        """The marks past their deadline in ``shards`` (None: every shard),
        claimed by this process (their deadline pushed on, one more try
        counted), shard by shard."""
        now = float(self.clock())
        now_ms = math.floor(now * 1000)
        renew = self._renewed is None or not 0 <= now - self._renewed < CLEAN_SWEEPERS_S
        ttl: int | str = self.ttl_ms if renew else ""
        args = [now_ms, self._deadline(), self.batch, self.max_tries, ttl]
        if renew:
            self._renewed = now
        out: list[Claimed] = []
        for shard in range(self.shards) if shards is None else shards:
            raw = await self._claim(self.keys(shard), args)
            flat = [_text(x) for x in raw]
            for i in range(0, len(flat) - 2, 3):
                out.append(Claimed(flat[i], int(flat[i + 1]), int(flat[i + 2])))
        return out


__all__ = ["SCRIPTS", "Claimed", "RenderMarks"]
