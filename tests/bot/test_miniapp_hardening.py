"""The Mini App's channel against frames and sockets no page sends (#42,
point 9; found by a hostile review): nested JSON past the parser's depth, a
version that is no version, a flood of sockets that never say hello -- each
gets a clear answer or a close, and the process goes on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from telegram_bot.miniapp import session as page_session
from tests.bot.e2e_kit import running
from tests.bot.miniapp_kit import MINIAPP, init_data, pages, serving
from tests.bot.test_miniapp_pages import table_of_two


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def test_nested_json_and_bad_versions_change_nothing(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **MINIAPP) as h:
        tid, humans = await table_of_two(h, fake)
        _t, _s, version = await h.svc.tables.get(tid)
        async with serving(h) as base, pages(base) as open_page:
            page = await open_page(init_data(fake.token, humans[0].id), tid)
            view = await page.wait(lambda: page.view)
            hello = next(f for f in page.frames if f["t"] == "hello")
            assert isinstance(hello["now"], int)  # the server's clock, for the page's timer
            # past json's recursion limit: a RecursionError closed the socket
            await page.ws.send_str("[" * 8000)
            await page.ws.send_json({"t": "ping"})
            await page.wait(lambda: any(f["t"] == "pong" for f in page.frames))
            for n, bad in enumerate([True, -5, 2**60, 1.0, "3"]):
                rid = f"b{n}"
                frame = {"t": "move", "id": rid, "v": bad, "stamp": view["stamp"], "a": "P"}
                await page.ws.send_json(frame)
                result = await page.result(rid)
                assert (result["ok"], result["status"]) == (False, "bad"), bad
            assert not page.ws.closed
        _t, _s, after = await h.svc.tables.get(tid)
        assert after == version


async def test_sockets_that_never_say_hello_are_capped(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each socket waits ``HELLO_WITHIN`` s for its init data: beyond the cap
    the next is closed at once ("try again later"), and a page that proves
    its user still gets in once the others went."""
    monkeypatch.setattr(page_session, "WAITING_FOR_HELLO", 2)
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **MINIAPP) as h:
        tid, humans = await table_of_two(h, fake)
        async with serving(h) as base, aiohttp.ClientSession() as http:
            assert h.bot is not None
            server = h.bot.app.page_server
            assert server is not None
            silent = [await http.ws_connect(f"{base}/live") for _ in range(2)]
            for _ in range(500):  # both in the server's hands (no frame sent)
                if server.channel.waiting == 2:
                    break
                await asyncio.sleep(0.01)
            assert server.channel.waiting == 2
            third = await http.ws_connect(f"{base}/live")
            closed = await third.receive(timeout=10)
            assert closed.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)
            assert third.close_code == page_session.CLOSE_AGAIN
            for ws in silent:
                await ws.close()
            async with pages(base) as open_page:
                page = await open_page(init_data(fake.token, humans[0].id), tid)
                await page.wait(lambda: page.view)
