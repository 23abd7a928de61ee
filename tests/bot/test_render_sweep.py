"""#39: the render sweep (:mod:`telegram_bot.state.pending_renders`) split over
the fleet.  Idle sweeps counted on the client's connections
(:mod:`tests.tables._wire`) over simulated seconds of a test's clock: a second
process adds only its heartbeat, the shards' scripts are the same as one
process's; a process that dies (or stops) leaves its shards to the others --
a dead one's marks repaired within the grace of its death, each once."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable

import pytest

from tables import LiveConfig, ServiceUnavailable, TableService
from telegram_bot.publishing.repair import RenderGuard
from telegram_bot.state.pending_renders import CLEAN_SWEEPERS_S, RenderMarks
from tests.tables._wire import Wire, wired_client
from tests.tables.conftest import FakeClock

GRACE = 4.0  # a sweep every second
SHARDS = 4


@pytest.fixture
async def make_kv(
    redis_url: str, redis_prefix: str
) -> AsyncIterator[Callable[[Wire], TableService]]:
    made: list[TableService] = []

    def make(wire: Wire) -> TableService:
        config = LiveConfig(prefix=redis_prefix)
        svc = TableService(wired_client(redis_url, wire), config, owns_client=True)
        made.append(svc)
        return svc

    yield make
    for svc in made:
        await svc.aclose()


def sent(wire: Wire) -> Counter[str]:
    return Counter(c[0].upper() for c in wire.commands if c[0].upper() not in ("HELLO", "CLIENT"))


def swept_shards(wire: Wire) -> list[int]:
    """The shards whose claim script was sent (its first key names the shard)."""
    return [int(c[3].split("{r")[1].split("}")[0]) for c in wire.named("EVALSHA")]


def table_in(marks: RenderMarks, shard: int, tag: str) -> str:
    return next(f"{tag}{n}" for n in range(1000) if marks.shard_of(f"{tag}{n}") == shard)


async def nothing(table: str, version: int) -> None:
    return None


async def test_a_second_process_adds_only_its_heartbeat(
    make_kv: Callable[[Wire], TableService],
) -> None:
    """40 simulated seconds of idle sweeps (every ``grace / 4``): one process
    sends a script per shard and a heartbeat each sweep; two send the same
    scripts between them -- each shard swept by one -- and one more
    heartbeat.  Before, every process swept every shard: two sent twice the
    scripts."""
    clock = FakeClock()
    wire_a, wire_b = Wire(), Wire()
    a = RenderMarks(make_kv(wire_a).kv, grace=GRACE, shards=SHARDS, clock=clock, owner="a")
    b = RenderMarks(make_kv(wire_b).kv, grace=GRACE, shards=SHARDS, clock=clock, owner="b")
    guards = [RenderGuard(a), RenderGuard(b)]

    async def window(*procs: RenderGuard) -> None:
        for _ in range(40):  # a sweep of each every grace / 4 = 1 s
            for g in procs:
                assert await g.repair_due(nothing) == []
            clock.advance(GRACE / 4)

    await window(guards[0])  # the scripts loaded
    wire_a.reset()
    await window(guards[0])
    alone = sent(wire_a)
    assert alone["EVALSHA"] == 40 * SHARDS
    await window(*guards)  # b joins: after a sweep of each they split the shards
    wire_a.reset()
    wire_b.reset()
    await window(*guards)
    both = sent(wire_a) + sent(wire_b)
    assert both["EVALSHA"] == alone["EVALSHA"]  # the shards' scripts: as for one
    assert sorted(set(swept_shards(wire_a))) == [0, 2]
    assert sorted(set(swept_shards(wire_b))) == [1, 3]
    beats = sum(1 for c in wire_b.commands if c[0].upper() == "ZADD")
    assert beats == 40
    # b adds its heartbeat (ZADD, ZRANGEBYSCORE) and its cleaning every 30 s
    assert both.total() <= alone.total() + 2 * beats + 2 * 2


async def test_a_dead_process_s_shards_are_swept_by_another_within_the_grace(
    make_kv: Callable[[Wire], TableService],
) -> None:
    """b sweeps its half of the shards and owns a mark in each shard; it is
    killed (no more sweeps, never leaves the sweepers).  a takes b's shards
    once b's heartbeat is ``grace / 2`` old, and repairs every mark of b --
    each once -- within ``grace + grace / 4`` of b's death (its marks fall due
    ``grace`` after their last keep)."""
    clock = FakeClock()
    wire = Wire()
    kv = make_kv(wire).kv
    a = RenderMarks(kv, grace=GRACE, shards=SHARDS, clock=clock, owner="a")
    b = RenderMarks(kv, grace=GRACE, shards=SHARDS, clock=clock, owner="b")
    for _ in range(3):
        await a.sweep()
        await b.sweep()
        clock.advance(GRACE / 4)
    assert await a.sweepers_now() == [0, 2]
    assert await b.sweepers_now() == [1, 3]
    tables = [table_in(b, shard, "T") for shard in range(SHARDS)]
    for t in tables:
        assert await b.set(t, 5)
    died = clock()
    repaired: list[tuple[str, float]] = []

    async def rerender(table: str, version: int) -> None:  # went out: its mark cleared
        repaired.append((table, clock() - died))
        assert await a.clear(table, version)

    guard = RenderGuard(a)
    for _ in range(12):  # 12 s of a's sweeps; b sweeps no more
        clock.advance(GRACE / 4)
        await guard.repair_due(rerender)
    assert sorted(t for t, _ in repaired) == sorted(tables)  # each once
    assert all(after <= GRACE + GRACE / 4 for _, after in repaired), repaired
    assert await a.sweepers_now() == [0, 1, 2, 3]


async def test_a_process_that_stops_leaves_its_shards_at_once(
    make_kv: Callable[[Wire], TableService],
) -> None:
    """b leaves the sweepers as it stops: a sweeps every shard at its next
    sweep, not ``grace / 2`` later; two live sweepers never claim a mark twice."""
    clock = FakeClock()
    kv = make_kv(Wire()).kv
    a = RenderMarks(kv, grace=GRACE, shards=SHARDS, clock=clock, owner="a")
    b = RenderMarks(kv, grace=GRACE, shards=SHARDS, clock=clock, owner="b")
    dead = RenderMarks(kv, grace=GRACE, shards=SHARDS, clock=clock, owner="c")
    tables = [table_in(dead, shard, "U") for shard in range(SHARDS)]
    for t in tables:
        assert await dead.set(t, 3)  # its process died at once
    claimed: list[str] = []
    for _ in range(8):
        for m in (a, b):
            claimed += [c.table for c in await m.sweep()]
        clock.advance(GRACE / 4)
    assert sorted(claimed) == sorted(tables)  # each claimed once, by one of them
    assert await a.sweepers_now() == [0, 2]
    await b.leave()
    assert await a.sweepers_now() == [0, 1, 2, 3]


async def test_sweepers_not_read_every_shard_is_swept(
    make_kv: Callable[[Wire], TableService], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweepers' set cannot be read (on a cluster its node failed): each
    process sweeps every shard meanwhile, as before #39 -- the marks of the
    shards on live nodes are still repaired."""
    clock = FakeClock()
    kv = make_kv(Wire()).kv
    a = RenderMarks(kv, grace=GRACE, shards=SHARDS, clock=clock, owner="a")
    b = RenderMarks(kv, grace=GRACE, shards=SHARDS, clock=clock, owner="b")
    await a.sweep()
    assert await b.sweepers_now() == [1, 3]

    async def down(*args: object, **kwargs: object) -> list[str]:
        raise ServiceUnavailable("the sweepers' node failed")

    monkeypatch.setattr(kv, "heartbeat", down)
    tables = [table_in(a, shard, "V") for shard in range(SHARDS)]
    for t in tables:
        assert await a.set(t, 2)
    clock.advance(GRACE + 0.1)
    assert sorted(c.table for c in await b.sweep()) == sorted(tables)


async def test_a_mark_sets_no_ttl_and_its_sweeper_renews_the_shards_now_and_then(
    make_kv: Callable[[Wire], TableService],
) -> None:
    """#39: a mark no longer renews its shard's TTL (two commands a press); the
    shard's sweeper does, once every ``CLEAN_SWEEPERS_S``, so a shard no
    process sweeps any more still expires."""
    clock = FakeClock()
    kv = make_kv(Wire()).kv
    a = RenderMarks(kv, grace=GRACE, shards=1, clock=clock, owner="a")
    assert await a.set("T", 5)
    due, marks = a.keys(0)
    assert await kv.pttl(due) == -1  # no TTL from the mark
    assert await kv.pttl(marks) == -1
    await a.sweep()
    assert 0 < await kv.pttl(due) <= a.ttl_ms
    assert 0 < await kv.pttl(marks) <= a.ttl_ms
    await kv.store.one(lambda p: p.persist(due))
    clock.advance(CLEAN_SWEEPERS_S / 2)
    await a.sweep()
    assert await kv.pttl(due) == -1  # not renewed at every sweep
    clock.advance(CLEAN_SWEEPERS_S / 2)
    await a.sweep()
    assert await kv.pttl(due) > 0


async def test_a_clear_of_a_version_older_than_one_marked_since_sends_nothing(
    make_kv: Callable[[Wire], TableService],
) -> None:
    """#39: a move's deferred renders of the versions before it each cleared
    their mark, and each found the move's newer mark (or none, its render done):
    the script changed nothing.  A clear of a version older than one this
    process marked since sends nothing; the newer mark stays until its own
    clear, and a sweep still finds it when its owner dies first."""
    clock = FakeClock()
    wire = Wire()
    marks = RenderMarks(make_kv(wire).kv, grace=GRACE, shards=SHARDS, clock=clock, owner="a")
    assert await marks.set("t1", 4)
    assert await marks.set("t1", 5)
    wire.reset()
    assert not await marks.clear("t1", 4)
    assert wire.trips == 0
    clock.advance(GRACE + 1)  # its owner never cleared 5: a sweep repairs it
    claimed = await marks.claim_due()
    assert [(c.table, c.version) for c in claimed] == [("t1", 5)]
    assert await marks.clear("t1", 5)
    assert wire.trips > 0
    wire.reset()
    assert await marks.clear("t1", 5)  # asked again: nothing marked, Redis says so
    assert wire.trips == 1


async def test_a_version_marked_and_never_written_does_not_hold_back_a_clear(
    make_kv: Callable[[Wire], TableService],
) -> None:
    """(the review of the test above) A move marks its version before its
    write; refused, its mark is claimed until given up.  A render of the
    table's real version, older, starts after it: its clear clears."""
    clock = FakeClock()
    marks = RenderMarks(
        make_kv(Wire()).kv, grace=GRACE, shards=SHARDS, clock=clock, owner="a", max_tries=2
    )
    assert await marks.set("t1", 5)  # the move's mark; the engine refuses the move
    for _ in range(3):
        clock.advance(GRACE + 1)
        await marks.claim_due()  # given up at last
    assert await marks.set("t1", 0)  # a render of the current version (4) starts
    assert await marks.clear("t1", 4)
    clock.advance(GRACE + 1)
    assert await marks.claim_due() == []  # nothing left to repair
