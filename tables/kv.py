"""A small generic key-value API over the service's store, for state that is not
the service's own (the bot's chat state and flood buckets live with the bot and
name their keys there).  Keys are built under the service's prefix
(:meth:`KeyValueStore.key`) or in a table's hash-tag slot ``{t:<id>}``
(:meth:`KeyValueStore.table_key`, so a script may touch it with the table's
keys on Redis Cluster).  Every call is one round trip, counted by the store;
a Redis failure raises :class:`tables.ServiceUnavailable`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tables.store import Script, Store, text


class KeyValueStore:
    """Hashes and strings with TTLs, batched reads and Lua scripts."""

    def __init__(self, store: Store, prefix: str) -> None:
        self.store = store
        self.prefix = prefix

    @property
    def cluster(self) -> bool:
        """True on a Redis Cluster: a fault is a node's, and keys in the slots
        of the other nodes are still served (:mod:`tables.nodes`)."""
        return self.store.cluster

    @property
    def faults(self) -> int:
        """How many operations of this process met a Redis fault (a node down,
        a timeout) since it started, whatever part of it asked: a fault its
        flood limiter did not meet itself is still news to it (#40)."""
        return self.store.faults

    def key(self, name: str) -> str:
        """``name`` under the service's prefix."""
        return f"{self.prefix}{name}"

    def table_key(self, table_id: str, name: str) -> str:
        """A key in the slot of table ``table_id`` (hash tag ``{t:<id>}``)."""
        return f"{self.prefix}{{t:{table_id}}}:{name}"

    # ------------------------------------------------------------------ hashes
    async def hgetall(self, key: str) -> dict[str, str]:
        raw = await self.store.one(lambda p: p.hgetall(key))
        return {text(k): text(v) for k, v in raw.items()}

    async def hmget_many(
        self, keys: Sequence[str], fields: Sequence[str]
    ) -> list[list[str | None]]:
        """``fields`` of each hash in ``keys`` (None: absent), in one round trip."""
        if not keys:
            return []

        def build(p: Any) -> None:
            for k in keys:
                p.hmget(k, *fields)

        rows = await self.store.run(build)
        return [[None if v is None else text(v) for v in row] for row in rows]

    async def hupdate(
        self,
        key: str,
        *,
        set: Mapping[str, str] | None = None,
        delete: Iterable[str] = (),
        ttl_ms: int | None = None,
    ) -> None:
        """Delete ``delete``, then set ``set``, then (re)set the key's TTL -- in one
        transaction (MULTI/EXEC), one round trip.  Deleting alone is one HDEL:
        it creates no key, and the key keeps the TTL it was written with (#39:
        a move that clears a selection cost four commands)."""
        dels = list(delete)
        fields = dict(set or {})
        if not fields:
            if dels:
                await self.store.one(lambda p: p.hdel(key, *dels))
            return

        def build(p: Any) -> None:
            if dels:
                p.hdel(key, *dels)
            if fields:
                p.hset(key, mapping=fields)
            if ttl_ms is not None:
                p.pexpire(key, ttl_ms)

        await self.store.run(build, transaction=True)

    # ------------------------------------------------------------------ strings
    async def get(self, key: str) -> str | None:
        raw = await self.store.one(lambda p: p.get(key))
        return None if raw is None else text(raw)

    async def set(self, key: str, value: str, *, ttl_ms: int | None = None) -> None:
        await self.store.one(lambda p: p.set(key, value, px=ttl_ms))

    async def set_nx(self, keys: Sequence[str], value: str, *, ttl_ms: int) -> list[bool]:
        """``SET key value NX PX ttl_ms`` for each key, pipelined in one round trip
        (not a transaction: the keys may live in different Redis Cluster slots).
        True for each key that was absent and is now set (claimed)."""
        if not keys:
            return []

        def build(p: Any) -> None:
            for k in keys:
                p.set(k, value, nx=True, px=ttl_ms)

        return [bool(r) for r in await self.store.run(build)]

    # ------------------------------------------------------------------ sorted sets
    async def zadd(self, key: str, scores: Mapping[str, float]) -> None:
        await self.store.one(lambda p: p.zadd(key, dict(scores)))

    async def zrevrange(self, key: str, start: int, stop: int) -> list[str]:
        """Members ``start`` .. ``stop`` (inclusive), the highest score first."""
        raw = await self.store.one(lambda p: p.zrevrange(key, start, stop))
        return [text(m) for m in raw]

    async def replica_entries(self, keys: Sequence[str]) -> dict[str, list[tuple[float, str]]]:
        """Every entry ``(score, member)`` of the sorted sets ``keys`` -- all in
        one hash slot -- as a replica of that slot holds them, the lowest score
        first (empty: no such key): what the slot's master held a moment ago,
        read while it is dead and before the replica is promoted (#40).  One
        round trip; :class:`tables.ServiceUnavailable` when no replica answers
        (none in sync, none up, or one Redis server)."""
        if not keys:
            return {}
        commands = [("ZRANGE", key, 0, -1, "WITHSCORES") for key in keys]
        replies = await self.store.from_replica(keys[0], commands)
        return {key: _scored(reply) for key, reply in zip(keys, replies, strict=True)}

    async def zrem(self, key: str, *members: str) -> int:
        return int(await self.store.one(lambda p: p.zrem(key, *members)))

    async def heartbeat(
        self, key: str, member: str, now: int, since: int, *, ttl_ms: int | None = None
    ) -> list[str]:
        """Score ``member`` ``now`` in the sorted set ``key`` and read the members
        scored after ``since`` (the live ones) -- one round trip, two commands;
        with ``ttl_ms`` also the members scored before drop out and the key's
        TTL is (re)set (two more)."""

        def build(p: Any) -> None:
            p.zadd(key, {member: now})
            if ttl_ms is not None:
                p.zremrangebyscore(key, "-inf", f"({since}")
                p.pexpire(key, ttl_ms)
            p.zrangebyscore(key, f"({since}", "+inf")

        return [text(m) for m in (await self.store.run(build))[-1]]

    # ------------------------------------------------------------------ any key
    async def delete(self, *keys: str) -> int:
        """Delete ``keys`` (one ``DEL`` each, pipelined: on Redis Cluster they may
        live in different slots); how many existed."""

        def build(p: Any) -> None:
            for k in keys:
                p.delete(k)

        return sum(int(n) for n in await self.store.run(build))

    async def pttl(self, key: str) -> int:
        """Milliseconds to live (-1: no TTL, -2: no such key)."""
        return int(await self.store.one(lambda p: p.pttl(key)))

    def script(self, lua: str) -> Script:
        """A Lua script: ``await script(keys, args)``, one round trip; the reply
        as Redis gives it (bytes, ints, lists)."""
        return self.store.script(lua)


def _scored(reply: Any) -> list[tuple[float, str]]:
    """A ``WITHSCORES`` reply as ``(score, member)`` pairs: flat (RESP2) or
    paired (RESP3)."""
    items = list(reply or [])
    if items and isinstance(items[0], list | tuple):
        pairs = [(m, s) for m, s in items]
    else:
        pairs = list(zip(items[::2], items[1::2], strict=True))
    return sorted((float(text(s)), text(m)) for m, s in pairs)


__all__ = ["KeyValueStore", "Script"]
