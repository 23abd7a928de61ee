"""The Mini App's pages through a Redis outage (#42): a move from a page
while Redis is down is answered "unavailable" and changes nothing; once Redis
is back the process's live channels are subscribed again, every watched table
is read again, and the page follows the moves made through its buttons and
itself as before -- on one server and on a cluster whose masters all died."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from tests.bot.e2e_kit import SAFETY, Harness, play_out, running
from tests.bot.miniapp_kit import MINIAPP, init_data, pages, serving
from tests.faults.conftest import ClusterOutage, FaultyRedis
from tests.faults.test_bot_faults import (
    FAST_LOOPS,
    UNAVAILABLE,
    acts,
    solo_game,
    tracebacks_of_faults,
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def resubscribed(h: Harness, before: int) -> None:
    assert h.bot is not None
    server = h.bot.app.page_server
    assert server is not None
    deadline = time.monotonic() + SAFETY
    while server.hub.subscriptions <= before:
        assert time.monotonic() < deadline, "the live channels were never subscribed again"
        await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_a_page_lives_through_a_redis_outage(
    outage: FaultyRedis | ClusterOutage, fake: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    async with running(outage.url, outage.prefix, fake, **FAST_LOOPS, **MINIAPP) as h:
        ann, tid = await solo_game(h, fake)
        assert h.bot is not None
        assert h.bot.app.page_server is not None
        async with serving(h) as base, pages(base) as open_page:
            page = await open_page(init_data(fake.token, ann.id), tid)
            view = await page.wait(lambda: (v := page.view) and v["game"]["legal"] and v)
            subscribed = h.bot.app.page_server.hub.subscriptions
            before = await acts(h, tid)
            outage.kill()
            down = await page.move(view["game"]["legal"][0], view)
            assert down["status"] == "down", down
            assert UNAVAILABLE in down["text"]
            outage.start()
            assert await acts(h, tid) == before  # nothing of the outage was applied
            await resubscribed(h, subscribed)
            # a move through his hand message: the page follows
            await play_out(h, tid, [ann], stop_after=1)
            version, _moves = await acts(h, tid)
            await page.view_after(version - 1)
            # and a move from the page itself
            view = await page.wait(lambda: (v := page.view) and v["game"]["legal"] and v)
            result = await page.move(view["game"]["legal"][0], view)
            assert result["ok"], result
            await page.view_after(result["version"] - 1)
    assert tracebacks_of_faults(caplog) == []


async def test_a_page_reconnecting_after_a_restart_gets_the_table_at_once(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, **FAST_LOOPS, **MINIAPP) as h:
        ann, tid = await solo_game(h, fake)
        async with serving(h) as base, pages(base) as open_page:
            page = await open_page(init_data(fake.token, ann.id), tid)
            await page.wait(lambda: page.view)
        await play_out(h, tid, [ann], stop_after=2)  # moves while no page was open
        await h.restart()  # a deploy: the pages of the old process were closed
        version, _moves = await acts(h, tid)
        async with serving(h) as base, pages(base) as open_page:
            again = await open_page(init_data(fake.token, ann.id))  # his own table
            view = await again.wait(lambda: again.view)
            assert view["table"] == tid
            assert view["version"] >= version
