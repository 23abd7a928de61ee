"""The flood limiter while its Redis is dead (``kill -9``): tokens come from
in-process buckets of the same rates (so replies still go out, at the same
pace), every edit is sent, and after Redis is back a message edited meanwhile
is judged afresh -- never dropped as a no-op by a digest from before."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tables import LiveConfig, TableService
from telegram_bot.delivery.flood.fallback import FallbackFloodLimiter
from telegram_bot.delivery.flood.limiter import NOOP, EditTicket, FloodConfig, FloodLimiter
from tests.faults.conftest import FaultyRedis
from tests.tables.conftest import FakeClock

CHAT = 42


@pytest.fixture
async def svc(faulty_redis: FaultyRedis) -> AsyncIterator[TableService]:
    service = TableService.from_url(faulty_redis.url, LiveConfig(prefix="ff:"))
    yield service
    await service.aclose()


async def test_tokens_come_from_local_buckets_while_redis_is_down(
    faulty_redis: FaultyRedis, svc: TableService
) -> None:
    clock = FakeClock()
    redis = FloodLimiter(svc.kv, FloodConfig(), clock=clock)
    limiter = FallbackFloodLimiter(redis, fallback_for=5.0)
    assert (await limiter.take(CHAT)).wait == 0  # Redis
    faulty_redis.kill()
    burst = FloodConfig().per_chat.burst
    waits = [(await limiter.take(CHAT)).wait for _ in range(int(burst) + 1)]
    assert waits[:-1] == [0] * int(burst)  # the chat's burst, in this process
    assert waits[-1] > 0  # then the same rate as in Redis: wait
    assert limiter.falling_back
    assert limiter.fallbacks == len(waits)
    clock.advance(1.0)
    assert (await limiter.take(CHAT)).wait == 0  # refilled at 1/s
    h = await limiter.headroom(CHAT)
    assert h.overall == 0
    await limiter.refund(CHAT)  # nothing raises while Redis is down
    await limiter.remember(CHAT, 7, "t", "m")
    await limiter.forget(CHAT, 7)
    assert await limiter.last_digest(CHAT, 7) is None


async def test_a_message_edited_during_the_outage_is_judged_afresh(
    faulty_redis: FaultyRedis, svc: TableService
) -> None:
    clock = FakeClock()
    redis = FloodLimiter(svc.kv, FloodConfig(), clock=clock)
    limiter = FallbackFloodLimiter(redis, fallback_for=5.0)
    a, b = EditTicket(CHAT, 7, "a", "k"), EditTicket(CHAT, 7, "b", "k")
    assert await limiter.admit_edit(a) == (0, False)  # shows A (in Redis)
    clock.advance(10)
    assert (await limiter.admit_edit(a)).wait == NOOP  # no-op: dropped
    faulty_redis.kill()
    assert (await limiter.admit_edit(b)).wait == 0  # edited to B, unrecorded
    faulty_redis.start()
    clock.advance(10)  # past the fallback: Redis again
    # back to A: Redis still holds A's digest, yet the message shows B -- not a no-op
    assert (await limiter.admit_edit(a)).wait == 0
    assert not limiter.falling_back
    clock.advance(10)
    assert (await limiter.admit_edit(a)).wait == NOOP  # recorded again
