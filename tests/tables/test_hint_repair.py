"""#40: the repair of a timer shard's hints (:mod:`tables.hint_repair`): lost
hints written again from the tables' deadlines by the shard's holder, in
bounded batches, twice, and only when a repair is owed; on a cluster a tick
that finds another master serving its shard than at its last tick owes one
(a failover: the promoted replica may lack hints).  The failovers themselves:
``tests/faults/test_cluster_failover.py``."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tables import TableService
from tables import hint_repair as hr
from tables.store import text
from tests.tables.conftest import FakeClock, new_table

GAMES = 6
FILLER = 300  # index entries without a table: the index is large (ZSCAN walks it in steps)


async def _hints(svc: TableService, shard: int) -> dict[str, int]:
    key = svc.keys.timer_shard(shard)
    raw = await svc.store.one(lambda p: p.zrange(key, 0, -1, withscores=True))
    return {text(m): int(s) for m, s in raw}


async def _deadline(svc: TableService, tid: str) -> int:
    d = await svc.store.one(lambda p: p.hget(svc.keys.table(tid), "d"))
    return int(d)


async def _games_and_filler(svc: TableService) -> list[str]:
    tids = [await new_table(svc, 2, timer=60, first_user=10 * i + 1) for i in range(GAMES)]
    now = svc.tables.now_ms()
    for n in range(FILLER):
        await svc.tables.index.note(f"gone{n}", now, 3_600_000)
    return tids


async def _lose_every_hint(svc: TableService) -> None:
    keys = [svc.keys.timer_shard(s) for s in range(svc.keys.timer_shards)]

    def build(p: object) -> None:
        for key in keys:
            p.delete(key)  # type: ignore[attr-defined]

    await svc.store.run(build)


async def test_a_repair_writes_the_lost_hints_from_the_deadlines_in_bounded_batches(
    make_service: Callable[..., TableService], clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every hint lost; a repair asked for on each shard: the holder walks the
    index a few entries a batch -- at most ``REPAIR_BATCHES`` batches a tick --
    and writes back exactly the hints of its shards' tables, each at its
    deadline (``d``); tables of another shard, and index entries without a
    table, get none.  Before #40 nothing ever wrote them back."""
    monkeypatch.setattr(hr, "REPAIR_BATCH", 10)
    monkeypatch.setattr(hr, "REPAIR_BATCHES", 2)
    svc = make_service(timer_shards=4)
    tids = await _games_and_filler(svc)
    await svc.timers.tick()
    assert svc.timers.held == {0, 1, 2, 3}
    await _lose_every_hint(svc)
    scans: list[int] = []
    scan = svc.tables.index.scan

    async def counted(cursor: int, count: int) -> tuple[int, list[str]]:
        scans.append(count)
        return await scan(cursor, count)

    svc.tables.index.scan = counted  # type: ignore[method-assign]
    for shard in range(4):
        await svc.store.ask_repair(shard, "lost")
    ticks = 0
    owed = svc.timers.repair.owed
    while not all(s in owed and owed[s].walks == 1 for s in range(4)):
        scans.clear()
        await svc.timers.tick()
        ticks += 1
        assert len(scans) <= 2 * 4  # REPAIR_BATCHES a shard, each a tick
        assert ticks < 200, "the repair never ended its walk"
    assert ticks > 1  # the index took several ticks: bounded batches
    for shard in range(4):
        expected = {
            tid: await _deadline(svc, tid) for tid in tids if svc.keys.shard_of(tid) == shard
        }
        assert await _hints(svc, shard) == expected


async def test_a_repair_walks_again_once_the_failover_settled_then_ends(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """A hint lost after the first walk read its table (a process that owed it
    died) is written by the second walk, ``REPAIR_AGAIN_MS`` later; then the
    repair's mark goes and ticks walk no more."""
    svc = make_service(timer_shards=1)
    tids = await _games_and_filler(svc)
    await svc.timers.tick()
    await svc.store.ask_repair(0, "lost")
    await svc.timers.tick()  # the first walk (a small index: one batch or a few)
    while svc.timers.repair.owed[0].walks == 0:
        await svc.timers.tick()
    await _lose_every_hint(svc)
    await svc.timers.tick()
    assert await _hints(svc, 0) == {}  # not yet: the failover is settling
    clock.advance(hr.REPAIR_AGAIN_MS / 1000)
    while svc.timers.repair.owed:
        await svc.timers.tick()
    assert await _hints(svc, 0) == {tid: await _deadline(svc, tid) for tid in tids}
    key = svc.keys.timer_repair(0)
    assert await svc.store.one(lambda p: p.exists(key)) == 0  # done: the mark is gone
    await _lose_every_hint(svc)
    await svc.timers.tick()
    assert await _hints(svc, 0) == {}  # no repair owed: the ticks walk no more


async def test_a_repair_asked_for_during_another_is_not_lost(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """A repair asked for while one is under way (another failover, after the
    tick read the first's token) keeps its mark when the first ends, and the
    holder's next tick repairs again."""
    svc = make_service(timer_shards=1)
    tid = await new_table(svc, 2, timer=60)
    await svc.timers.tick()
    await svc.store.ask_repair(0, "first")
    await svc.timers.tick()  # its first walk
    assert svc.timers.repair.owed[0].walks == 1
    key = svc.keys.timer_repair(0)
    await svc.store.one(lambda p: p.set(key, "second"))  # asked for anew meanwhile
    clock.advance(hr.REPAIR_AGAIN_MS / 1000)
    await svc.timers.repair.step(svc.timers.held)  # the first's second walk: it ends
    assert 0 not in svc.timers.repair.owed
    assert text(await svc.store.one(lambda p: p.get(key))) == "second"
    await _lose_every_hint(svc)
    await svc.timers.tick()  # the second repair's first walk
    assert svc.timers.repair.owed[0].token == "second"
    assert await _hints(svc, 0) == {tid: await _deadline(svc, tid)}


async def test_a_hint_earlier_than_the_deadline_stays(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """The repair writes ``ZADD LT``: a hint may be early, never late."""
    svc = make_service(timer_shards=1)
    tid = await new_table(svc, 2, timer=60)
    await svc.timers.tick()
    early = await _deadline(svc, tid) - 5_000
    key = svc.keys.timer_shard(0)
    await svc.store.one(lambda p: p.zadd(key, {tid: early}))
    await svc.store.ask_repair(0, "lost")
    await svc.timers.tick()
    assert await _hints(svc, 0) == {tid: early}


@pytest.mark.parametrize("live_url", ["cluster"], indirect=True)
async def test_another_master_serving_the_shard_owes_a_repair(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """On a cluster the tick records the master serving its shard
    (``CLUSTER MYID``); a tick that finds another one there (the shard's
    master failed over: its replica may lack hints) owes a repair, and the
    holder writes the lost hints back.  A first tick owes none."""
    svc = make_service(timer_shards=1)
    tid = await new_table(svc, 2, timer=60)
    await svc.timers.tick()
    assert not svc.timers.repair.owed  # the first tick: nothing owed
    served, repair = svc.keys.timer_served(0), svc.keys.timer_repair(0)
    assert await svc.store.one(lambda p: p.exists(repair)) == 0
    await svc.store.one(lambda p: p.set(served, "a-master-that-failed-over"))
    await _lose_every_hint(svc)
    await svc.timers.tick()
    assert await _hints(svc, 0) == {tid: await _deadline(svc, tid)}
    assert await svc.store.one(lambda p: p.exists(repair)) == 1  # the second walk is owed
