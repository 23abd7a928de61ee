"""The sandbox page shows the Bot API's newer features as an app would: a
``date_time`` entity formatted, button styles in colour, disabled buttons greyed
(and pressing them sends nothing), and an ephemeral message only in its
receiver's column. The page runs on the fake alone (no bot process): a real
aiogram ``Bot`` makes the calls. Chromium as in ``test_browser.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from aiogram.types import (
    DisabledButton,
    EphemeralMessageParameters,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
)

from sandbox.fake_api import RateLimits
from sandbox.page.server import PageTelegram
from tests.sandbox.test_browser import CHROMIUM_ARGS, WAIT_MS, chromium_path, column, open_chat

UNIX = 1647531900


@pytest.fixture
async def fake() -> AsyncIterator[PageTelegram]:
    server = PageTelegram(page_config={"admin_url": None}, limits=RateLimits.off())
    async with server:
        yield server


@asynccontextmanager
async def open_page(url: str) -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            tab = await browser.new_page(viewport={"width": 1200, "height": 800})
            errors: list[str] = []
            tab.on("pageerror", lambda error: errors.append(str(error)))
            await tab.goto(url + "/")
            await tab.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
            yield tab
            assert not errors, f"JavaScript errors on the page: {errors}"
        finally:
            await browser.close()


@pytest.mark.slow
async def test_the_page_shows_styles_times_and_ephemeral_messages(fake: PageTelegram) -> None:
    alice = fake.add_user("Alice")
    bob = fake.add_user("Bob")
    group = fake.create_group("Game night", alice, bob)
    alice.add_bot_to(group)
    bot = fake.make_bot()
    try:
        await bot.send_message(
            group.id,
            f'Move by <tg-time unix="{UNIX}" format="wDT">the deadline</tg-time>',
            parse_mode="HTML",
            reply_markup=InlineKeyboardMarkup(
                inline_keyboard=[
                    [
                        InlineKeyboardButton(text="Leave", callback_data="l", style="danger"),
                        InlineKeyboardButton(text="Wait", disabled=DisabledButton()),
                    ]
                ]
            ),
        )
        await bot.send_message(
            group.id,
            "Your hand: 7♠",
            reply_markup=InlineKeyboardMarkup(
                inline_keyboard=[[InlineKeyboardButton(text="7♠", callback_data="c:7S")]]
            ),
            ephemeral_message_parameters=EphemeralMessageParameters(receiver_user_id=alice.id),
        )
        async with open_page(fake.url) as page:
            a, b = column(page, "Alice"), column(page, "Bob")
            for col in (a, b):
                await open_chat(col, "Game night")
            public = a.locator(".msg[data-from='bot']", has_text="Move by").first
            await public.wait_for(timeout=WAIT_MS)
            time_node = public.locator(".tg-time")
            assert await time_node.get_attribute("data-format") == "wDT"
            assert (await time_node.inner_text()) != "the deadline"  # formatted, not the text
            assert await public.locator(".kb-btn.style-danger").count() == 1
            wait_button = public.locator(".kb-btn", has_text="Wait")
            assert await wait_button.is_disabled()
            mine = a.locator(".msg.ephemeral", has_text="Your hand")
            await mine.wait_for(timeout=WAIT_MS)
            assert await b.locator(".msg.ephemeral").count() == 0
            assert await b.locator(".msg", has_text="Your hand").count() == 0
            await wait_button.evaluate("b => b.click()")  # a disabled button does nothing
            await mine.locator(".kb-btn", has_text="7♠").click()
            await page.wait_for_function(
                "() => document.querySelector(\".column[data-user='Alice']\").dataset.pending === '1'",
                timeout=WAIT_MS,
            )
        queries = list(fake.world.callback_queries.values())
        assert [(q.user_id, q.data, q.message.ephemeral_message_id) for q in queries] == [
            (alice.id, "c:7S", 1)
        ]
    finally:
        await bot.session.close()
