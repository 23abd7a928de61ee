"""A stopping bot lets the updates in hand finish before it closes Redis and its
Telegram session (aiogram's polling does not wait for its update tasks)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from tables.ratings import PlayerRatings
from tests.bot.e2e_kit import SAFETY, running


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


class Said(logging.Handler):
    """Sets ``event`` once a log record says ``words``."""

    def __init__(self, words: str) -> None:
        super().__init__(logging.INFO)
        self.words = words
        self.event = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.words in record.getMessage():
            self.event.set()


async def test_a_command_in_hand_at_a_stop_is_answered_before_redis_closes(
    fake: FakeTelegram,
    redis_url: str,
    redis_prefix: str,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.INFO, logger="telegram_bot.handlers.middlewares")
    waits = Said("in flight")  # the stop waits for the update in hand
    logging.getLogger("telegram_bot.handlers.middlewares").addHandler(waits)
    try:
        await stop_with_a_command_in_hand(fake, redis_url, redis_prefix, monkeypatch, waits)
    finally:
        logging.getLogger("telegram_bot.handlers.middlewares").removeHandler(waits)


async def stop_with_a_command_in_hand(
    fake: FakeTelegram,
    redis_url: str,
    redis_prefix: str,
    monkeypatch: pytest.MonkeyPatch,
    waits: Said,
) -> None:
    async with running(redis_url, redis_prefix, fake) as h:
        assert h.bot is not None
        app = h.bot.app
        ann = fake.add_user("Ann", language_code="en")
        order: list[str] = []
        entered, go, closed = asyncio.Event(), asyncio.Event(), asyncio.Event()
        read = app.svc.ratings.of
        close = app.svc.aclose

        async def slow_read(user: int) -> PlayerRatings:  # /rating, held mid-way
            entered.set()
            await go.wait()
            got = await read(user)
            order.append("read")
            return got

        async def closing() -> None:
            order.append("closed")
            closed.set()
            await close()

        monkeypatch.setattr(app.svc.ratings, "of", slow_read)
        monkeypatch.setattr(app.svc, "aclose", closing)
        ann.send("/rating")
        await asyncio.wait_for(entered.wait(), SAFETY)
        stopping = asyncio.create_task(h.stop())
        # until the stop either closed Redis (the fault) or waits for the update
        signs = [asyncio.ensure_future(e.wait()) for e in (closed, waits.event)]
        await asyncio.wait([stopping, *signs], return_when=asyncio.FIRST_COMPLETED)
        for sign in signs:
            sign.cancel()
        go.set()
        await stopping
        assert order == ["read", "closed"]
        reply = await ann.wait_message("Reliability", timeout=SAFETY)
        assert "Ann" in (reply.text or "")
    assert not fake.stats.errors, fake.stats.error_texts
