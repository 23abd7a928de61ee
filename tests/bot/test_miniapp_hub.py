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
