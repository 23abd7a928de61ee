"""The index of tables (:mod:`tables.keys`): ``tables``, table id -> last
status change, which the admin lists read (by cursor, :mod:`tables.paging`),
and beside it in one slot ``tables:exp``, table id -> when its table key expires
(epoch ms, the service clock).

Both entries are written together, outside the compare-and-set script, at each
status change (a new table, start, finish, cancel, reset; the TTL depends on
the status) and removed together by an admin delete.  The writes in between
(moves, joins) renew the table's TTL without touching the index -- so the
expiry score is never later than the real expiry (it is taken before the
write that sets the TTL), only earlier.  The pruner
(:meth:`TableIndex.prune`, run by one leased process each minute) reads only
the entries whose score is past: a table that is really gone leaves the index,
a renewed one gets its score moved to its real expiry.  Entries from before the
expiry index get a score on a process's first run, so they are checked too."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from tables.model import LiveConfig, Table
from tables.store import Store, text

PRUNE_BATCH = 200
PRUNE_ROUNDS = 10  # batches per run at most: a run does not hold up the timer loop long


@dataclass(frozen=True)
class Indexed:
    """A table of the index as the admin list reads it (one ``HMGET``)."""

    table: Table
    version: int
    deadline: int | None


class TableIndex:
    """Write, read and prune the index of tables."""

    def __init__(self, store: Store, config: LiveConfig, now_ms: Callable[[], int]) -> None:
        self.store = store
        self.keys = store.keys
        self.config = config
        self.now_ms = now_ms
        self._all_scored = False  # entries from before the expiry index: scored

    async def note(self, table_id: str, now: int, ttl_ms: int) -> None:
        """The table's status changed at ``now`` and its key expires ``ttl_ms``
        later (one round trip, one slot)."""
        k = self.keys

        def build(p: Any) -> None:
            p.zadd(k.tables, {table_id: now})
            p.zadd(k.tables_exp, {table_id: now + ttl_ms})

        await self.store.run(build)

    async def drop(self, *table_ids: str) -> None:
        """Remove tables from the index (one round trip)."""
        if table_ids:
            await self.store.run(lambda p: self._queue_drop(p, table_ids))

    def _queue_drop(self, p: Any, table_ids: Sequence[str]) -> None:
        if table_ids:
            p.zrem(self.keys.tables, *table_ids)
            p.zrem(self.keys.tables_exp, *table_ids)

    async def load(self, ids: list[str]) -> list[Indexed | None]:
        """The tables named, as the lists show them (None: gone), in one round trip."""
        if not ids:
            return []
        k = self.keys

        def build(p: Any) -> None:
            for tid in ids:
                p.hmget(k.table(tid), "t", "v", "d")

        rows = await self.store.run(build)
        return [
            None if t is None else Indexed(Table.from_json(t), int(v), int(d) if d else None)
            for t, v, d in rows
        ]

    async def all(self) -> list[Indexed]:
        """Every table of the index, newest status change first; vanished tables
        are dropped from the index on the way."""
        k = self.keys
        ids = [text(i) for i in await self.store.one(lambda p: p.zrevrange(k.tables, 0, -1))]
        rows = await self.load(ids)
        await self.drop(*(tid for tid, row in zip(ids, rows, strict=True) if row is None))
        return [row for row in rows if row is not None]

    async def scan(self, cursor: int, count: int) -> tuple[int, list[str]]:
        """One step of a walk over every table of the index (``ZSCAN``, about
        ``count`` entries; one round trip): the next cursor (0: the walk is
        done) and the table ids.  A table in the index from the walk's start
        to its end is met at least once (#40: the timer shards' repair)."""
        nxt, found = await self.store.one(lambda p: p.zscan(self.keys.tables, cursor, count=count))
        return int(nxt), [text(tid) for tid, _score in found]

    async def deadlines(self, ids: Sequence[str]) -> dict[str, int]:
        """The turn deadline (``d``) of each of the tables named that has one
        (one round trip)."""
        if not ids:
            return {}
        k = self.keys

        def build(p: Any) -> None:
            for tid in ids:
                p.hget(k.table(tid), "d")

        found = await self.store.run(build)
        return {tid: int(d) for tid, d in zip(ids, found, strict=True) if d}

    async def prune(self, batch: int = PRUNE_BATCH, rounds: int = PRUNE_ROUNDS) -> int:
        """Drop the entries of tables that expired, reading only the entries
        whose expiry score is past, ``batch`` at a time, at most ``rounds``
        batches (the rest: next time); how many were dropped."""
        if not self._all_scored:
            await self._score_unscored()
        dropped = 0
        for _round in range(rounds):
            now = self.now_ms()
            due = await self.store.one(partial(_due, self.keys.tables_exp, now, batch))
            dropped += await self._settle([text(m) for m in due], now)
            if len(due) < batch:
                break
        return dropped

    async def _score_unscored(self) -> None:
        """Entries written before the expiry index existed have no expiry score:
        they get ``now`` (``NX``: a score written meanwhile stays), so the pruner
        checks each.  Once per process (``ZDIFF``, both keys in one slot)."""
        k = self.keys
        old = await self.store.one(lambda p: p.zdiff([k.tables, k.tables_exp]))
        if old:
            now = self.now_ms()
            scores = {text(m): now for m in old}
            await self.store.one(lambda p: p.zadd(k.tables_exp, scores, nx=True))
        self._all_scored = True

    async def _settle(self, due: list[str], now: int) -> int:
        """Check each due entry's table (``PTTL``, one round trip): gone -- drop
        the entry; renewed since -- move its score to its real expiry (one round
        trip for both).  How many were dropped."""
        if not due:
            return 0
        k = self.keys
        c = self.config
        longest = int(max(c.lobby_ttl, c.game_ttl, c.finished_ttl) * 1000)

        def check(p: Any) -> None:
            for tid in due:
                p.pttl(k.table(tid))

        ttls = [int(t) for t in await self.store.run(check)]
        gone = [tid for tid, ttl in zip(due, ttls, strict=True) if ttl == -2]
        # -1 (no TTL) is no table the service wrote: look again much later
        renewed = {
            tid: now + (longest if ttl == -1 else max(ttl, 1))
            for tid, ttl in zip(due, ttls, strict=True)
            if ttl != -2
        }

        def fix(p: Any) -> None:
            self._queue_drop(p, gone)
            if renewed:  # XX: not back in when an admin delete dropped it meanwhile
                p.zadd(k.tables_exp, renewed, xx=True)

        await self.store.run(fix)
        return len(gone)


def _due(key: str, now: int, batch: int, p: Any) -> object:
    return p.zrangebyscore(key, "-inf", now, start=0, num=batch)
