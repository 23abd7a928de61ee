"""The tables' live channels (#42): every write of a table is announced on its
channel with the version it wrote -- sharded pub/sub on a cluster, plain on one
Redis -- to the feeds that watch it, and to no other."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tables import LiveFeed, LiveNote, TableService

SAFETY = 10.0


async def _next(feed: LiveFeed) -> LiveNote:
    async def wait() -> LiveNote:
        while True:
            note = await feed.get(timeout=0.2)
            if note is not None:
                return note

    return await asyncio.wait_for(wait(), SAFETY)


async def test_a_write_is_announced_to_the_feeds_watching_its_table(
    make_service: Callable[..., TableService],
) -> None:
    writer, watcher = make_service(), make_service()
    one = (await writer.lobbies.create_lobby(1, "Ann")).table_id
    two = (await writer.lobbies.create_lobby(2, "Bob")).table_id
    async with watcher.live() as feed:
        await feed.watch(one)
        assert feed.watched == {one}
        await writer.lobbies.join(two, 4, "Dan")  # not watched: not heard
        joined = await writer.lobbies.join(one, 3, "Cid")
        assert await _next(feed) == LiveNote(one, joined.version)
        await feed.watch(two)
        added = await writer.lobbies.add_ai(two, 2)
        assert await _next(feed) == LiveNote(two, added.version)
        await feed.unwatch(one)
        await writer.lobbies.add_ai(one, 1)
        again = await writer.lobbies.add_ai(two, 2)
        assert await _next(feed) == LiveNote(two, again.version)


async def test_a_feed_watching_nothing_waits_quietly(svc: TableService) -> None:
    async with svc.live() as feed:
        assert await feed.get(timeout=0.05) is None
