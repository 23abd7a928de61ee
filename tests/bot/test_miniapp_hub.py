"""The live hub's own bookkeeping (#42): an announcement is never lost, even
one that arrives the moment a read of its table ends (no Redis: the hub is
handed its feed and its loader)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import cast

from telegram_bot.miniapp.hub import Feed, LiveHub
from telegram_bot.views.page import TableRead


class Read:
    def __init__(self, version: int) -> None:
        self.version = version


class Shown:
    """A page: the versions it was shown."""

    def __init__(self) -> None:
        self.versions: list[int] = []

    async def show(self, loaded: TableRead | None) -> None:
        if loaded is not None:
            self.versions.append(loaded.version)


@contextlib.asynccontextmanager
async def no_feed() -> AsyncIterator[Feed]:  # the test announces by hand
    yield cast(Feed, None)


async def test_an_announcement_as_a_read_ends_is_read_too() -> None:
    """The read's task used to leave the hub's books in a done-callback, a step
    after it ended: an announcement in between found the table "being read"
    and was dropped -- a page on one process stayed a move behind for good
    (seen in the fleet test)."""
    now = {"version": 1}

    async def load(table: str) -> TableRead:
        return cast(TableRead, Read(now["version"]))

    hub = LiveHub(no_feed, load)
    page = Shown()
    await hub.join("t1", page)
    assert page.versions == [1]
    now["version"] = 2
    hub.announce("t1", 2)
    reading = next(iter(asyncio.all_tasks() - {asyncio.current_task()}))
    while not reading.done():  # noqa: ASYNC110 -- step by step: the read ends, then this test
        await asyncio.sleep(0)
    now["version"] = 3
    hub.announce("t1", 3)
    for _ in range(100):
        await asyncio.sleep(0)
        if page.versions[-1] == 3:
            break
    assert page.versions == [1, 2, 3]
    await hub.aclose()


async def test_a_failed_read_is_tried_again_while_the_table_has_pages() -> None:
    """A read that failed (a Redis blip) left the announced version unread
    until the next write -- for a game's last move, never: its pages showed
    the game going on for good.  It is read again, with a backoff."""
    now = {"version": 1, "fail": 0}

    async def load(table: str) -> TableRead:
        if now["fail"]:
            now["fail"] -= 1
            raise ConnectionError("a blip")
        return cast(TableRead, Read(now["version"]))

    hub = LiveHub(no_feed, load, backoff_base=0.01, backoff_cap=0.02)
    page = Shown()
    await hub.join("t1", page)
    now.update(version=2, fail=2)
    hub.announce("t1", 2)  # the last write: no announcement follows
    for _ in range(500):
        await asyncio.sleep(0.01)
        if page.versions[-1] == 2:
            break
    assert page.versions == [1, 2]
    assert now["fail"] == 0
    await hub.aclose()
