"""The sandbox's Mini App (#42): with it on, the bot serves its page on a port
of its own while it polls, loading the fake's stand-in ``telegram-web-app.js``
and framed by the sandbox's page."""

from __future__ import annotations

import aiohttp

from sandbox.page import Sandbox
from telegram_bot.miniapp.server import origin_of
from telegram_bot.settings import Settings


async def test_the_sandbox_serves_the_mini_apps_page(redis_url: str, redis_prefix: str) -> None:
    settings = Settings(redis_prefix=redis_prefix, default_timer=0)
    async with Sandbox(redis_url=redis_url, settings=settings, miniapp=True) as sandbox:
        bot = sandbox.app.settings
        async with aiohttp.ClientSession() as http, http.get(bot.miniapp_url) as page:
            assert page.status == 200
            assert f'<script src="{sandbox.fake.web_app_js}">' in await page.text()
            csp = page.headers["Content-Security-Policy"]
            assert f"script-src 'self' {sandbox.fake.web_app_js};" in csp
            assert origin_of(sandbox.url) in csp.split("frame-ancestors", 1)[1]
