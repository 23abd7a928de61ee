"""The pages this process shows, by table, kept live (#42).

One subscription per process to the live channels of the tables its pages
show (:class:`tables.live.LiveFeed`: sharded pub/sub on a cluster): a write
of a watched table -- made by this process or any other, a press, a page, a
timer, an operator -- announces its version; the hub reads the table once
and hands it to every page of it, each of which draws its own viewer's view
(:class:`Viewer`).  A page never goes back: it shows a read only if it is
newer than what it shows.  After the subscription failed (Redis down, a
failover) every watched table is read again once it is back, so an
announcement missed meanwhile costs a page nothing but the wait."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from tables.faults import expected_fault
from tables.model import ServiceUnavailable
from telegram_bot.views.page import TableRead

log = logging.getLogger(__name__)

LISTEN_FOR = 0.1
"""Seconds one wait of the live feed lasts.  On a cluster redis-py polls the
nodes in turn and splits it among them: a write heard on one node waited
for the others' share of it (0.5 s: p95 175 ms from a move to the other
pages with 2 processes on 3 masters; 0.1 s: 63 ms, for 23 % more CPU)."""


class Feed(Protocol):
    """What the hub needs of :class:`tables.live.LiveFeed`."""

    async def watch(self, *tables: str) -> None: ...
    async def unwatch(self, *tables: str) -> None: ...
    async def get(self, timeout: float = 1.0) -> _Note | None: ...  # noqa: ASYNC109


class _Note(Protocol):
    @property
    def table(self) -> str: ...
    @property
    def version(self) -> int: ...


class Viewer(Protocol):
    """An open page: shows a read of its table if it is newer than its own."""

    async def show(self, loaded: TableRead | None) -> None: ...


Load = Callable[[str], Awaitable[TableRead | None]]


class LiveHub:
    """The tables watched by this process's pages and their pages."""

    def __init__(
        self,
        feed: Callable[[], AbstractAsyncContextManager[Feed]],
        load: Load,
        *,
        backoff_base: float = 0.5,
        backoff_cap: float = 10.0,
    ) -> None:
        self._make_feed = feed
        self._load = load
        self._viewers: dict[str, set[Viewer]] = {}
        self._feed: Feed | None = None
        self._wanted: dict[str, int] = {}  # table -> newest version announced
        self._reading: dict[str, asyncio.Task[None]] = {}
        self._watching = asyncio.Lock()  # one watch or unwatch at a time
        self._watched: set[str] = set()  # the channels the feed hears now
        self._base, self._cap = backoff_base, backoff_cap
        self.subscriptions = 0  # times the feed (re)subscribed (tests read it)

    @property
    def pages(self) -> int:
        return sum(len(v) for v in self._viewers.values())

    async def join(self, table: str, viewer: Viewer) -> None:
        """``viewer`` shows ``table`` from now on: it gets the table at once,
        then every write of it."""
        self._viewers.setdefault(table, set()).add(viewer)
        async with self._watching:  # watched before the read: no write falls between
            feed = self._feed
            if feed is not None and table not in self._watched:
                try:
                    await feed.watch(table)
                    self._watched.add(table)
                except ServiceUnavailable as e:  # the loop subscribes again and reads again
                    log.warning("live channel of %s not watched now: %s", table, e)
        await viewer.show(await self._load(table))

    async def leave(self, table: str, viewer: Viewer) -> None:
        viewers = self._viewers.get(table)
        if viewers is None:
            return
        viewers.discard(viewer)
        if viewers:
            return
        del self._viewers[table]
        async with self._watching:
            feed = self._feed
            if feed is not None and table in self._watched and table not in self._viewers:
                self._watched.discard(table)
                with contextlib.suppress(ServiceUnavailable):  # gone with the subscription
                    await feed.unwatch(table)

    def announce(self, table: str, version: int) -> None:
        """Table ``table`` is at ``version`` (at least): its pages read it."""
        if table not in self._viewers:
            return
        self._wanted[table] = max(version, self._wanted.get(table, 0))
        if table not in self._reading:
            self._reading[table] = asyncio.create_task(self._read(table))

    async def _read(self, table: str) -> None:
        """Read ``table`` and hand it to its pages, again while a newer version
        was announced than the one read.  It leaves ``_reading`` in the same
        step as it ends (a done-callback runs a step later: an announcement in
        between was dropped, a page stayed behind)."""
        try:
            await self._read_while_wanted(table)
        finally:
            self._reading.pop(table, None)

    async def _read_while_wanted(self, table: str) -> None:
        failures = 0
        while table in self._viewers:
            wanted = self._wanted.get(table, 0)
            try:
                loaded = await self._load(table)
            except Exception as e:  # read again, with a backoff, while it has pages
                delay = min(self._cap, self._base * 2**failures)
                failures = min(failures + 1, 32)
                log.warning(
                    "table %s not read for its pages; again in %.1f s: %s",
                    table,
                    delay,
                    e,
                    exc_info=not expected_fault(e),
                )
                # (a game's last write is followed by no other: its pages would
                # show it playing for good)
                await asyncio.sleep(delay)
                continue
            failures = 0
            viewers = list(self._viewers.get(table, ()))
            await asyncio.gather(*(v.show(loaded) for v in viewers), return_exceptions=True)
            seen = loaded.version if loaded is not None else wanted
            if self._wanted.get(table, 0) <= max(seen, wanted):
                self._wanted.pop(table, None)
                return

    async def run(self, stop: asyncio.Event) -> None:
        """Follow the live channels until ``stop``; subscribed again (and every
        watched table read again) after any failure, with a backoff."""
        failures = 0
        while not stop.is_set():
            try:
                async with self._make_feed() as feed:
                    async with self._watching:
                        await feed.watch(*self._viewers)
                        self._watched = set(self._viewers)
                        self._feed = feed
                    self.subscriptions += 1
                    failures = 0
                    for table in list(self._viewers):  # what a gap may have hidden
                        self.announce(table, 0)
                    while not stop.is_set():
                        note = await feed.get(timeout=LISTEN_FOR)
                        if note is not None:
                            self.announce(note.table, note.version)
            except Exception as e:  # the live pages must survive anything
                delay = min(self._cap, self._base * 2**failures)
                failures = min(failures + 1, 32)
                log.warning(
                    "live channels failed; again in %.1f s: %s",
                    delay,
                    e,
                    exc_info=not expected_fault(e),
                )
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), delay)
            finally:
                self._feed = None
                self._watched = set()

    async def aclose(self) -> None:
        for task in list(self._reading.values()):
            task.cancel()
        await asyncio.gather(*self._reading.values(), return_exceptions=True)
