"""The flood budget when Telegram answers 429 after all (its limits are not
published; ours may be off): the retry carries the newest content of the
message, never the refused stale edit and then the newer one.  The fake Bot API
with its limits ON and one manual clock; the sleep after a 429 is held open so
a newer edit can be asked meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiogram import Bot
from aiogram.types import EphemeralMessageParameters

from sandbox.fake_api import FakeTelegram, ManualClock, RateLimits, SimUser
from tables import LiveConfig, TableService
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.coalesce import Delivery, DeliveryConfig, Urgency
from telegram_bot.delivery.flood.limiter import FloodLimiter
from telegram_bot.delivery.outgoing import install
from telegram_bot.state.budgets import BudgetRules, Budgets
from tests.bot.test_outgoing import VirtualTime


class HeldSleep:
    """The sleep after a 429: records it and returns once released (the manual
    clock then moves on by the seconds asked)."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.asked: list[float] = []
        self.release = asyncio.Event()
        self._entered = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        self._entered.set()
        await self.release.wait()
        self.clock.advance(seconds)

    async def entered(self) -> None:
        await self._entered.wait()


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def fake(clock: ManualClock) -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits(), clock=clock) as server:
        yield server


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    bot = fake.make_bot()
    yield bot
    await bot.session.close()


@pytest.fixture
def alice(fake: FakeTelegram) -> SimUser:
    user = fake.add_user("Alice")
    user.start()
    return user


def edits_of(fake: FakeTelegram, chat_id: int, message_id: int) -> list[str | None]:
    return [
        e["text"]
        for e in fake.world.outbox
        if e["kind"] == "edit" and e["chat_id"] == chat_id and e["message_id"] == message_id
    ]


@pytest.mark.parametrize("newer", [Urgency.SOON, Urgency.NOW])
async def test_a_retry_after_429_sends_the_newest_content_only(
    fake: FakeTelegram, bot: Bot, alice: SimUser, clock: ManualClock, newer: Urgency
) -> None:
    held = HeldSleep(clock)
    outgoing = install(bot, None, sleep=held)  # no limiter of ours: the fake says 429
    delivery = Delivery(bot, DeliveryConfig(soon_delay=1000.0), outgoing=outgoing, clock=clock)
    try:
        msg = await delivery.send(alice.id, "v0")
        assert msg is not None
        mid = msg.message_id
        await delivery.edit(Address(alice.id, mid), "v1")
        await delivery.edit(Address(alice.id, mid), "v2")  # the chat's burst (3) is spent
        stale = asyncio.create_task(delivery.edit(Address(alice.id, mid), "v3 stale"))
        await held.entered()  # 429: the edit sleeps before its retry
        assert fake.stats.retry_after == 1
        newest = asyncio.create_task(
            delivery.edit(Address(alice.id, mid), "v4 newest", urgency=newer)
        )
        await asyncio.sleep(0.01)
        held.release.set()
        assert await stale == mid
        assert await newest == mid
        await delivery.flush()
    finally:
        await delivery.aclose()
    assert edits_of(fake, alice.id, mid) == ["v1", "v2", "v4 newest"]
    assert alice.chat.messages[mid].text == "v4 newest"
    assert held.asked == [3]  # the chat's window: 3 in any 3 s (#28)
    assert fake.stats.retry_after == 1


# ---------------------------------------------------------------- a 429 holds the chat
@pytest.fixture
async def limiter(
    redis_url: str, redis_prefix: str, clock: ManualClock
) -> AsyncIterator[FloodLimiter]:
    svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
    yield FloodLimiter(svc.kv, clock=clock)
    await svc.aclose()


@pytest.fixture
async def group_fake(clock: ManualClock) -> AsyncIterator[FakeTelegram]:
    """A chat's burst of 30: only the group's limit (and our chat's 1/s) count."""
    async with FakeTelegram(limits=RateLimits(per_chat_burst=30), clock=clock) as server:
        yield server


async def test_a_429_holds_the_group_so_later_writes_wait_instead_of_429(
    clock: ManualClock, limiter: FloodLimiter, group_fake: FakeTelegram
) -> None:
    """Telegram counted messages our budget never saw (another client of the
    token; a lost bucket): the first write gets a 429, and the group's budget is
    held for its ``retry_after`` -- in Redis, for every process -- so the writes
    after it wait their turn instead of each drawing its own 429."""
    vtime = VirtualTime(clock)
    first_sleep = asyncio.Event()

    async def sleep(seconds: float) -> None:
        first_sleep.set()
        await vtime.sleep(seconds)

    fake = group_fake
    bot = fake.make_bot()
    alice = fake.add_user("Alice")
    outgoing = vtime.watch(install(bot, limiter, sleep=sleep))
    group = alice.create_group("Table")
    alice.add_bot_to(group)
    other = fake.make_bot()  # the writes our budget does not know about
    try:
        for i in range(20):  # the group's minute is spent
            await other.send_message(group.id, f"elsewhere {i}")
    finally:
        await other.session.close()
    assert fake.stats.retry_after == 0, fake.stats.refusals

    async def later(i: int) -> None:
        await first_sleep.wait()  # after the first write's 429
        await bot.send_message(group.id, f"later {i}")

    try:
        await vtime.run(bot.send_message(group.id, "first"), *(later(i) for i in range(4)))
    finally:
        await bot.session.close()
    texts = [m.text for m in fake.messages(group) if m.from_id == fake.bot_user.id]
    assert sorted(t for t in texts if t and not t.startswith("elsewhere")) == [
        "first",
        *(f"later {i}" for i in range(4)),
    ]
    assert fake.stats.retry_after == 1
    assert outgoing.stats.retry_after == 1


async def test_a_write_admitted_while_the_hold_is_on_its_way_waits_for_it(
    clock: ManualClock,
    limiter: FloodLimiter,
    group_fake: FakeTelegram,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """#28: a second reply to the group comes in after the first one's 429 and
    takes its tokens before that 429's hold is in Redis (a loaded process: the
    hold is a round trip away).  It must still see the 429 when its turn comes
    and wait out the hold -- not go out and draw a 429 of its own (the e2e test
    of a spent group minute drew two, about 1 run in 3 under load)."""
    vtime = VirtualTime(clock)
    fake = group_fake
    bot = fake.make_bot()
    alice = fake.add_user("Alice")
    outgoing = vtime.watch(install(bot, limiter, sleep=vtime.sleep))
    group = alice.create_group("Table")
    alice.add_bot_to(group)
    other = fake.make_bot()  # the writes our budget does not know about
    try:
        for i in range(20):  # the group's minute is spent
            await other.send_message(group.id, f"elsewhere {i}")
    finally:
        await other.session.close()
    holding, go, admitted = asyncio.Event(), asyncio.Event(), asyncio.Event()
    hold, take = limiter.hold, limiter.take
    takes = 0

    async def slow_hold(*args: Any, **kwargs: Any) -> None:
        holding.set()  # the first write's 429 is in
        await go.wait()
        await hold(*args, **kwargs)

    async def counted_take(*args: Any, **kwargs: Any) -> Any:
        nonlocal takes
        verdict = await take(*args, **kwargs)
        takes += 1
        if takes == 2 and verdict.wait == 0:
            admitted.set()  # the second write's tokens, the hold not yet there
        return verdict

    monkeypatch.setattr(limiter, "hold", slow_hold)
    monkeypatch.setattr(limiter, "take", counted_take)

    async def second() -> None:
        await holding.wait()
        await bot.send_message(group.id, "second")

    async def hold_lands() -> None:
        await admitted.wait()
        go.set()

    try:
        await vtime.run(bot.send_message(group.id, "first"), second(), hold_lands())
    finally:
        await bot.session.close()
    texts = [m.text for m in fake.messages(group) if m.from_id == fake.bot_user.id]
    assert sorted(t for t in texts if t in ("first", "second")) == ["first", "second"]
    assert fake.stats.retry_after == 1, fake.stats.refusals
    assert outgoing.stats.retry_after == 1


async def test_a_hold_gives_the_chat_no_token_before_retry_after(
    limiter: FloodLimiter, clock: ManualClock
) -> None:
    group, other = -100, -200
    assert await limiter.acquire(group) == 0
    await limiter.hold(group, 10)
    assert await limiter.acquire(group) == pytest.approx(10, abs=1e-3)  # nothing taken
    assert await limiter.acquire(other) == 0  # only that chat
    assert await limiter.acquire(None) == 0  # not the overall window
    clock.advance(10)
    for _ in range(limiter.config.per_chat.limit):  # then within the chat's own window
        assert await limiter.acquire(group) == 0
    assert await limiter.acquire(group) > 0
    await limiter.hold(7, 2)  # a private chat: its own bucket
    assert await limiter.acquire(7) == pytest.approx(2, abs=1e-3)


@pytest.mark.parametrize("telegram_counts", [True, False])
async def test_ephemerals_assumed_apart_learn_from_one_429_that_they_count(
    clock: ManualClock, redis_url: str, redis_prefix: str, telegram_counts: bool
) -> None:
    """#24: the bot starts from "ephemerals do not count against the group's
    minute" (FLOOD_EPHEMERAL_COUNTED=false).  On a Telegram that counts them,
    the 21st ephemeral of the minute draws a 429 that one shared minute
    explains: the group switches to counted, fleet-wide, and the rest wait
    their turn -- one 429 in all.  On a Telegram that does not count them, all
    go out at their own pace and nothing is learned."""
    vtime = VirtualTime(clock)
    svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix), clock=clock)
    budgets = Budgets(svc.kv, BudgetRules(counted=False), clock=clock)
    limiter = FloodLimiter(svc.kv, clock=clock, budgets=budgets)
    limits = RateLimits(per_chat_burst=30, ephemeral_counted=telegram_counts)
    async with FakeTelegram(limits=limits, clock=clock) as fake:
        bot = fake.make_bot()
        outgoing = vtime.watch(install(bot, limiter, sleep=vtime.sleep))
        host = fake.add_user("Host")
        members = [fake.add_user(f"M{i}") for i in range(30)]
        group = host.create_group("Card night", *members)
        host.add_bot_to(group)

        async def hands() -> None:
            for m in members:  # one ephemeral hand each, as at a game's start
                params = EphemeralMessageParameters(receiver_user_id=m.id)
                await bot.send_message(
                    group.id, f"hand of {m.id}", ephemeral_message_parameters=params
                )

        try:
            await vtime.run(hands())
        finally:
            await bot.session.close()
            budget = await budgets.get(group.id)
            await svc.aclose()
        got = [m for m in members if any(e.text == f"hand of {m.id}" for e in m.messages(group))]
        assert len(got) == 30
        if telegram_counts:
            assert fake.stats.retry_after == 1
            assert outgoing.stats.retry_after == 1
            assert budget.counted
            assert budget.learned
            assert budget.refused_ephemeral == 1
        else:
            assert fake.stats.retry_after == 0, fake.stats.refusals
            assert not budget.learned


async def test_one_burst_of_429s_from_three_processes_cuts_the_budget_once(
    clock: ManualClock, redis_url: str, redis_prefix: str, fake: FakeTelegram
) -> None:
    """#38: three bot processes each have a write to the group in flight when
    Telegram refuses them all (another client spent the group's burst): three
    429s of one burst, each passing back the budget generation its write was
    admitted under.  The group's budget is halved once -- 20 -> 10, not 20 ->
    10 -> 5 -> 4 -- and every write still goes out after its retry_after."""
    vtime = VirtualTime(clock)
    services = [
        TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix), clock=clock)
        for _ in range(3)
    ]
    bots = [fake.make_bot() for _ in services]
    for svc, bot in zip(services, bots, strict=True):
        limiter = FloodLimiter(svc.kv, clock=clock, budgets=Budgets(svc.kv, clock=clock))
        vtime.watch(install(bot, limiter, sleep=vtime.sleep))
    alice = fake.add_user("Alice")
    group = alice.create_group("Table")
    alice.add_bot_to(group)
    other = fake.make_bot()  # writes our windows never saw: the group's burst is spent
    try:
        for i in range(3):
            await other.send_message(group.id, f"elsewhere {i}")
    finally:
        await other.session.close()
    assert fake.stats.retry_after == 0, fake.stats.refusals
    all_in = asyncio.Event()
    arrived: list[int] = []

    async def in_flight(make_request: Any, bot: Bot, method: Any) -> Any:
        """Inside each process's Outgoing (after its take): no write reaches
        Telegram before every process's write was admitted."""
        if not all_in.is_set():
            arrived.append(bot.id)
            if len(arrived) == len(bots):
                all_in.set()
            await all_in.wait()
        return await make_request(bot, method)

    for bot in bots:
        bot.session.middleware(in_flight)
    start = clock.now
    try:
        await vtime.run(*(bot.send_message(group.id, f"p{i}") for i, bot in enumerate(bots)))
        budget = await Budgets(services[0].kv, clock=clock).get(group.id)
    finally:
        for bot in bots:
            await bot.session.close()
        for svc in services:
            await svc.aclose()
    assert fake.stats.retry_after == 3
    assert (budget.public, budget.refused_public) == (10, 3)
    assert clock.now - start < 60  # (cut to 4, the last retry waited out a minute)
    texts = [m.text for m in fake.messages(group) if m.from_id == fake.bot_user.id]
    assert sorted(t for t in texts if t and t.startswith("p")) == ["p0", "p1", "p2"]


async def test_a_late_429_of_a_write_admitted_before_the_cut_cuts_nothing(
    clock: ManualClock, redis_url: str, redis_prefix: str, fake: FakeTelegram
) -> None:
    """#38: process B's write was admitted under the documented budget and then
    spent 10 s on the way; meanwhile process A's write drew a 429 and cut the
    budget to 10.  B's write draws its own 429 long after A's retry_after --
    still of the burst its budget was admitted in (its generation says so), so
    the budget stays 10; only a write admitted under the cut budget can teach
    a lower one."""
    vtime = VirtualTime(clock)
    services = [
        TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix), clock=clock)
        for _ in range(2)
    ]
    bot_a, bot_b = (fake.make_bot() for _ in services)
    for svc, bot in zip(services, (bot_a, bot_b), strict=True):
        limiter = FloodLimiter(svc.kv, clock=clock, budgets=Budgets(svc.kv, clock=clock))
        install(bot, limiter, sleep=vtime.sleep)
    alice = fake.add_user("Alice")
    group = alice.create_group("Table")
    alice.add_bot_to(group)
    other = fake.make_bot()  # writes our windows never see: they spend the group's burst

    async def elsewhere() -> None:
        for i in range(3):
            await other.send_message(group.id, f"elsewhere {i}")

    on_the_way, arrive = asyncio.Event(), asyncio.Event()

    async def slow_network(make_request: Any, bot: Bot, method: Any) -> Any:
        if not on_the_way.is_set():  # B's first write: admitted, then held up
            on_the_way.set()
            await arrive.wait()
        return await make_request(bot, method)

    bot_b.session.middleware(slow_network)
    try:
        late = asyncio.create_task(bot_b.send_message(group.id, "late"))
        await on_the_way.wait()
        await elsewhere()
        await bot_a.send_message(group.id, "first")  # 429, cut to 10, retried
        assert fake.stats.retry_after == 1
        clock.advance(10.0)  # far past A's retry_after
        await elsewhere()  # the group's burst is spent again when B's write arrives
        arrive.set()
        await asyncio.wait_for(late, 10)
        budget = await Budgets(services[0].kv, clock=clock).get(group.id)
    finally:
        for bot in (bot_a, bot_b, other):
            await bot.session.close()
        for svc in services:
            await svc.aclose()
    assert fake.stats.retry_after == 2
    assert (budget.public, budget.refused_public) == (10, 2)
    texts = [m.text for m in fake.messages(group) if m.from_id == fake.bot_user.id]
    assert {"first", "late"} <= set(texts)
