"""Rolling restarts (#28): a bot process stopped by SIGTERM -- as a deploy or a
supervisor stops it -- takes no new update, finishes the ones in hand, hands
its turn timers over to the other processes and exits 0, all inside its
shutdown budget.  Real ``python -m telegram_bot`` processes behind the webhook
proxy (:class:`harness.fleet.BotFleet`) on the fake Bot API."""

from __future__ import annotations

import asyncio
import signal

import pytest

from harness.fleet import BotFleet
from sandbox.fake_api import FakeTelegram
from tables import ServiceUnavailable, TableService
from telegram_bot.app import BotApp
from tests.bot.e2e_kit import SAFETY, Harness


async def live_timer_processes(svc: TableService) -> set[str]:
    key = svc.keys.timer_procs
    return {m.decode() for m in await svc.store.one(lambda p: p.zrange(key, 0, -1))}


async def shard_leases(svc: TableService) -> list[tuple[str, int]]:
    """Each timer shard's lease: its owner and until when (ms)."""
    out = []
    keys = [svc.keys.timer_lease(shard) for shard in range(svc.keys.timer_shards)]
    for key in keys:
        raw = await svc.kv.get(key)
        if raw:
            _seen, owner, until = raw.split("|")
            out.append((owner, int(until)))
    return out


@pytest.mark.slow  # real bot processes
async def test_sigterm_finishes_the_update_in_hand(redis_url: str, redis_prefix: str) -> None:
    async with FakeTelegram() as fake, BotFleet(fake, redis_url, redis_prefix, count=1) as fleet:
        ann = fake.add_user("Ann")
        fake.reply_delays["sendMessage"] = 3.0  # the bot waits 3 s for the reply
        ann.start()
        await ann.wait_message(timeout=30)  # sent: the update is in hand
        assert await fleet.signal(0, signal.SIGTERM) == 0, fleet.log_tail()
        log = fleet.logs[0].read_text()
        assert "still in hand" not in log, log
        assert "Traceback" not in log, log


@pytest.mark.slow  # real bot processes
async def test_sigterm_hands_the_turn_timers_over(redis_url: str, redis_prefix: str) -> None:
    async with FakeTelegram() as fake, BotFleet(fake, redis_url, redis_prefix, count=2) as fleet:
        svc = fleet.svc
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while len(await live_timer_processes(svc)) < 2:  # both tick the timers
            assert loop.time() < deadline, fleet.log_tail()
            await asyncio.sleep(0.1)
        assert await fleet.signal(0, signal.SIGTERM) == 0, fleet.log_tail()
        now = svc.tables.now_ms()
        # it left at once (a killed process stays "alive" for the 10 s shard lease)
        survivors = await live_timer_processes(svc)
        assert len(survivors) == 1
        # and its shard leases end now: the survivor takes them at its next tick
        assert all(owner in survivors or until <= now for owner, until in await shard_leases(svc))
        while {o for o, _u in await shard_leases(svc)} != survivors:
            assert loop.time() < deadline + 10, await shard_leases(svc)
            await asyncio.sleep(0.1)
        assert await fleet.signal(1, signal.SIGTERM) == 0, fleet.log_tail()


async def test_renders_still_running_at_close_stop_before_redis_closes(
    redis_url: str, redis_prefix: str
) -> None:
    """A render that outlives the shutdown budget is cancelled and awaited
    before the Redis client closes: none goes on to open a new connection
    on a closed client (a socket left unclosed, found by the suite's
    ResourceWarning check on CI)."""
    async with FakeTelegram() as fake:
        h = Harness(fake, redis_url, redis_prefix, extra={"shutdown_timeout": 0.2})
        app = BotApp(h.settings(), clock=h.clock)
        await app.setup()
        busy = asyncio.Event()

        async def endless_render() -> None:
            while True:
                try:
                    await app.svc.kv.get(f"{redis_prefix}probe")
                except ServiceUnavailable:  # a loaded machine's slow reply: the render goes on
                    task = asyncio.current_task()
                    if task is not None and task.cancelling():
                        # the stop's cancel met the client's own timeout, which
                        # took it for a timeout (Python 3.11's asyncio.timeout):
                        # a render ends there; this loop went on for good (CI)
                        raise asyncio.CancelledError from None
                else:
                    busy.set()
                await asyncio.sleep(0.01)

        app.start_background()
        app.renders.spawn(endless_render())
        # bounded: a render that never got a reply fails the test, never hangs it
        await asyncio.wait_for(busy.wait(), SAFETY)
        task = next(iter(app.renders.tasks))
        await asyncio.wait_for(app.aclose(), SAFETY)
        assert task.done()
