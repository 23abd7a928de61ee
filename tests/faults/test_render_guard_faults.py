"""The render guard's watch (:class:`telegram_bot.publishing.repair.RenderGuard`)
through a failed edit and a dead Redis: the mark is left to a sweep, and
nothing raises where nobody listens (#38: 46 "_GatheringFuture exception was
never retrieved" in the bots' logs through the arena's cluster failover)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tables import LiveConfig, TableService
from telegram_bot.publishing.repair import RenderGuard
from telegram_bot.state.pending_renders import RenderMarks
from tests.faults.conftest import FaultyRedis


@pytest.fixture
async def svc(faulty_redis: FaultyRedis) -> AsyncIterator[TableService]:
    service = TableService.from_url(faulty_redis.url, LiveConfig(prefix="rg:"))
    yield service
    await service.aclose()


async def watched(guard: RenderGuard) -> list[BaseException | None]:
    """Wait for the guard's watches to end: each one's exception (None: none)."""
    tasks = list(guard._watching)
    await asyncio.wait(tasks, timeout=30)
    return [t.exception() for t in tasks]


async def test_a_failed_edit_and_a_dead_redis_leave_the_mark_and_raise_nothing(
    faulty_redis: FaultyRedis, svc: TableService
) -> None:
    loop = asyncio.get_running_loop()
    unheard: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: unheard.append(context))
    marks = RenderMarks(svc.kv, grace=0.2)
    guard = RenderGuard(marks, give_up=30)
    await guard.start("T1", 1)
    failed: asyncio.Future[bool] = loop.create_future()
    sent: asyncio.Future[bool] = loop.create_future()
    guard.watch("T1", 1, [failed, sent])
    failed.set_exception(RuntimeError("the edit's call failed"))
    sent.set_result(True)
    assert await watched(guard) == [None]  # an edit failed: the mark stays, no raise

    # the watch is abandoned (a shutdown, a failover's restart) while an edit
    # waits, and the edit fails after: nobody is left to hear it, and nothing
    # may be left unheard (before: its gather held the exception, never retrieved)
    await guard.start("T2", 1)
    waiting: asyncio.Future[bool] = loop.create_future()
    guard.watch("T2", 1, [waiting])
    await asyncio.sleep(0.05)
    faulty_redis.kill()
    guard.abandon()
    await asyncio.sleep(0.05)
    waiting.set_exception(RuntimeError("and then the edit failed"))
    await asyncio.sleep(0.05)
    del failed, sent, waiting
    gc.collect()
    await asyncio.sleep(0.05)
    assert [c.get("message") for c in unheard] == []


async def test_a_watch_that_gives_up_leaves_nothing_unheard(svc: TableService) -> None:
    """An edit that waits past ``give_up`` (held by the flood limiter through a
    failover): the watch leaves the mark to a sweep and cancels its wait -- and
    the cancelled wait is no "exception never retrieved" (#40: 51 of them in the
    bots' logs of the arena's failover run)."""
    loop = asyncio.get_running_loop()
    unheard: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: unheard.append(context))
    marks = RenderMarks(svc.kv, grace=0.1)
    guard = RenderGuard(marks, give_up=0.2)
    await guard.start("T3", 1)
    waiting: asyncio.Future[bool] = loop.create_future()
    guard.watch("T3", 1, [waiting])
    assert await watched(guard) == [None]
    assert waiting.cancelled()  # the edit's wait given up
    del waiting
    gc.collect()
    await asyncio.sleep(0.05)
    assert [c.get("message") for c in unheard] == []
