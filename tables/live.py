"""The tables' live channels (#42): the CAS script announces every write of a
table -- a move, a lobby change, a timer's, an operator's -- on the table's
channel ``P{t:<id>}:live`` with the version it wrote (:data:`tables.scripts.CAS_LUA`).
A bot process that shows some tables live (the Mini App's pages) watches
their channels through one :class:`LiveFeed`: sharded pub/sub on a Redis
Cluster (``SSUBSCRIBE``: a shard channel lives in the slot of its hash tag,
the table's, so the announcement goes to that node's subscribers only and a
cluster's pub/sub traffic does not grow with its nodes), plain pub/sub on one
Redis.

An announcement says only *which version now exists*: a watcher reads the
table itself (what each of its viewers may see differs), and one that missed
announcements (a reconnect) reads every table it watches again."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError

from tables.store import Store, unavailable


@dataclass(frozen=True)
class LiveNote:
    """Table ``table`` was written: it is now at ``version``."""

    table: str
    version: int


class LiveFeed:
    """One subscription to the live channels of the tables one process watches:
    ``async with svc.live() as feed``, then ``await feed.watch(id)`` /
    ``await feed.unwatch(id)`` at any time and ``await feed.get(timeout)`` in
    one loop.  Redis failures raise :class:`tables.ServiceUnavailable`; the
    subscription is then gone (make a new feed, watch again, read again)."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._pubsub: Any = None
        self._channels: dict[str, str] = {}  # channel -> table id
        self._watching = asyncio.Event()

    @property
    def watched(self) -> frozenset[str]:
        return frozenset(self._channels.values())

    async def __aenter__(self) -> LiveFeed:
        await self._store.ready()  # a cluster client learns its slot map first
        self._pubsub = self._store.r.pubsub()
        return self

    async def __aexit__(self, *exc: object) -> None:
        pubsub, self._pubsub = self._pubsub, None
        self._channels.clear()
        if pubsub is not None:
            with contextlib.suppress(RedisError, OSError):  # closing: nothing to tell
                await pubsub.aclose()

    async def watch(self, *tables: str) -> None:
        """Hear the writes of ``tables`` from now on."""
        new = {self._store.keys.live(t): t for t in tables}
        new = {c: t for c, t in new.items() if c not in self._channels}
        if not new:
            return
        assert self._pubsub is not None, "use: async with svc.live() as feed"
        with unavailable():
            if self._store.cluster:
                await self._pubsub.ssubscribe(*new)
            else:
                await self._pubsub.subscribe(*new)
        self._channels.update(new)
        self._watching.set()

    async def unwatch(self, *tables: str) -> None:
        """Hear no more of ``tables``."""
        gone = [c for c in map(self._store.keys.live, tables) if c in self._channels]
        if not gone:
            return
        for channel in gone:
            del self._channels[channel]
        if not self._channels:
            self._watching.clear()
        assert self._pubsub is not None
        with unavailable():
            if self._store.cluster:
                await self._pubsub.sunsubscribe(*gone)
            else:
                await self._pubsub.unsubscribe(*gone)

    async def get(self, timeout: float = 1.0) -> LiveNote | None:
        """The next announcement, or None when none came within ``timeout`` s."""
        assert self._pubsub is not None, "use: async with svc.live() as feed"
        if not self._channels:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._watching.wait(), timeout)
            return None
        with unavailable():
            if self._store.cluster:
                msg = await self._pubsub.get_sharded_message(
                    ignore_subscribe_messages=True, timeout=timeout
                )
            else:
                msg = await self._pubsub.get_message(
                    ignore_subscribe_messages=True, timeout=timeout
                )
        if msg is None or _str(msg.get("type")) not in ("message", "smessage"):
            return None
        table = self._channels.get(_str(msg.get("channel")))
        try:
            version = int(msg["data"])
        except (KeyError, TypeError, ValueError):
            return None
        return None if table is None else LiveNote(table, version)


def _str(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
