"""#39: an idle timer loop's Redis traffic, counted on the client's connections
(:mod:`tests.tables._wire`) over simulated seconds of the service's clock: a
round (heartbeat, one script per shard held) every ``shard_lease / 3`` and
nothing in between -- whatever the number of tables --, a second process
adding only its heartbeat; and what keeps the timers on time meanwhile: the
hints written by another process and a scheduler that starts are announced on
the wake channel."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from tables import TableService
from tables.wakes import TimerWakes
from tests.tables._wire import Wire
from tests.tables.conftest import FakeClock, new_table

SAFETY = 30.0  # seconds a condition may take to come true (never a timing assertion)


def heartbeats(wire: Wire) -> int:
    return sum(1 for c in wire.named("ZADD") if c[1].endswith("timers:procs"))


async def test_an_idle_loop_sends_a_round_per_third_of_a_lease(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """30 simulated seconds, a pass every 0.5 s (the loop's interval): the old
    loop sent a round at every pass (60 rounds, 480 commands); now a round
    every ``shard_lease / 3`` (10 s / 3: 9 rounds of 2 + 4 commands)."""
    wire = Wire()
    svc = make_service(wire=wire, timer_shards=4)
    for i in range(5):  # tables with deadlines, none due in the window
        await new_table(svc, 2, timer=60, first_user=10 * i + 1)
    await svc.timers.prune()  # the scripts loaded
    await svc.timers.tick()
    wire.reset()
    stop = asyncio.Event()
    passes = 0
    real = [0.0]

    def monotonic() -> float:  # called once a pass: the service's clock moves with it
        nonlocal passes
        passes += 1
        if passes > 1:
            clock.advance(0.5)
            real[0] += 0.5
        if passes == 61:
            stop.set()
        return real[0]

    svc.timers.monotonic = monotonic
    await asyncio.wait_for(svc.timers.run_timers(stop, interval=0.001), SAFETY)
    assert svc.timers.held == {0, 1, 2, 3}
    rounds = heartbeats(wire)
    assert rounds == 9  # at 0, 3.5, 7, ... 28 s: one each 10/3 s (the pass after)
    sent = Counter(c[0] for c in wire.commands if c[0] not in ("HELLO", "CLIENT"))
    assert sent["EVALSHA"] == rounds * 4 + 1  # + the pruner's lease
    assert sent["ZADD"] == sent["ZCOUNT"] == rounds  # the heartbeats
    assert sum(sent.values()) == rounds * (2 + 4) + 1 + 3  # SUBSCRIBE, the pruner's


async def test_a_second_process_adds_only_its_heartbeat(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """The fleet's idle traffic does not grow with its processes: two loops
    split the shards, so together they send one more heartbeat a round."""
    wire_a, wire_b = Wire(), Wire()
    a = make_service(wire=wire_a, timer_shards=4)
    await new_table(a, 2, timer=60)

    async def window(*procs: TableService) -> None:
        for _ in range(60):
            for p in procs:
                await p.timers.look()
            clock.advance(0.5)

    await window(a)  # the scripts loaded, the process count cleaned
    wire_a.reset()
    await window(a)
    alone = len(wire_a.commands)
    wire_a.reset()
    b = make_service(wire=wire_b, timer_shards=4)
    await window(a, b)  # b joins: after a round of each they hold 2 shards each
    assert len(a.timers.held) == len(b.timers.held) == 2
    wire_a.reset()
    wire_b.reset()
    await window(a, b)
    both = len(wire_a.commands) + len(wire_b.commands)
    assert heartbeats(wire_b) == heartbeats(wire_a) == 9
    assert both <= alone + 2 * heartbeats(wire_b) + 2  # one more heartbeat a round


async def test_a_hint_from_another_process_wakes_the_holder(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """Rounds a long time apart: a's loop learns of the hint b wrote (b holds
    no shard: it publishes it) and times the game out at its deadline,
    without a round."""
    wire = Wire()
    a = make_service(wire=wire, timer_shards=4, shard_lease=3600.0)
    b = make_service(timer_shards=4, shard_lease=3600.0)
    stop = asyncio.Event()
    done: list[str] = []
    kinds: list[str] = []

    async def on_result(r: Any) -> None:
        done.append(r.table_id)
        kinds.append(r.events[0].kind)
        stop.set()

    loop = asyncio.create_task(a.timers.run_timers(stop, interval=0.01, on_result=on_result))
    try:
        deadline = time.monotonic() + SAFETY
        while a.timers.held != {0, 1, 2, 3}:
            assert time.monotonic() < deadline, "a never took the shards"
            await asyncio.sleep(0.01)
        tid = await new_table(b, 2, timer=30)
        shard = a.keys.shard_of(tid)
        while a.timers.wakes.earliest[shard] > int((clock.now + 30) * 1000):
            assert time.monotonic() < deadline, "a never heard of b's hint"
            await asyncio.sleep(0.01)
        clock.advance(31)
        await asyncio.wait_for(loop, SAFETY)
    finally:
        stop.set()
        await loop
    assert done == [tid]
    assert kinds == ["timeout"]  # on time: no gap
    assert heartbeats(wire) == 1  # one round: the first


async def test_a_scheduler_that_starts_takes_its_share_at_once(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """Rounds a long time apart: b's loop starts, announces it, a hands two
    shards back and announces that, and b takes them -- at once, not at the
    next round: the hand-back leaves no gap, so b times its games out at their
    deadlines (no extension)."""
    a = make_service(timer_shards=4, shard_lease=3600.0)
    b = make_service(timer_shards=4, shard_lease=3600.0)
    tids = [await new_table(a, 2, timer=30, first_user=10 * i + 1) for i in range(8)]
    stop = asyncio.Event()
    by: dict[str, list[tuple[str, str]]] = {"a": [], "b": []}

    def record(name: str) -> Callable[[Any], Any]:
        async def on_result(r: Any) -> None:
            by[name].append((r.table_id, r.events[0].kind))
            if sum(len(v) for v in by.values()) == len(tids):
                stop.set()

        return on_result

    loops = [asyncio.create_task(a.timers.run_timers(stop, interval=0.01, on_result=record("a")))]
    try:
        deadline = time.monotonic() + SAFETY
        while a.timers.held != {0, 1, 2, 3}:
            assert time.monotonic() < deadline, "a never took the shards"
            await asyncio.sleep(0.01)
        loops.append(
            asyncio.create_task(b.timers.run_timers(stop, interval=0.01, on_result=record("b")))
        )
        while len(b.timers.held) < 2:
            assert time.monotonic() < deadline, "b never got its share"
            await asyncio.sleep(0.01)
        assert len(a.timers.held) == 2
        assert a.timers.held.isdisjoint(b.timers.held)
        clock.advance(31)
        await asyncio.wait_for(asyncio.gather(*loops), SAFETY)
    finally:
        stop.set()
        await asyncio.gather(*loops)
    assert sorted(t for v in by.values() for t, _ in v) == sorted(tids)
    assert {k for v in by.values() for _, k in v} == {"timeout"}
    assert {a.keys.shard_of(t) for t, _ in by["b"]} <= b.timers.held
    assert by["b"]  # b's shards hold some of the games


def test_a_hint_told_just_before_a_look_outlives_its_answer() -> None:
    """A write's hint is told before its ZADD reaches Redis; a look sent
    meanwhile may read the shard without it: the loop still looks by then."""
    w = TimerWakes()
    assert not w.hinted(0, 5000)  # not held: the holder must be told
    w.looking(0)
    w.looked(0, None)  # held, no hint
    assert w.hinted(0, 5000)  # a write told, its ZADD in flight
    w.looking(0)  # a look sent...
    w.looked(0, None)  # ...that Redis ran before the ZADD
    assert w.due(5000) == [0]
    w.looking(0)
    w.looked(0, 7000)  # the next look: the shard as it is
    assert w.due(6999) == []
    w.lost(0)
    assert w.held() == set()
