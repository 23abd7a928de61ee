"""The publisher's side of the pending-render marks
(:mod:`telegram_bot.state.pending_renders`): a render's mark is set as it starts, kept
while its coalesced edits wait in :mod:`telegram_bot.delivery.coalesce`, and cleared
once every one of them went out (:meth:`RenderGuard.watch`); a failed edit
leaves the mark to the sweepers.  Marks that outlived their owner are claimed
and rendered again (:meth:`RenderGuard.repair_due`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from tables import ServiceUnavailable
from telegram_bot.state.pending_renders import RenderMarks

log = logging.getLogger(__name__)

GONE = 2**53  # a version above any: clears whatever is marked

Rerender = Callable[[str, int], Awaitable[None]]
"""``rerender(table_id, version)``: render the table afresh (any version at
least ``version``)."""


class RenderGuard:
    """``marks`` None: no marks (renders are not guarded against a crash).
    ``give_up``: seconds the owner waits for a render's edits before it leaves
    the mark to the sweepers."""

    def __init__(self, marks: RenderMarks | None, *, give_up: float = 120.0) -> None:
        self.marks = marks
        self.give_up = give_up
        self._watching: set[asyncio.Task[None]] = set()

    async def start(self, table_id: str, version: int) -> None:
        """A render of ``version`` (0: the current one) starts."""
        if self.marks is not None:
            await self.marks.set(table_id, version)

    async def drop(self, table_id: str) -> None:
        """The table is gone: no render of it is pending any more."""
        if self.marks is not None:
            await self.marks.clear(table_id, GONE)

    def watch(self, table_id: str, version: int, sent: Sequence[asyncio.Future[bool]]) -> None:
        """The render of ``version`` asked for these edits: clear its mark once
        each went out (keeping it alive meanwhile)."""
        if self.marks is None:
            return
        task = asyncio.get_running_loop().create_task(self._settle(table_id, version, sent))
        self._watching.add(task)
        task.add_done_callback(self._watching.discard)

    async def _settle(
        self, table_id: str, version: int, sent: Sequence[asyncio.Future[bool]]
    ) -> None:
        marks = self.marks
        assert marks is not None
        loop = asyncio.get_running_loop()
        until = loop.time() + self.give_up
        every = marks.grace / 2
        # an edit that failed is an edit not sent (the mark stays for a sweep),
        # never an exception nobody retrieves (#38: 46 in the arena's failover)
        done = asyncio.gather(*sent, return_exceptions=True)
        try:
            while True:
                try:
                    results = await asyncio.wait_for(asyncio.shield(done), every)
                    break
                except TimeoutError:
                    if loop.time() >= until:
                        log.warning(
                            "render of %s#%s: edits still wait; left to a sweep", table_id, version
                        )
                        done.cancel()
                        # the cancelled gather holds a CancelledError: heard
                        # here, not logged as "never retrieved" (#40)
                        done.add_done_callback(_heard)
                        return
                    await marks.keep(table_id)  # still ours: no sweeper takes it
            if all(r is True for r in results):
                await marks.clear(table_id, version)
        except ServiceUnavailable as e:  # a fault: the mark outlives us, a sweep renders it
            log.warning("render of %s#%s: its mark not kept or cleared (%s)", table_id, version, e)

    async def repair_due(self, rerender: Rerender) -> list[str]:
        """One sweep of this process's share of the shards (#39): claim the
        marks that outlived their owner and render those tables again; the
        tables claimed."""
        if self.marks is None:
            return []
        claimed = await self.marks.sweep()
        for c in claimed:
            if c.tries < 0:
                tries = self.marks.max_tries
                log.warning("render of %s#%s: given up after %s repairs", c.table, c.version, tries)
        todo = [c for c in claimed if c.tries >= 0]
        for c in todo:
            log.info("repairing the render of %s#%s (try %s)", c.table, c.version, c.tries)
        await asyncio.gather(*(rerender(c.table, c.version) for c in todo), return_exceptions=True)
        return [c.table for c in todo]

    async def stop_sweeping(self) -> None:
        """This process sweeps no more: the others take its shards at their
        next sweep (#39; a Redis fault logged: they take them once its
        heartbeat is old)."""
        if self.marks is not None:
            try:
                await self.marks.leave()
            except ServiceUnavailable as e:
                log.warning("render sweep: not left: %s", e)

    async def aclose(self) -> None:
        """Wait a little (``grace``) for the renders being watched -- their marks
        cleared --, then stop watching (a mark left behind is repaired by a sweep)."""
        if self._watching and self.marks is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    asyncio.gather(*self._watching, return_exceptions=True), self.marks.grace
                )
        watching = list(self._watching)
        self.abandon()
        await asyncio.gather(*watching, return_exceptions=True)  # done before Redis closes

    def abandon(self) -> None:
        """Stop watching at once (as a crash would)."""
        for task in list(self._watching):
            task.cancel()


def _heard(future: asyncio.Future[Any]) -> None:
    """Retrieve a finished future's outcome, so that nothing is left unheard."""
    if not future.cancelled():
        future.exception()
