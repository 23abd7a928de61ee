"""Where the bot's process serves the Mini App (#42): in webhook mode on the
webhook's own server under ``MINIAPP_PATH``; with long polling (no web server)
on ``MINIAPP_PORT``; with ``MINIAPP_URL`` unset, nowhere."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator

import aiohttp
import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from telegram_bot.__main__ import run
from telegram_bot.app import BotApp
from tests.bot.e2e_kit import SAFETY, Harness
from tests.bot.miniapp_kit import MINIAPP, init_data
from tests.bot.test_e2e_webhook import webhook_bot


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def _page_and_channel(base: str, token: str) -> None:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/app/") as page:
            assert page.status == 200
            assert (
                "frame-ancestors https://web.telegram.org"
                in page.headers["Content-Security-Policy"]
            )
        async with http.ws_connect(f"{base}/app/live") as ws:
            await ws.send_json({"t": "hello", "init": init_data(token, 77), "table": ""})
            frame = await ws.receive_json(timeout=SAFETY)
            assert frame["t"] in ("hello", "none"), frame  # he sits nowhere: nothing to show


async def test_webhook_mode_serves_the_page_on_the_webhooks_server(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with webhook_bot(
        redis_url, redis_prefix, fake, flood_limiter=False, miniapp_url=MINIAPP["miniapp_url"]
    ) as h:
        base = h.webhook_url.rsplit("/telegram", 1)[0]
        await _page_and_channel(base, fake.token)
        async with aiohttp.ClientSession() as http, http.get(f"{base}/healthz") as health:
            assert "Content-Security-Policy" not in health.headers  # the page's only


async def test_polling_serves_the_page_on_its_own_port(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    with socket.socket() as probe:  # a free port (closed again for the bot to take)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    h = Harness(fake, redis_url, redis_prefix)
    settings = h.settings().model_copy(
        update={**MINIAPP, "miniapp_port": port, "miniapp_host": "127.0.0.1"}
    )
    app = BotApp(settings, clock=h.clock)
    task = asyncio.create_task(run(settings, app=app))
    try:
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as http:
            for _ in range(int(SAFETY / 0.05)):  # until it listens
                with contextlib.suppress(aiohttp.ClientError):
                    async with http.get(f"{base}/app/") as page:
                        if page.status == 200:
                            break
                await asyncio.sleep(0.05)
        await _page_and_channel(base, fake.token)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, SAFETY)


async def test_without_miniapp_url_there_is_no_mini_app(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    settings = Harness(fake, redis_url, redis_prefix).settings()
    app = BotApp(settings)
    try:
        await app.setup()
        assert app.page_server is None
    finally:
        await app.aclose()
