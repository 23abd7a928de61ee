"""The sandbox page opens Mini Apps (#42) as a Telegram app does: a ``web_app``
button, the menu button and a direct link open the app in a phone frame over
the user's column, with the stand-in ``Telegram.WebApp`` (signed init data,
theme switch, main button, ``close()``). The app here is a small stub page on
loopback; the page runs on the fake alone (no bot process), a real aiogram
``Bot`` makes the calls. Chromium as in ``test_browser.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from aiogram.types import (
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    MenuButtonWebApp,
    WebAppInfo,
)
from aiogram.utils.web_app import safe_parse_webapp_init_data
from aiohttp import web

from sandbox.fake_api import RateLimits
from sandbox.page.server import PageTelegram
from tests.sandbox.test_browser import WAIT_MS, column, open_chat
from tests.sandbox.test_browser_newer import open_page

STUB = """<!doctype html>
<html><head><meta charset="utf-8"><script src="{script}"></script></head>
<body>
<div id="user"></div><div id="start"></div><div id="scheme"></div><div id="main"></div>
<textarea id="data"></textarea>
<button id="close" type="button">close</button>
<script>
  const app = window.Telegram.WebApp;
  const show = () => {{ document.getElementById("scheme").textContent = app.colorScheme; }};
  document.getElementById("user").textContent = String(app.initDataUnsafe.user.id);
  document.getElementById("start").textContent = app.initDataUnsafe.start_param || "-";
  document.getElementById("data").value = app.initData;
  show();
  app.onEvent("themeChanged", show);
  app.MainButton.setText("Play").show();
  app.MainButton.onClick(() => {{ document.getElementById("main").textContent = "clicked"; }});
  app.HapticFeedback.impactOccurred("light");
  document.getElementById("close").addEventListener("click", () => app.close());
  app.ready();
  app.expand();
</script></body></html>"""


@pytest.fixture
async def fake() -> AsyncIterator[PageTelegram]:
    server = PageTelegram(page_config={"admin_url": None}, limits=RateLimits.off())
    async with server:
        yield server


@pytest.fixture
async def stub_app(fake: PageTelegram) -> AsyncIterator[str]:
    """A Mini App that shows what ``Telegram.WebApp`` gave it."""

    async def page(request: web.Request) -> web.Response:
        html = STUB.format(script=fake.web_app_js)
        return web.Response(text=html, content_type="text/html")

    app = web.Application()
    app.router.add_get("/app/", page)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/app/"
    finally:
        await runner.cleanup()


@pytest.mark.slow
async def test_buttons_links_and_the_menu_open_the_app_in_a_frame(
    fake: PageTelegram, stub_app: str
) -> None:
    alice = fake.add_user("Alice")
    bob = fake.add_user("Bob")
    alice.start()
    group = fake.create_group("Game night", alice, bob)
    alice.add_bot_to(group)
    fake.register_web_app("table", stub_app)
    bot = fake.make_bot()
    app_button = InlineKeyboardButton(text="🎴 Card table", web_app=WebAppInfo(url=stub_app))
    link = f"https://t.me/{fake.bot_user.username}/table?startapp=Tbl_-0123456"
    try:
        await bot.send_message(
            alice.id, "Your hand", reply_markup=InlineKeyboardMarkup(inline_keyboard=[[app_button]])
        )
        await bot.send_message(
            group.id,
            "The table",
            reply_markup=InlineKeyboardMarkup(
                inline_keyboard=[[InlineKeyboardButton(text="🎴 Card table", url=link)]]
            ),
        )
        await bot.set_chat_menu_button(
            menu_button=MenuButtonWebApp(text="My tables", web_app=WebAppInfo(url=stub_app))
        )
        async with open_page(fake.url) as page:
            a = column(page, "Alice")
            await a.locator(".kb-btn.web-app", has_text="Card table").click()
            await a.locator(".miniapp:not([hidden])").wait_for(timeout=WAIT_MS)
            await page.wait_for_function(
                "() => document.querySelector(\".column[data-user='Alice']\")"
                ".dataset.appReady === '1'",
                timeout=WAIT_MS,
            )
            frame = a.frame_locator(".miniapp-frame")
            await frame.locator("#user", has_text=str(alice.id)).wait_for(timeout=WAIT_MS)
            init_data = await frame.locator("#data").input_value()
            user = safe_parse_webapp_init_data(fake.token, init_data).user
            assert user is not None
            assert user.id == alice.id
            assert await frame.locator("#start").inner_text() == "-"
            assert await frame.locator("#scheme").inner_text() == "light"
            main = a.locator(".miniapp-main")  # the app's main button, drawn by "Telegram"
            await main.filter(has_text="Play").wait_for(timeout=WAIT_MS)
            await main.click()
            await frame.locator("#main", has_text="clicked").wait_for(timeout=WAIT_MS)
            await a.locator(".miniapp-theme").click()  # the theme switch: dark
            await frame.locator("#scheme", has_text="dark").wait_for(timeout=WAIT_MS)
            await frame.locator("#close").click()  # Telegram.WebApp.close()
            await a.locator(".miniapp").wait_for(state="hidden", timeout=WAIT_MS)
            # the private chat's menu button
            menu = a.locator(".composer .menu-app", has_text="My tables")
            await menu.click()
            await frame.locator("#user", has_text=str(alice.id)).wait_for(timeout=WAIT_MS)
            await a.locator(".miniapp-close").click()
            await a.locator(".miniapp").wait_for(state="hidden", timeout=WAIT_MS)
            # a direct link in the group opens in place, with its start_param
            b = column(page, "Bob")
            await open_chat(b, "Game night")
            await b.locator(".kb-btn", has_text="Card table").click()
            frame_b = b.frame_locator(".miniapp-frame")
            await frame_b.locator("#start", has_text="Tbl_-0123456").wait_for(timeout=WAIT_MS)
            await frame_b.locator("#user", has_text=str(bob.id)).wait_for(timeout=WAIT_MS)
    finally:
        await bot.session.close()
