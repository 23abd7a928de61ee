"""The sandbox page shows the Bot API's newer features as an app would: a
``date_time`` entity formatted, button styles in colour, disabled buttons greyed
(and pressing them sends nothing), and an ephemeral message only in its
receiver's column. The page runs on the fake alone (no bot process): a real
aiogram ``Bot`` makes the calls. Chromium as in ``test_browser.py``."""

from __future__ import annotations

import time
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
async def open_page(url: str, locale: str | None = None) -> AsyncIterator[Any]:
    """The page in Chromium (``locale``: the browser's own language)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            tab = await browser.new_page(viewport={"width": 1200, "height": 800}, locale=locale)
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


@pytest.mark.slow
async def test_times_speak_each_users_telegram_language(fake: PageTelegram) -> None:
    """#41: «⏱ ход закончится in 58 seconds» -- a ``date_time`` entity is written
    in the viewer's Telegram language (his ``language_code``), not the
    browser's (German here); with none, in English; his new language redraws it."""
    names = {"Alice": "en", "Carol": "ru", "Dana": "uk", "Eve": None}
    users = {n: fake.add_user(n, language_code=code) for n, code in names.items()}
    group = fake.create_group("Game night", *users.values())
    users["Alice"].add_bot_to(group)
    bot = fake.make_bot()
    soon = int(time.time()) + 3 * 3600  # «in 3 hours» for a while yet
    try:
        await bot.send_message(
            group.id,
            f'Ends <tg-time unix="{soon}" format="r">soon</tg-time>',
            parse_mode="HTML",
        )
        async with open_page(fake.url, locale="de-DE") as page:

            async def shown(name: str, expected: str) -> None:
                col = column(page, name)
                node = col.locator(".msg[data-from='bot']", has_text="Ends").locator(".tg-time")
                await node.filter(has_text=expected).wait_for(timeout=WAIT_MS)

            for name in names:
                await open_chat(column(page, name), "Game night")
            await shown("Alice", "in 3 hours")
            await shown("Carol", "через 3 часа")
            await shown("Dana", "через 3 години")
            await shown("Eve", "in 3 hours")
            users["Carol"].set_language("uk")
            await shown("Carol", "через 3 години")
            text = await page.locator(".tg-time").all_inner_texts()
            assert not [t for t in text if "Stunden" in t]  # never the browser's language
    finally:
        await bot.session.close()
