"""The bot process's background loops (:mod:`telegram_bot.app.loops`) beyond
what the end-to-end tests show: the flood limiter's catch-up (#40)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from telegram_bot.app import BotApp
from tests.bot.e2e_kit import SAFETY, Harness


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def test_the_background_charges_the_flood_journal_of_the_chats_that_fell_back(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """The renders a process claimed while a chat's keys were down reach the
    chat's windows as soon as it answers (#40,
    ``FallbackFloodLimiter.catch_up``): the background asks the delivery for
    it again and again -- not only the process's next call to that chat --
    and goes on after a failure."""
    app = BotApp(Harness(fake, redis_url, redis_prefix).settings())
    await app.setup()
    asked = 0
    twice = asyncio.Event()

    async def catch_up() -> int:
        nonlocal asked
        asked += 1
        if asked == 1:
            raise RuntimeError("a bug in one round")  # the loop lives on
        if asked >= 3:
            twice.set()
        return 0

    app.delivery.catch_up = catch_up  # type: ignore[method-assign]
    try:
        app.start_background()
        await asyncio.wait_for(twice.wait(), SAFETY)
        assert app.background.loop_failures >= 1
    finally:
        await app.aclose()
