"""One long-polling process at a time (#28): two bot processes polling the
fake Bot API (which answers a second concurrent getUpdates with 409 Conflict,
as Telegram does).  Only the lease holder polls, the other waits without a
409; when the holder stops -- or dies, its lease lapsing -- the other takes
over and answers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import time
from collections.abc import AsyncIterator, Callable

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from tables import LiveConfig, ServiceUnavailable, TableService
from telegram_bot.__main__ import run
from telegram_bot.app import BotApp
from telegram_bot.app import polling as polling_module
from telegram_bot.settings import Settings
from telegram_bot.state.poll_lease import PollLease
from tests.bot.e2e_kit import SAFETY

TTL = 0.6  # seconds: a dead holder's lease lapses quickly here


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def settings(fake: FakeTelegram, redis_url: str, prefix: str) -> Settings:
    return Settings(
        bot_token=fake.token,
        redis_url=redis_url,
        redis_prefix=prefix,
        telegram_api_url=fake.url,
        default_timer=0,
        poll_lease_ttl=TTL,
        set_commands=False,
        ai_workers=0,
    )


async def start(s: Settings) -> tuple[BotApp, asyncio.Task[None]]:
    app = BotApp(s)
    await app.setup()
    return app, asyncio.create_task(app.run_polling(handle_signals=False, polling_timeout=1))


async def stop(app: BotApp, task: asyncio.Task[None]) -> None:
    await app.stop_polling()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.wait_for(task, SAFETY)
    await app.aclose()


async def until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + SAFETY
    while True:
        if check():
            return
        assert time.monotonic() < deadline, f"never: {what}"
        await asyncio.sleep(0.02)


async def test_one_poller_at_a_time_and_the_other_takes_over(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    s = settings(fake, redis_url, redis_prefix)
    a, a_task = await start(s)
    await until(lambda: a.polling.polls, "the first process polls")
    b, b_task = await start(s)
    try:
        alice = fake.add_user("Alice", language_code="en")
        alice.start()
        await alice.wait_message(timeout=SAFETY)  # answered by a
        polls = fake.stats.calls["getUpdates"]
        await asyncio.sleep(3 * TTL)  # b looks at the lease several times meanwhile
        assert fake.stats.calls["getUpdates"] > polls  # a goes on polling ...
        assert a.polling.polls  # ... b waits
        assert not b.polling.polls
        await stop(a, a_task)  # a stops: its lease goes, b takes over
        await until(lambda: b.polling.polls, "the second process polls")
        alice.send("/help")
        await alice.wait_message("/new", timeout=SAFETY)  # answered by b
    finally:
        await stop(b, b_task)
    assert fake.stats.errors[("getUpdates", 409)] == 0, fake.stats.errors
    assert not [r for r in caplog.records if "Conflict" in r.getMessage()]


async def test_a_dead_holders_lease_lapses(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """A process that died holding the lease (it never released it): the
    other waits until the lease lapses, then polls."""
    svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
    try:
        dead = PollLease(svc.kv, TTL * 3, owner="dead")
        assert await dead.take()
        app, task = await start(settings(fake, redis_url, redis_prefix))
        try:
            await asyncio.sleep(TTL)
            assert not app.polling.polls
            assert fake.stats.calls["getUpdates"] == 0  # no getUpdates while it is held
            await until(lambda: app.polling.polls, "polling after the lease lapsed")
            assert await PollLease(svc.kv, TTL).holder() != "dead"
        finally:
            await stop(app, task)
        assert await dead.holder() is None  # released at the stop
    finally:
        await svc.aclose()


async def test_a_stop_while_the_lease_is_taken_stops_the_polling(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``stop_polling`` while ``run_polling`` is taking the lease -- aiogram's polling
    not started yet, its own ``stop_polling`` says so -- still stops it (it used to
    poll on until something else stopped it: ``durak run`` waited 10 s on a signal
    that came as the sandbox's bot started)."""
    taking, go_on = asyncio.Event(), asyncio.Event()
    take = PollLease.take

    async def held_take(self: PollLease) -> bool:
        taking.set()
        await go_on.wait()
        return await take(self)

    monkeypatch.setattr(PollLease, "take", held_take)
    app, task = await start(settings(fake, redis_url, redis_prefix))
    try:
        await asyncio.wait_for(taking.wait(), SAFETY)
        await app.stop_polling()
        go_on.set()
        await asyncio.wait({task}, timeout=SAFETY)
        assert task.done(), "run_polling still running after stop_polling"
    finally:
        await stop(app, task)


async def test_a_cancel_that_reaches_the_lease_as_a_fault_still_stops_polling(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop's cancel that reached the lease's Redis call as it failed (its
    read timing out) came back as ServiceUnavailable, and the polling loop,
    which goes on through Redis faults, went on for good: a stopped bot kept
    polling (a CI run waited 60 s for it).  It stops."""
    renewing = asyncio.Event()
    take = PollLease.take

    async def take_then_fault_on_cancel(lease: PollLease) -> bool:
        held = await take(lease)
        renewing.set()
        try:
            await asyncio.sleep(SAFETY)  # a slow reply, cancelled here
        except asyncio.CancelledError:
            raise ServiceUnavailable("Redis is unavailable: read timed out") from None
        return held

    app, task = await start(settings(fake, redis_url, redis_prefix))
    try:
        await until(lambda: app.polling.polls, "the lease taken")
        monkeypatch.setattr(PollLease, "take", take_then_fault_on_cancel)
        await asyncio.wait_for(renewing.wait(), SAFETY)  # in the lease's call now
        task.cancel()
        done, _pending = await asyncio.wait({task}, timeout=SAFETY)
        assert task in done, "polling went on after its task was cancelled"
        assert task.cancelled()
    finally:
        monkeypatch.undo()
        task.cancel()
        await app.aclose()


async def test_a_cancel_that_a_call_swallowed_still_stops_polling(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop's cancel that a call in the polling loop swallowed -- it came as
    the call's reply did, and the call returned it (Python 3.11's ``wait_for``
    does so) -- left the loop polling with its task marked cancelling: a
    stopped bot kept polling until a second cancel (a CI run waited 60 s, under
    load).  The loop looks at its task's mark each turn and stops."""
    renewing = asyncio.Event()
    take = PollLease.take

    async def take_swallowing_the_cancel(lease: PollLease) -> bool:
        held = await take(lease)
        renewing.set()
        with contextlib.suppress(asyncio.CancelledError):  # the reply came as it did
            await asyncio.sleep(SAFETY)
        return held

    app, task = await start(settings(fake, redis_url, redis_prefix))
    try:
        await until(lambda: app.polling.polls, "the lease taken")
        monkeypatch.setattr(PollLease, "take", take_swallowing_the_cancel)
        await asyncio.wait_for(renewing.wait(), SAFETY)  # in the lease's call now
        task.cancel()
        done, _pending = await asyncio.wait({task}, timeout=SAFETY)
        assert task in done, "polling went on after its task was cancelled"
        assert task.cancelled()
    finally:
        monkeypatch.undo()
        task.cancel()
        await app.aclose()


def _aiogram_pollers() -> list[asyncio.Task[object]]:
    return [
        t
        for t in asyncio.all_tasks()
        if not t.done() and getattr(t.get_coro(), "__qualname__", "") == "Dispatcher._polling"
    ]


async def test_a_cancelled_polling_leaves_no_poller_of_aiograms_running(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """A cancel of aiogram's ``start_polling`` leaves the pollers it started
    running: a stopped process went on fetching updates -- confirming them to
    Telegram -- while it shut down, and the presses in them were lost.  The
    polling asks aiogram to stop first, then cancels what is left."""
    app, task = await start(settings(fake, redis_url, redis_prefix))
    try:
        await until(lambda: bool(_aiogram_pollers()), "aiogram polling")
        task.cancel()
        done, _pending = await asyncio.wait({task}, timeout=SAFETY)
        assert task in done, "polling went on after its task was cancelled"
        for _ in range(3):
            await asyncio.sleep(0)
        assert _aiogram_pollers() == []
    finally:
        task.cancel()
        for poller in _aiogram_pollers():  # not to leak into the next test
            poller.cancel()
        await app.aclose()


async def test_sigterm_stops_a_process_that_lost_the_poll_lease(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """``durak bot`` in long polling: another process took the poll lease, so
    this one stopped polling and waits for the lease.  SIGTERM stops it, as
    it does any bot process (#28) -- aiogram's own signal handlers, put in
    place of the process's when its polling started, ignored SIGTERM once
    polling had stopped: the process ran on until a SIGKILL."""
    s = settings(fake, redis_url, redis_prefix)
    app = BotApp(s)
    task = asyncio.create_task(run(s, app=app))
    try:
        await until(lambda: app.polling.polls, "the lease taken")
        lease = PollLease(app.svc.kv, TTL)
        await app.svc.kv.set(lease.key, "another process", ttl_ms=60_000)
        await until(lambda: not app.polling.polls, "the lease lost")
        os.kill(os.getpid(), signal.SIGTERM)  # handled by the running bot
        done, _pending = await asyncio.wait({task}, timeout=SAFETY)
        assert task in done, "SIGTERM did not stop the bot"
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, SAFETY)


def _aiogram_polling() -> list[asyncio.Task[object]]:
    return [
        t
        for t in asyncio.all_tasks()
        if not t.done() and getattr(t.get_coro(), "__qualname__", "") == "Dispatcher.start_polling"
    ]


async def test_a_second_cancel_while_aiogram_stops_still_cancels_its_polling(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stop's cancel, then another while aiogram's own stop is awaited (a
    shutdown's second Ctrl-C, a supervisor's second signal): aiogram's polling
    is cancelled all the same -- the second cancel left it running, and the
    process's lease released under a poller still fetching updates."""
    app, task = await start(settings(fake, redis_url, redis_prefix))
    stopping = asyncio.Event()

    async def stop_that_hangs() -> None:
        stopping.set()
        await asyncio.sleep(SAFETY * 10)

    try:
        await until(lambda: bool(_aiogram_polling()), "aiogram polling")
        monkeypatch.setattr(app.polling.dp, "stop_polling", stop_that_hangs)
        task.cancel()
        await asyncio.wait_for(stopping.wait(), SAFETY)  # in aiogram's stop now
        task.cancel()
        done, _pending = await asyncio.wait({task}, timeout=SAFETY)
        assert task in done, "polling went on after its task was cancelled twice"
        for _ in range(3):
            await asyncio.sleep(0)
        assert _aiogram_polling() == []
    finally:
        monkeypatch.undo()
        task.cancel()
        for polling in _aiogram_polling():  # not to leak into the next test
            polling.cancel()
        for poller in _aiogram_pollers():
            poller.cancel()
        await app.aclose()


async def test_a_cancel_that_reaches_the_wait_for_redis_as_a_fault_stops_it(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process started while Redis does not answer waits for it (#28); a
    stop's cancel that reached its ping as the ping failed came back as
    ServiceUnavailable, and the wait went on -- a stopped bot waiting for a
    Redis that was gone.  It stops."""
    app = BotApp(settings(fake, redis_url, redis_prefix))
    await app.setup()
    pinging = asyncio.Event()

    async def ping_then_fault_on_cancel() -> bool:
        pinging.set()
        try:
            await asyncio.sleep(SAFETY)  # a slow answer, cancelled here
        except asyncio.CancelledError:
            raise ServiceUnavailable("Redis is unavailable: read timed out") from None
        return True

    monkeypatch.setattr(app.svc.admin, "ping", ping_then_fault_on_cancel)
    task = asyncio.create_task(app.wait_for_redis())
    try:
        await asyncio.wait_for(pinging.wait(), SAFETY)
        task.cancel()
        done, _pending = await asyncio.wait({task}, timeout=SAFETY)
        assert task in done, "the wait for Redis went on after its task was cancelled"
        assert task.cancelled()
    finally:
        monkeypatch.undo()
        task.cancel()
        await app.aclose()


async def test_a_stop_that_aiogram_holds_ends_all_the_same(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``stop_polling`` waited for aiogram's own stop without a bound: a
    shutdown held there (its handlers, a stuck poller) held the process's
    stop for good.  It waits ``HALT_WITHIN`` s at most, then the polling is
    cancelled."""
    monkeypatch.setattr(polling_module, "HALT_WITHIN", 0.2)
    app, task = await start(settings(fake, redis_url, redis_prefix))
    asked = asyncio.Event()

    async def stop_that_hangs() -> None:
        asked.set()
        await asyncio.sleep(SAFETY * 10)

    try:
        await until(lambda: bool(_aiogram_polling()), "aiogram polling")
        monkeypatch.setattr(app.polling.dp, "stop_polling", stop_that_hangs)
        stopping = asyncio.create_task(app.stop_polling())
        done, _pending = await asyncio.wait({stopping}, timeout=SAFETY)
        assert asked.is_set()
        assert stopping in done, "the stop waited on aiogram"
        done, _pending = await asyncio.wait({task}, timeout=SAFETY)
        assert task in done, "polling went on after its stop"
        assert _aiogram_polling() == []
    finally:
        monkeypatch.undo()
        task.cancel()
        for polling in _aiogram_polling():
            polling.cancel()
        for poller in _aiogram_pollers():
            poller.cancel()
        await app.aclose()
