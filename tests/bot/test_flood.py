"""The shared outgoing flood limiter (telegram_bot.delivery.flood.limiter) on the real Redis,
driven by a fake clock passed into the script."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest
import redis.asyncio as aredis

from sandbox.fake_api.limits import FakeFloodControl, RateLimits
from tables import LiveConfig, TableService
from telegram_bot.delivery.flood.limiter import NOOP, EditTicket, FloodConfig, FloodLimiter, Rate
from tests.tables.conftest import FakeClock

PRIVATE = 42
GROUP = -100123


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def rl_config() -> FloodConfig:
    return FloodConfig()


@pytest.fixture
async def make_limiter(
    redis_url: str, redis_prefix: str, rl_config: FloodConfig, clock: FakeClock
) -> AsyncIterator[Callable[..., FloodLimiter]]:
    """Limiters, each on its own table service and Redis client (like separate
    bot processes), under the test's prefix."""
    made: list[TableService] = []

    def make(config: FloodConfig | None = None) -> FloodLimiter:
        svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
        made.append(svc)
        return FloodLimiter(svc.kv, config or rl_config, clock=clock)

    yield make
    for svc in made:
        await svc.aclose()


@pytest.fixture
def limiter(make_limiter: Callable[..., FloodLimiter]) -> FloodLimiter:
    return make_limiter()


async def takes(limiter: FloodLimiter, chat: int | None, n: int = 100) -> int:
    """How many acquires in a row succeed (stops at the first refusal)."""
    for i in range(n):
        if await limiter.acquire(chat) > 0:
            return i
    return n


async def test_private_chat_burst_then_refill(limiter: FloodLimiter, clock: FakeClock) -> None:
    burst = int(limiter.config.per_chat.burst)
    assert await takes(limiter, PRIVATE) == burst
    wait = await limiter.acquire(PRIVATE)
    assert wait == pytest.approx(1.0 / limiter.config.per_chat.per_second)
    clock.advance(wait / 2)
    assert await limiter.acquire(PRIVATE) == pytest.approx(wait / 2)
    clock.advance(wait / 2)
    assert await limiter.acquire(PRIVATE) == 0
    assert await limiter.acquire(PRIVATE) > 0
    # A long pause refills up to the burst, never beyond.
    clock.advance(3600)
    assert await takes(limiter, PRIVATE) == burst


async def test_chats_are_independent_but_share_the_overall_bucket(
    make_limiter: Callable[..., FloodLimiter], rl_config: FloodConfig, clock: FakeClock
) -> None:
    config = FloodConfig(overall=Rate(5.0, 5), per_chat=Rate(1.0, 2))
    lim = make_limiter(config)
    assert await takes(lim, 1) == 2
    assert await takes(lim, 2) == 2
    # chat 3 has tokens, the overall bucket has one left
    assert await takes(lim, 3) == 1
    wait = await lim.acquire(4)
    assert wait == pytest.approx(1 / 5)
    clock.advance(wait)
    assert await lim.acquire(4) == 0


async def test_headroom_keeps_the_reserve_for_urgent_messages(
    make_limiter: Callable[..., FloodLimiter], rl_config: FloodConfig, clock: FakeClock
) -> None:
    config = FloodConfig(
        overall=Rate(100.0, 100, reserve=10),
        per_chat=Rate(1.0, 3, reserve=1),
        lease=1,  # the overall tokens one at a time: the arithmetic below is exact
    )
    lim = make_limiter(config)
    keys = lim.keys
    assert await lim.headroom(PRIVATE) == (0, 0, 0)  # 3 tokens: 1 + the reserve of 1
    assert await lim.acquire(PRIVATE) == 0
    assert (await lim.headroom(PRIVATE)).wait == 0  # 2 left
    assert await lim.acquire(PRIVATE) == 0
    before = await lim.kv.hgetall(keys.rate_chat(PRIVATE))
    # 1 left: a deferrable message holds back a second; an urgent one goes now
    room = await lim.headroom(PRIVATE)  # the chat's reserve
    assert room.overall == 0
    assert room.chat == pytest.approx(1.0)
    assert await lim.kv.hgetall(keys.rate_chat(PRIVATE)) == before  # nothing taken
    clock.advance(0.25)
    assert (await lim.headroom(PRIVATE)).wait == pytest.approx(0.75)
    assert await lim.acquire(PRIVATE) == 0
    # the overall reserve counts too: other chats drain the overall bucket
    for chat in range(1000, 1089):
        assert await lim.acquire(chat) == 0
    # 10 tokens left overall, 1 + 10 needed: a hundredth of a second at 100/s
    room = await lim.headroom(2000)
    assert room.overall == pytest.approx(1 / 100)
    assert room.chat == 0
    assert await lim.take(2000) == (0, False)
    # a refusal says which bucket is short: the overall one here, a chat's below
    for chat in range(3000, 3100):
        if (verdict := await lim.take(chat)).wait > 0:
            break
    assert verdict.overall
    assert verdict.wait == pytest.approx(1 / 100)
    clock.advance(60)
    for _ in range(3):  # the chat's burst
        assert await lim.take(PRIVATE) == (0, False)
    verdict = await lim.take(PRIVATE)
    assert not verdict.overall
    assert verdict.wait > 0
    with pytest.raises(ValueError, match="0 <= reserve <= burst - 1 needed"):
        Rate(1.0, 2, reserve=1.5)


async def test_group_takes_from_three_buckets_atomically(
    make_limiter: Callable[..., FloodLimiter], rl_config: FloodConfig, clock: FakeClock
) -> None:
    config = FloodConfig(
        overall=Rate(100.0, 100),
        per_chat=Rate(1.0, 3),
        per_group=Rate(4 / 60, 4),
        lease_ttl=60,  # the lease outlives the test: the overall bucket is hit once
    )
    lim = make_limiter(config)
    keys = lim.keys
    assert await takes(lim, GROUP) == 3  # the chat bucket runs out first
    clock.advance(1.0)
    assert await lim.acquire(GROUP) == 0  # the 4th: the group bucket is now empty
    clock.advance(5.0)  # the chat bucket is full again, the group one is not
    before = await lim.kv.hgetall(keys.rate_chat(GROUP))
    overall_before = await lim.kv.hgetall(keys.rate_all())
    wait = await lim.acquire(GROUP)
    assert wait == pytest.approx((1 - 6 * 4 / 60) / (4 / 60))  # refilled for 6 s
    # refused: no bucket was touched (no partial take)
    assert await lim.kv.hgetall(keys.rate_chat(GROUP)) == before
    assert await lim.kv.hgetall(keys.rate_all()) == overall_before
    clock.advance(wait)
    assert await lim.acquire(GROUP) == 0
    # the private chat of the same number is another bucket
    assert await lim.acquire(-GROUP) == 0


async def test_keys_have_ttls(limiter: FloodLimiter, redis_url: str, redis_prefix: str) -> None:
    keys = limiter.keys
    assert await limiter.acquire(GROUP) == 0
    assert (await limiter.admit_edit(EditTicket(PRIVATE, 7, "t", "m"))).wait == 0
    for key in (keys.rate_all(), keys.rate_chat(GROUP), keys.rate_group(GROUP)):
        assert 0 < await limiter.kv.pttl(key) <= 120_000
    # a digest lives an hour past its last edit, not days
    assert 3_500_000 < await limiter.kv.pttl(keys.sent_digest(PRIVATE, 7)) <= 3_600_000
    # its last edit time only as long as the longest coalescing gap may need
    assert 0 < await limiter.kv.pttl(keys.edited_at(PRIVATE, 7)) <= 10_000
    raw = aredis.Redis.from_url(redis_url)
    try:
        found = sorted(
            k.decode() if isinstance(k, bytes) else k for k in await raw.keys(f"{redis_prefix}*")
        )
    finally:
        await raw.aclose()
    p = redis_prefix
    assert found == sorted(
        [
            f"{p}rl:{{all}}",
            f"{p}rl:{{c:{GROUP}}}:chat",
            f"{p}rl:{{c:{GROUP}}}:group",
            f"{p}rl:{{c:{PRIVATE}}}:chat",
            f"{p}rl:{{c:{PRIVATE}}}:msg:7",
            f"{p}rl:{{c:{PRIVATE}}}:at:7",
        ]
    )


async def test_two_clients_share_one_bucket(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    a, b = make_limiter(), make_limiter()
    assert await a.acquire(PRIVATE) == 0
    assert await b.acquire(PRIVATE) == 0
    assert await a.acquire(PRIVATE) > 0
    assert await b.acquire(PRIVATE) > 0
    clock.advance(1.0)
    assert await b.acquire(PRIVATE) == 0
    assert await a.acquire(PRIVATE) > 0


async def test_concurrent_acquires_never_overdraw(
    make_limiter: Callable[..., FloodLimiter],
) -> None:
    limiters = [make_limiter() for _ in range(4)]
    results = await asyncio.gather(*(lim.acquire(PRIVATE) for lim in limiters for _ in range(10)))
    assert sum(1 for r in results if r == 0) == int(limiters[0].config.per_chat.burst)


async def edit_wait(limiter: FloodLimiter, edit: EditTicket) -> float:
    """The wait :meth:`FloodLimiter.admit_edit` answers for ``edit``."""
    return (await limiter.admit_edit(edit)).wait


async def test_edit_digest(limiter: FloodLimiter, clock: FakeClock) -> None:
    assert await edit_wait(limiter, EditTicket(PRIVATE, 5, "t1", "m1")) == 0
    assert await edit_wait(limiter, EditTicket(PRIVATE, 5, "t1", "m1")) == NOOP  # no token taken
    assert await edit_wait(limiter, EditTicket(PRIVATE, 5, "t2", "m1")) == 0
    # out of tokens: refused, and the digest is not recorded
    assert await edit_wait(limiter, EditTicket(PRIVATE, 5, "t3", "m1")) > 0
    assert await limiter.last_digest(PRIVATE, 5) == "t2:m1"
    # even when out of tokens
    assert await edit_wait(limiter, EditTicket(PRIVATE, 5, "t2", "m1")) == NOOP
    await limiter.forget(PRIVATE, 5)
    assert await limiter.last_digest(PRIVATE, 5) is None
    await limiter.remember(PRIVATE, 6, "sent", "kb")
    assert await edit_wait(limiter, EditTicket(PRIVATE, 6, "sent", "kb")) == NOOP
    # a markup-only edit compares the markup and keeps the text
    assert await edit_wait(limiter, EditTicket(PRIVATE, 6, None, "kb")) == NOOP
    clock.advance(10)
    assert await edit_wait(limiter, EditTicket(PRIVATE, 6, None, "kb2")) == 0
    assert await limiter.last_digest(PRIVATE, 6) == "sent:kb2"
    assert await edit_wait(limiter, EditTicket(PRIVATE, 6, "sent", "kb2")) == NOOP
    # unknown message: a markup-only edit is never a no-op
    assert await edit_wait(limiter, EditTicket(PRIVATE, 7, None, "kb")) == 0
    assert await limiter.last_digest(PRIVATE, 7) == "?:kb"
    with pytest.raises(ValueError, match="bad content digest 'a:b'"):
        await limiter.admit_edit(EditTicket(PRIVATE, 7, "a:b", "kb"))


async def test_a_prepaid_edit_compares_and_records_without_tokens(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """For an edit whose tokens were taken ahead (a prepaid coalesced update)."""
    while await limiter.acquire(PRIVATE) == 0:  # the chat's bucket is empty now
        pass
    bucket = await limiter.kv.hgetall(limiter.keys.rate_chat(PRIVATE))
    # no token needed
    assert await edit_wait(limiter, EditTicket(PRIVATE, 8, "t1", "m1", prepaid=True)) == 0
    assert await limiter.last_digest(PRIVATE, 8) == "t1:m1"
    # shows this already
    assert await edit_wait(limiter, EditTicket(PRIVATE, 8, "t1", "m1", prepaid=True)) == NOOP
    assert await edit_wait(limiter, EditTicket(PRIVATE, 8, None, "m1", prepaid=True)) == NOOP
    assert await edit_wait(limiter, EditTicket(PRIVATE, 8, None, "m2", prepaid=True)) == 0
    assert await limiter.last_digest(PRIVATE, 8) == "t1:m2"
    assert await limiter.kv.hgetall(limiter.keys.rate_chat(PRIVATE)) == bucket  # untouched
    with pytest.raises(ValueError, match="bad content digest 'a:b'"):
        await limiter.admit_edit(EditTicket(PRIVATE, 8, "a:b", "m1", prepaid=True))


async def test_refund_gives_tokens_back_up_to_the_capacity(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    await limiter.refund(PRIVATE)  # no bucket yet: nothing is created
    assert await limiter.kv.pttl(limiter.keys.rate_chat(PRIVATE)) == -2  # no such key
    while await limiter.acquire(PRIVATE) == 0:
        pass
    await limiter.refund(PRIVATE)
    assert await limiter.acquire(PRIVATE) == 0  # the token came back
    assert await limiter.acquire(PRIVATE) > 0
    clock.advance(60)
    for _ in range(5):
        await limiter.refund(PRIVATE)
    for key, rate in limiter.buckets(PRIVATE)[1:]:  # the overall token: to the allowance
        bucket = await limiter.kv.hgetall(key)
        assert float(bucket["t"]) == rate.burst  # never above the capacity
        assert await limiter.kv.pttl(key) > 0


async def test_tokens_taken_long_ago_go_back_only_where_the_bucket_still_counts_them(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """``held``: the tokens were taken that long ago.  A bucket that may have
    refilled to its capacity since (held * rate >= cost) forgot them: nothing
    goes back there (the group's slow bucket still gets its token back)."""
    group = -100_777
    while await limiter.acquire(group) == 0:
        pass
    chat_key, group_key = limiter.keys.rate_chat(group), limiter.keys.rate_group(group)
    before = {k: float((await limiter.kv.hgetall(k))["t"]) for k in (chat_key, group_key)}
    await limiter.refund(group, held=1.5)  # chat: 1/s -> forgot it; group: 19/min -> not
    after = {k: float((await limiter.kv.hgetall(k))["t"]) for k in (chat_key, group_key)}
    assert after[chat_key] == pytest.approx(before[chat_key])
    assert after[group_key] == pytest.approx(before[group_key] + 1)
    await limiter.refund(group, held=0.5)  # recent: both buckets get it back
    again = {k: float((await limiter.kv.hgetall(k))["t"]) for k in (chat_key, group_key)}
    assert again[chat_key] == pytest.approx(before[chat_key] + 1)
    assert again[group_key] == pytest.approx(before[group_key] + 2)


async def test_wait_sleeps_until_allowed(limiter: FloodLimiter, clock: FakeClock) -> None:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.advance(seconds)

    for _ in range(5):
        await limiter.wait(PRIVATE, sleep=sleep)
    burst = int(limiter.config.per_chat.burst)
    assert len(slept) == 5 - burst
    with pytest.raises(TimeoutError):
        await limiter.wait(PRIVATE, sleep=sleep, max_wait=0.5)


async def test_default_rates_are_stricter_than_the_fake_server(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """Every message our limiter lets through, the fake's buckets accept too, even
    when each one reaches the server up to half a second late, reordered
    (seeded random traffic; the server has its own clock)."""
    import random

    rng = random.Random(7)
    chats = [PRIVATE, PRIVATE + 1, GROUP, GROUP - 1]
    arrivals: list[tuple[float, int]] = []
    for _ in range(600):
        chat = rng.choice(chats)
        if await limiter.acquire(chat) == 0:
            arrivals.append((clock.now + rng.uniform(0, 0.5), chat))
        clock.advance(rng.choice([0.0, 0.0, 0.05, 0.3, 1.0]))
    server_clock = FakeClock(arrivals[0][0])
    server = FakeFloodControl(RateLimits(), server_clock)
    for at, chat in sorted(arrivals):
        server_clock.now = at
        assert server.acquire(chat, chat < 0) == 0
    assert len(arrivals) > 100


def test_rate_validation() -> None:
    with pytest.raises(ValueError, match="per_second > 0 and burst >= 1 needed"):
        Rate(0, 3)
    with pytest.raises(ValueError, match="per_second > 0 and burst >= 1 needed"):
        Rate(1, 0.5)


async def test_the_fleet_wide_rate_is_a_setting(redis_url: str, redis_prefix: str) -> None:
    """FLOOD_OVERALL_RATE / FLOOD_OVERALL_BURST (for a bot Telegram allows more)
    reach the bot's limiter; the other buckets stay as they are."""
    from telegram_bot.app import BotApp
    from telegram_bot.settings import Settings

    defaults = Settings()
    assert (
        FloodConfig.with_overall(defaults.flood_overall_rate, defaults.flood_overall_burst)
        == FloodConfig()
    )
    settings = Settings(
        bot_token="123:AAA",
        redis_url=redis_url,
        redis_prefix=redis_prefix,
        flood_overall_rate=100,
        flood_overall_burst=4,
    )
    app = BotApp(settings)
    try:
        limiter = app.default_delivery().outgoing.limiter
        assert limiter is not None
        assert limiter.config.overall == Rate(100, 4, reserve=3)
        assert limiter.config.per_group == FloodConfig().per_group
    finally:
        await app.aclose()
