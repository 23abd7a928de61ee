"""Telegram's time on a shorter scale (#37): the fake Bot API and the bot read
Telegram's windows, delays and ``retry_after`` on a clock ``k`` times as fast
and sleep ``1 / k`` of each wait, so a game played at Telegram's pace takes
``1 / k`` of the time with the same answers (the end-to-end games that use it
say so: ``tests.bot.e2e_kit.TELEGRAM_SCALE``)."""

from __future__ import annotations

import asyncio
import time

import pytest
from pydantic import ValidationError

from engine.clock import Scaled, scaled
from sandbox.fake_api import FakeTelegram, ManualClock, RateLimits
from telegram_bot.delivery import scaled_sleep
from telegram_bot.settings import Settings

GROUP = -100


def test_a_scaled_clock_runs_k_times_as_fast_and_scale_1_is_the_clock_itself() -> None:
    base = ManualClock(start=100.0)
    fast = scaled(base, 10)
    start = fast()
    base.advance(6.0)
    assert fast() - start == pytest.approx(60.0)
    assert scaled(time.time, 1) is time.time
    with pytest.raises(ValueError, match="positive"):
        Scaled(base, 0)


async def test_the_fake_gives_the_same_answers_in_a_tenth_of_the_time() -> None:
    """Scale 10: a group's 20 in any minute are 20 in any 6 real seconds, and
    the 429's ``retry_after`` is in Telegram's seconds, as at scale 1."""
    answers = {}
    for k in (1, 10):
        base = ManualClock()
        async with FakeTelegram(limits=RateLimits(), clock=base, time_scale=k) as fake:
            control = fake.world.limiter
            seen = []
            for _ in range(20):  # one a Telegram second
                seen.append(control.acquire(GROUP, True))
                base.advance(1.0 / k)
            seen.append(control.acquire(GROUP, True))  # the 21st within the minute
            base.advance(40.0 / k)  # 60 Telegram seconds after the first
            seen.append(control.acquire(GROUP, True))
            answers[k] = seen
            # a press's answer window is real seconds, whatever the scale
            assert fake.world.callback_answer_window == 15.0 * k
    assert answers[1] == answers[10] == [0] * 20 + [40, 0]


async def test_the_bot_sleeps_a_kth_of_each_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    slept: list[float] = []

    async def record(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", record)
    await scaled_sleep(10)(5.0)  # a 429's retry_after of 5 Telegram seconds
    await scaled_sleep(1)(5.0)
    assert slept == [0.5, 5.0]


def test_only_a_fake_bot_api_may_run_on_another_time_scale() -> None:
    with pytest.raises(ValidationError, match="TELEGRAM_TIME_SCALE is for the fake Bot API"):
        Settings(bot_token="1:x", telegram_time_scale=10)
    fake = Settings(bot_token="1:x", telegram_api_url="http://127.0.0.1:1", telegram_time_scale=10)
    assert fake.telegram_time_scale == 10
    with pytest.raises(ValidationError):
        Settings(bot_token="1:x", telegram_api_url="http://127.0.0.1:1", telegram_time_scale=0)


async def test_the_bounds_of_our_own_latency_keep_their_real_seconds(
    redis_url: str, redis_prefix: str
) -> None:
    """Telegram's windows run k times as fast, but what bounds the bot's own
    latency -- leased and prepaid tokens waiting for their call, an edit in
    flight, a look at another's lease, how late an answer may come before its
    overall entry moves (#37) -- is the same real seconds on the scaled clock."""
    from aiogram import Bot

    from tables import LiveConfig, TableService
    from telegram_bot.delivery import DeliveryConfig, make_delivery
    from telegram_bot.delivery.flood.fallback import FallbackFloodLimiter
    from telegram_bot.delivery.flood.rates import FloodConfig

    svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
    bot = Bot("123:fake")
    try:
        delivery = make_delivery(
            bot,
            kv=svc.kv,
            config=DeliveryConfig(soon_delay=1, later_delay=2, table_delay=4),
            time_scale=10,
        )
        limiter = delivery.outgoing.limiter
        assert isinstance(limiter, FallbackFloodLimiter)
        got, base = limiter.config, FloodConfig()
        for name in ("lease_ttl", "prepaid_ttl", "edit_lease", "lease_poll", "overall_stamp_after"):
            assert getattr(got, name) == pytest.approx(10 * getattr(base, name)), name
        assert got.overall == base.overall  # Telegram's window: on the scaled clock as it is
        # within the chat windows' margin, Telegram's time too (#39): scaled, an
        # answer 1-2.5 scaled s late left its entry where the margin no longer covered it
        assert got.chat_stamp_after == base.chat_stamp_after
    finally:
        await bot.session.close()
        await svc.aclose()


async def test_the_groups_budgets_run_on_telegrams_clock(redis_url: str, redis_prefix: str) -> None:
    """A group's budget learned from a 429 (#24) is Telegram's: on the scaled
    clock like the limiter's windows (it was set so by the delivery after
    construction; #39 made it the app's, built on that clock)."""
    from telegram_bot.app import BotApp

    settings = Settings(
        bot_token="1:x",
        redis_url=redis_url,
        redis_prefix=redis_prefix,
        telegram_api_url="http://127.0.0.1:1",
        telegram_time_scale=10,
    )
    app = BotApp(settings)
    try:
        clock = app.budgets.clock
        assert isinstance(clock, Scaled)
        assert (clock.base, clock.factor) == (time.time, 10)
    finally:
        await app.aclose()
