"""Refreshes under way of the writes this process made: while the writer of a
version renders it, a re-render asking for that version (the write's own
notification) waits for it instead of rendering the move a second time."""

from __future__ import annotations

import asyncio


class WriteClaims:
    """By table: (the version a writer's refresh renders, set when it is done)."""

    def __init__(self) -> None:
        self._claims: dict[str, list[tuple[int, asyncio.Event]]] = {}

    def claim(self, table_id: str, version: int) -> asyncio.Event:
        """A writer's refresh of ``version`` starts."""
        done = asyncio.Event()
        self._claims.setdefault(table_id, []).append((version, done))
        return done

    def release(self, table_id: str, version: int, done: asyncio.Event) -> None:
        """That refresh is over (rendered or failed)."""
        done.set()
        claims = self._claims.get(table_id, [])
        if (version, done) in claims:
            claims.remove((version, done))
        if not claims:
            self._claims.pop(table_id, None)

    def of(self, table_id: str, min_version: int) -> list[asyncio.Event]:
        """The refreshes under way of writes that made ``min_version`` or newer."""
        return [done for v, done in self._claims.get(table_id, ()) if v >= min_version]

    async def wait(self, table_id: str, min_version: int) -> None:
        """Until no refresh of a write that made ``min_version`` or newer is under way."""
        while claims := self.of(table_id, min_version):
            await asyncio.gather(*(done.wait() for done in claims))
