"""The Mini App's page through a dropped channel, in Chromium (#42): a move
tapped while the channel is down (a deploy, a network loss) is sent once it
is back, and a page away from its table (his own page) follows its table again
after a reconnect -- found by a hostile review: the first locked the page for
good, the second left a spectator's page frozen."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from engine import view as engine_view
from sandbox.fake_api import FakeTelegram, RateLimits
from telegram_bot.miniapp import PageServer
from telegram_bot.miniapp.server import mount
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import running
from tests.bot.miniapp_kit import MINIAPP, init_data
from tests.bot.test_miniapp_browser import STAND_IN, _url
from tests.sandbox.test_browser import CHROMIUM_ARGS, WAIT_MS, chromium_path

pytestmark = pytest.mark.slow


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def drop_every_channel(server: PageServer) -> None:
    for session in list(server.channel.sessions):
        await session.ws.close(code=1012)  # "service restart"


async def test_a_page_goes_on_through_a_dropped_channel(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    from playwright.async_api import async_playwright

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with running(
        redis_url,
        redis_prefix,
        fake,
        flood_limiter=False,
        telegram_web_app_js=f"{base}/tg.js",
        **MINIAPP,
    ) as h:
        ann = fake.add_user("Ann", language_code="en")
        bob = fake.add_user("Bob", language_code="en")
        carol = fake.add_user("Carol", language_code="en")
        tid, _group = await group_lobby(h, "shchelkovsky", [ann, bob], 0, watchers=[carol])
        table, state, _v = await h.svc.tables.get(tid)
        assert state is not None
        first = ann if table.seats[state.to_act()[0]].user == ann.id else bob
        assert h.bot is not None
        server = h.bot.app.page_server
        assert server is not None
        root = web.Application()

        async def stand_in(_request: web.Request) -> web.Response:
            return web.Response(text=STAND_IN, content_type="application/javascript")

        root.router.add_get("/tg.js", stand_in)
        mount(root, "/app", server.web_app())
        runner = web.AppRunner(root)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        try:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(
                    executable_path=chromium_path(), args=CHROMIUM_ARGS
                )
                context = await browser.new_context(
                    viewport={"width": 390, "height": 760}, reduced_motion="reduce"
                )
                # a move tapped while the channel is down goes once it is back
                mine = await context.new_page()
                await mine.goto(_url(base, tid, init_data(fake.token, first.id)))
                card = mine.locator("#hand .card.playable").first
                await card.wait_for(timeout=WAIT_MS)
                before = int(await mine.evaluate("document.body.dataset.version"))
                await drop_every_channel(server)
                name = await card.get_attribute("data-card")
                await card.click()
                await mine.locator(f"#hand .card.selected[data-card='{name}']").first.click()
                await mine.wait_for_function(
                    "v => Number(document.body.dataset.moved || 0) > v", arg=before, timeout=WAIT_MS
                )
                _t, _s, after = await h.svc.tables.get(tid)
                assert after == before + 1  # once
                # a spectator on his own page when the channel drops follows the table
                spec = await context.new_page()
                await spec.goto(_url(base, tid, init_data(fake.token, carol.id)))
                await spec.wait_for_function(
                    "v => Number(document.body.dataset.version || 0) >= v",
                    arg=after,
                    timeout=WAIT_MS,
                )
                await spec.locator("#to-player").click()
                await spec.wait_for_function("document.body.dataset.route === 'player'")
                await drop_every_channel(server)
                await spec.go_back()
                table, state, version = await h.svc.tables.get(tid)
                assert state is not None
                seat = state.to_act()[0]
                user = table.seats[seat].user
                assert user is not None
                move = engine_view(state, seat)["legal"][0]
                await h.svc.games.apply(tid, user, move, version, request_id="reconnect1")
                await spec.wait_for_function(
                    "v => Number(document.body.dataset.version || 0) > v",
                    arg=version,
                    timeout=WAIT_MS,
                )
                await browser.close()
        finally:
            await runner.cleanup()
