"""Two bot processes (two bots, two table services, one Redis, one fake Bot API)
editing the same messages out of order (issue #12): the shared digest carries
the table version shown, so a message never goes back to an older state --
also when an edit is retried after a 429 while another process showed a newer
version."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from aiogram import Bot
from aiogram.client.session.middlewares.base import (
    BaseRequestMiddleware,
    NextRequestMiddlewareType,
)
from aiogram.methods import EditMessageText, TelegramMethod

from sandbox.fake_api import FakeTelegram, ManualClock, RateLimits
from tables import LiveConfig, TableService
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.coalesce import Delivery, Urgency
from telegram_bot.delivery.flood.limiter import FloodLimiter, table_version
from telegram_bot.delivery.outgoing import install
from tests.bot.test_group_budget import HeldSleep


class Process:
    """One bot process: its own Redis client, limiter, bot and delivery."""

    def __init__(
        self,
        fake: FakeTelegram,
        redis_url: str,
        prefix: str,
        clock: ManualClock,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ):
        self.svc = TableService.from_url(redis_url, LiveConfig(prefix=prefix))
        self.limiter = FloodLimiter(self.svc.kv, clock=clock)
        self.bot: Bot = fake.make_bot()

        async def advance(seconds: float) -> None:
            clock.advance(seconds)

        sleep = sleep or advance

        install(self.bot, self.limiter, sleep=sleep)
        self.delivery = Delivery(self.bot, clock=clock, sleep=sleep)

    async def aclose(self) -> None:
        await self.delivery.aclose()
        await self.bot.session.close()
        await self.svc.aclose()


@pytest.fixture
async def processes(
    redis_url: str, redis_prefix: str
) -> AsyncIterator[tuple[FakeTelegram, ManualClock, list[Process]]]:
    clock = ManualClock()
    async with FakeTelegram(limits=RateLimits(), clock=clock) as fake:
        procs = [Process(fake, redis_url, redis_prefix, clock) for _ in range(2)]
        try:
            yield fake, clock, procs
        finally:
            for p in procs:
                await p.aclose()


async def test_an_older_render_from_another_process_is_dropped(
    processes: tuple[FakeTelegram, ManualClock, list[Process]],
) -> None:
    fake, clock, (a, b) = processes
    alice = fake.add_user("Alice")
    alice.start()
    msg = await a.delivery.send(alice.id, "table v1")
    assert msg is not None
    mid = msg.message_id
    # b renders version 6 first; a's render of version 5 arrives late
    clock.advance(2)
    await b.delivery.edit(Address(alice.id, mid), "table v6", version=table_version("T", 6))
    clock.advance(2)
    await a.delivery.edit(Address(alice.id, mid), "table v5", version=table_version("T", 5))
    # queued (coalesced) edits are judged the same way when they go out
    clock.advance(2)
    await a.delivery.edit(Address(alice.id, mid), "table v4", None, Urgency.SOON, version="T#4")
    await a.delivery.flush()
    shown = [m for m in fake.messages(alice.chat) if m.message_id == mid]
    assert [m.text for m in shown] == ["table v6"]
    assert fake.stats.calls["editMessageText"] == 1  # the stale ones never went out
    assert a.delivery.stats.noop == 2
    # the next change, from either process, goes out
    clock.advance(2)
    await a.delivery.edit(Address(alice.id, mid), "table v7", version=table_version("T", 7))
    assert [m.text for m in fake.messages(alice.chat) if m.message_id == mid] == ["table v7"]
    assert fake.stats.retry_after == 0, fake.stats.refusals


@pytest.mark.parametrize("newer_in_a", [False, True])
async def test_an_edit_retried_after_a_429_never_overwrites_a_newer_one(
    redis_url: str, redis_prefix: str, newer_in_a: bool
) -> None:
    """Process a's edit of version 5 draws a 429 and sleeps its retry_after;
    meanwhile process b shows version 7.  a's retry -- of the same edit, or of
    the newest content asked of a meanwhile (version 6) -- still carries its
    version, so the shared digest refuses it: the message keeps version 7."""
    clock = ManualClock()
    async with FakeTelegram(limits=RateLimits(), clock=clock) as fake:
        held = HeldSleep(clock)
        a = Process(fake, redis_url, redis_prefix, clock, sleep=held)
        b = Process(fake, redis_url, redis_prefix, clock)
        other = fake.make_bot()  # writes our limiter does not know about
        try:
            alice = fake.add_user("Alice")
            alice.start()
            msg = await a.delivery.send(alice.id, "table v1")
            assert msg is not None
            mid = msg.message_id
            for i in range(2):  # the chat's burst at Telegram is spent
                await other.send_message(alice.id, f"elsewhere {i}")
            stale = asyncio.create_task(
                a.delivery.edit(Address(alice.id, mid), "table v5", version="T#5")
            )
            await held.entered()  # 429: a sleeps before its retry
            assert fake.stats.retry_after == 1
            if newer_in_a:  # the retry will carry this one instead
                await a.delivery.edit(
                    Address(alice.id, mid), "table v6", None, Urgency.SOON, version="T#6"
                )
            await b.delivery.edit(
                Address(alice.id, mid), "table v7", version="T#7"
            )  # waits out the hold
            assert alice.chat.messages[mid].text == "table v7"
            held.release.set()
            assert await stale == mid
            await a.delivery.flush()
            assert alice.chat.messages[mid].text == "table v7"
            assert [e["text"] for e in fake.world.outbox if e["kind"] == "edit"] == ["table v7"]
            assert fake.stats.retry_after == 1
        finally:
            await other.session.close()
            for p in (a, b):
                await p.aclose()


@pytest.mark.parametrize("first", ["now", "table"])
async def test_two_processes_space_the_edits_of_one_message(
    processes: tuple[FakeTelegram, ManualClock, list[Process]], first: str
) -> None:
    """The last edit time of a message is shared: process a edits the group's
    table message (at once, or coalesced), then process b's coalesced update of
    it waits for the table gap since a's edit -- not since b's own last one
    (it has none) -- so the two never both edit it within the gap."""
    fake, clock, (a, b) = processes
    alice = fake.add_user("Alice")
    group = alice.create_group("Table")
    alice.add_bot_to(group)
    msg = await a.delivery.send(group.id, "t0")
    assert msg is not None
    mid = msg.message_id
    clock.advance(10)
    if first == "now":
        await a.delivery.edit(Address(group.id, mid), "t1 by a", version="T#1")
    else:
        await a.delivery.edit(Address(group.id, mid), "t1 by a", None, Urgency.TABLE, version="T#1")
        await fake.world.wait_for(lambda: group.messages[mid].text == "t1 by a")
    edited = clock.now
    await b.delivery.edit(Address(group.id, mid), "t2 by b", None, Urgency.TABLE, version="T#2")
    await fake.world.wait_for(lambda: group.messages[mid].text == "t2 by b")
    assert clock.now - edited >= b.delivery.config.table_delay
    assert [e["text"] for e in fake.world.outbox if e["kind"] == "edit"] == ["t1 by a", "t2 by b"]
    assert fake.stats.retry_after == 0, fake.stats.refusals


class HoldEdit(BaseRequestMiddleware):
    """Inside the flood middleware (registered after it): holds the HTTP call of
    the edit to ``text`` until ``release`` -- a slow network, a paused process."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.held = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(
        self, make_request: NextRequestMiddlewareType[Any], bot: Bot, method: TelegramMethod[Any]
    ) -> Any:
        if isinstance(method, EditMessageText) and method.text == self.text:
            self.held.set()
            await self.release.wait()
        return await make_request(bot, method)


@pytest.mark.parametrize("b_version", [6, 4])
async def test_an_edit_waits_for_another_process_s_edit_in_flight(
    redis_url: str, redis_prefix: str, b_version: int
) -> None:
    """Process a's edit of version 5 is admitted, then its HTTP call is held (a
    slow network); process b's edit of the same message: an older version is
    dropped at once (the digest holds the version in flight), a newer one
    waits for a's edit lease instead of overtaking it and goes out after.  The edits land in
    version order -- never an older after a newer."""
    clock = ManualClock()
    async with FakeTelegram(limits=RateLimits(), clock=clock) as fake:
        a = Process(fake, redis_url, redis_prefix, clock)
        held = HeldSleep(clock)
        b = Process(fake, redis_url, redis_prefix, clock, sleep=held)
        try:
            alice = fake.add_user("Alice")
            alice.start()
            msg = await a.delivery.send(alice.id, "table v1")
            assert msg is not None
            mid = msg.message_id
            hold = HoldEdit("table v5")
            a.bot.session.middleware(hold)
            clock.advance(2)
            late = asyncio.create_task(
                a.delivery.edit(Address(alice.id, mid), "table v5", version=table_version("T", 5))
            )
            await asyncio.wait_for(hold.held.wait(), 10)  # a's edit of v5 is on its way
            clock.advance(2)
            text = f"table v{b_version}"
            other = asyncio.create_task(
                b.delivery.edit(Address(alice.id, mid), text, version=table_version("T", b_version))
            )
            if b_version < 5:  # older than the edit in flight: dropped at once
                assert await asyncio.wait_for(other, 10) == mid
                assert (b.delivery.stats.busy, b.delivery.stats.noop) == (0, 1)
                hold.release.set()
                assert await asyncio.wait_for(late, 10) == mid
            else:
                await asyncio.wait_for(held.entered(), 10)  # b waits for a's lease
                assert b.delivery.stats.busy == 1
                assert held.asked == [b.limiter.config.lease_poll]
                hold.release.set()
                assert await asyncio.wait_for(late, 10) == mid
                held.release.set()
                assert await asyncio.wait_for(other, 10) == mid
            edits = [e["text"] for e in fake.world.outbox if e["kind"] == "edit"]
            assert edits == ["table v5", text] if b_version > 5 else ["table v5"]
            assert alice.chat.messages[mid].text == edits[-1]
            # no edit lease left on the message (its record: '<digest>[|<owner>@<until>]')
            record = await b.limiter.kv.get(b.limiter.keys.sent_digest(alice.id, mid))
            assert record is not None
            assert "|" not in record
            assert fake.stats.retry_after == 0, fake.stats.refusals
        finally:
            for p in (a, b):
                await p.aclose()


async def test_the_lease_of_a_stuck_process_lapses(
    processes: tuple[FakeTelegram, ManualClock, list[Process]],
) -> None:
    """a's edit never comes back (a crashed or frozen process): b's edit waits
    for a's lease only until it lapses, then goes out."""
    fake, clock, (a, b) = processes
    alice = fake.add_user("Alice")
    alice.start()
    msg = await a.delivery.send(alice.id, "table v1")
    assert msg is not None
    mid = msg.message_id
    hold = HoldEdit("table v5")
    a.bot.session.middleware(hold)
    clock.advance(2)
    stuck = asyncio.create_task(a.delivery.edit(Address(alice.id, mid), "table v5", version="T#5"))
    await asyncio.wait_for(hold.held.wait(), 10)
    started = clock.now
    await asyncio.wait_for(b.delivery.edit(Address(alice.id, mid), "table v6", version="T#6"), 10)
    assert alice.chat.messages[mid].text == "table v6"
    lease = b.limiter.config.edit_lease
    assert lease <= clock.now - started < lease + 1  # b's polls moved the manual clock
    assert b.delivery.stats.busy >= 1
    stuck.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stuck


async def test_an_older_edit_admitted_first_but_sent_last_does_not_win(
    processes: tuple[FakeTelegram, ManualClock, list[Process]],
) -> None:
    """a's edit of v5 is admitted and its HTTP call held; b's edit of v6 cannot
    overtake it (it waits for a's lease), so v5 never lands after v6."""
    fake, clock, (a, b) = processes
    alice = fake.add_user("Alice")
    alice.start()
    msg = await a.delivery.send(alice.id, "table v1")
    assert msg is not None
    mid = msg.message_id
    hold = HoldEdit("table v5")
    a.bot.session.middleware(hold)
    clock.advance(2)
    late = asyncio.create_task(
        a.delivery.edit(Address(alice.id, mid), "table v5", version=table_version("T", 5))
    )
    await asyncio.wait_for(hold.held.wait(), 10)  # a's edit of v5 is on its way
    clock.advance(2)
    newer = asyncio.create_task(
        b.delivery.edit(Address(alice.id, mid), "table v6", version=table_version("T", 6))
    )
    for _ in range(10_000):  # until b finds a's edit in flight (unfixed: b overtakes it)
        if b.delivery.stats.busy or newer.done():
            break
        await asyncio.sleep(0)
    hold.release.set()
    await asyncio.wait_for(asyncio.gather(late, newer), 10)
    shown = [m.text for m in fake.messages(alice.chat) if m.message_id == mid]
    assert shown == ["table v6"]
    assert [e["text"] for e in fake.world.outbox if e["kind"] == "edit"] == [
        "table v5",
        "table v6",
    ]
