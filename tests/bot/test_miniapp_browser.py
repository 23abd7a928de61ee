"""The Mini App's page in a real browser (#42): headless Chromium (Debian's,
as ``tests/sandbox/test_browser.py`` runs it) opens the page the bot's process
serves, with a stand-in ``Telegram.WebApp`` that reads the init data from the
URL's hash as Telegram's script does; the table is drawn, a hostile name is
text, a card tapped twice is played, and the other page sees the move.

With ``MINIAPP_SCREENSHOT=docs/miniapp`` it saves ``-light.png`` and
``-dark.png`` screenshots there."""

from __future__ import annotations

import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from aiohttp import web

from sandbox.fake_api import FakeTelegram, RateLimits
from telegram_bot.miniapp.server import mount
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import running
from tests.bot.miniapp_kit import MINIAPP, init_data
from tests.sandbox.test_browser import CHROMIUM_ARGS, WAIT_MS, chromium_path

pytestmark = pytest.mark.slow

STAND_IN = """
(() => {
  const hash = new URLSearchParams(location.hash.slice(1));
  const noop = () => {};
  const theme = JSON.parse(hash.get("theme") || "{}");
  for (const [k, v] of Object.entries(theme)) {
    document.documentElement.style.setProperty("--tg-theme-" + k.replace(/_/g, "-"), v);
  }
  window.Telegram = { WebApp: {
    initData: hash.get("tgWebAppData") || "", initDataUnsafe: {}, themeParams: theme,
    ready: noop, expand: noop,
    MainButton: { setText: noop, show: noop, hide: noop, onClick: noop },
    HapticFeedback: { impactOccurred: noop, notificationOccurred: noop, selectionChanged: noop },
  } };
})();
"""
DARK = {
    "bg_color": "#17212b",
    "text_color": "#f5f5f5",
    "hint_color": "#708499",
    "button_color": "#5288c1",
    "button_text_color": "#ffffff",
    "secondary_bg_color": "#232e3c",
}


@pytest.fixture
def sock() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    return s


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def test_two_pages_in_chromium_play_and_follow(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, sock: socket.socket, tmp_path: Path
) -> None:
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    async with running(
        redis_url,
        redis_prefix,
        fake,
        flood_limiter=False,
        telegram_web_app_js=f"{base}/tg.js",
        **MINIAPP,
    ) as h:
        ann = fake.add_user("Ann <b>bold</b>", language_code="en")
        bob = fake.add_user("Bob", language_code="en")
        tid, _group = await group_lobby(h, "shchelkovsky", [ann, bob], 1)
        table, state, _v = await h.svc.tables.get(tid)
        assert state is not None
        leader = table.seats[state.to_act()[0]].user
        first, second = (ann, bob) if leader == ann.id else (bob, ann)
        assert h.bot is not None
        assert h.bot.app.page_server is not None
        root = web.Application()

        async def stand_in(_request: web.Request) -> web.Response:
            return web.Response(text=STAND_IN, content_type="application/javascript")

        root.router.add_get("/tg.js", stand_in)
        mount(root, "/app", h.bot.app.page_server.web_app())
        runner = web.AppRunner(root)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        try:
            await _play_in_browser(base, tid, fake.token, first.id, second.id, tmp_path)
        finally:
            await runner.cleanup()


def _url(base: str, tid: str, init: str, theme: dict[str, str] | None = None) -> str:
    import json

    hash_ = f"tgWebAppData={quote(init)}"
    if theme:
        hash_ += "&theme=" + quote(json.dumps(theme))
    return f"{base}/app/?t={tid}#{hash_}"


async def _play_in_browser(
    base: str, tid: str, token: str, first: int, second: int, tmp_path: Path
) -> None:
    from playwright.async_api import TimeoutError as PlaywrightTimeout
    from playwright.async_api import async_playwright

    shots = os.environ.get("MINIAPP_SCREENSHOT") or str(tmp_path / "miniapp")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(
                viewport={"width": 390, "height": 760}, reduced_motion="reduce"
            )
            errors: list[str] = []
            mine = await context.new_page()
            mine.on("pageerror", lambda e: errors.append(str(e)))
            theirs = await context.new_page()
            theirs.on("pageerror", lambda e: errors.append(str(e)))
            await mine.goto(_url(base, tid, init_data(token, first)))
            await theirs.goto(_url(base, tid, init_data(token, second), DARK))
            for page in (mine, theirs):
                await page.locator("#hand .card").first.wait_for(timeout=WAIT_MS)
            names = await mine.locator("#seats .seat .name").all_text_contents()
            assert "Ann <b>bold</b>" in names  # a name is text, never markup
            assert await mine.locator("#seats b").count() == 0
            await mine.screenshot(path=f"{shots}-light.png")
            before = int(await theirs.evaluate("document.body.dataset.version"))
            for _attempt in range(3):  # a new view between his taps may take his card away
                card = mine.locator("#hand .card.playable").first
                name = await card.get_attribute("data-card")
                await card.click()  # selected ...
                again = mine.locator(f"#hand .card.selected[data-card='{name}']").first
                try:
                    await again.click(timeout=WAIT_MS / 6)  # ... played
                    break
                except PlaywrightTimeout:
                    continue
            # his move made (whatever the AI did meanwhile) ...
            played = await moved(mine, before)
            # ... and the other page follows to it
            await theirs.wait_for_function(
                "v => Number(document.body.dataset.version) >= v", arg=played, timeout=WAIT_MS
            )
            await theirs.screenshot(path=f"{shots}-dark.png")
            assert not errors, errors
            await context.close()
        finally:
            await browser.close()


async def moved(page: Any, after: int) -> int:
    """The version his page's move made, once its result came (a move of his
    was applied after version ``after``)."""
    await page.wait_for_function(
        "v => Number(document.body.dataset.moved || 0) > v", arg=after, timeout=WAIT_MS
    )
    return int(await page.evaluate("document.body.dataset.moved"))
