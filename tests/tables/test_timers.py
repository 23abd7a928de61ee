"""Turn timers with an injected clock: timeout moves (PRODUCT), counting,
AI takeover, taking the seat back, racing schedulers, restart."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest

from engine import Action
from engine.actions import TAKE, THROW
from tables import LiveError, ServiceUnavailable, TableService
from tables.games import timeout_move
from tables.timers import NO_HOOKS, TimerHooks
from tests.tables._wire import Wire
from tests.tables.conftest import FakeClock, new_table, replay_current_game, same_state


async def kinds(svc: TableService, tid: str) -> list[str]:
    return [e.kind for e in await svc.admin.event_page(tid, 0, 100_000)]


async def test_timeout_moves_count_and_hand_the_seat_to_the_ai(
    svc: TableService, clock: FakeClock
) -> None:
    tid = await new_table(svc, 2, timer=30)
    _, state, version = await svc.tables.get(tid)
    assert state is not None
    info = await svc.admin.table_info(tid)
    assert info.deadline == int((clock.now + 30) * 1000)
    assert await svc.timers.tick() == []  # not due yet
    clock.advance(29)
    assert await svc.timers.tick() == []
    leader = state.to_act()[0]
    lowest = min(state.hand(leader))
    clock.advance(2)
    [r] = await svc.timers.tick()
    assert r.version == version + 1
    assert [(e.kind, e.seat, e.text) for e in r.events][:2] == [
        ("timeout", leader, "1"),
        ("auto", leader, Action.lead(leader, lowest).text()),  # the lowest lead
    ]
    assert r.table.seats[leader].timeouts == 1
    assert not r.table.seats[leader].ai_controlled
    assert await svc.timers.tick() == []  # the new deadline is 30 s away
    # the defender (the other seat) lets his time run out: he takes
    _, state, _ = await svc.tables.get(tid)
    assert state is not None
    defender = state.defender
    clock.advance(31)
    [r] = await svc.timers.tick()
    assert ("auto", defender, "K") in [(e.kind, e.seat, e.text) for e in r.events]
    # keep timing out until one seat has two consecutive timeouts: the AI takes it
    for _ in range(10):
        if any(s.ai_controlled for s in r.table.seats):
            break
        clock.advance(31)
        [r] = await svc.timers.tick()
    taken = [i for i, s in enumerate(r.table.seats) if s.ai_controlled]
    assert taken
    assert ("takeover", taken[0], "timeouts") in [(e.kind, e.seat, e.text) for e in r.events]
    assert r.table.seats[taken[0]].timeouts == 2
    _, state, _ = await svc.tables.get(tid)
    assert state is not None
    assert state.over or all(s not in taken for s in state.to_act())
    user = r.table.seats[taken[0]].user
    assert user is not None
    if not state.over:
        back = await svc.games.take_seat_back(tid, user)
        assert not back.table.seats[taken[0]].ai_controlled
        assert back.table.seats[taken[0]].timeouts == 0
        with pytest.raises(LiveError):
            await svc.games.take_seat_back(tid, user)
    assert same_state(state, await replay_current_game(svc, tid))


async def test_own_move_resets_the_count(svc: TableService, clock: FakeClock) -> None:
    tid = await new_table(svc, 2, timer=60)
    _, state, _ = await svc.tables.get(tid)
    assert state is not None
    leader = state.attacker
    clock.advance(61)
    [r] = await svc.timers.tick()
    assert r.table.seats[leader].timeouts == 1
    for _ in range(200):  # play on until the leader moves himself
        table, state, version = await svc.tables.get(tid)
        assert state is not None
        assert not state.over
        seat = leader if leader in state.to_act() else state.to_act()[0]
        user = table.seats[seat].user
        assert user is not None
        r = await svc.games.apply(tid, user, state.legal_actions(seat)[-1].text(), version)
        if seat == leader:
            break
    assert r.table.seats[leader].timeouts == 0
    _, state, _ = await svc.tables.get(tid)
    assert state is not None
    if not state.over and leader in state.to_act():
        clock.advance(61)
        [r] = await svc.timers.tick()
        assert r.table.seats[leader].timeouts == 1
        assert not r.table.seats[leader].ai_controlled


async def test_timeout_move_rules() -> None:
    from engine import new_game

    state = new_game("shchelkovsky", 3, 11)
    leader = state.attacker
    a = timeout_move(state, leader)
    hand = state.hand(leader)
    plain = [c for c in hand if c != 52 and c % 4 != state.trump]
    assert a.kind == "lead"
    assert a.cards == (min(plain) if plain else min(hand),)
    state.apply(a)
    assert timeout_move(state, state.defender).kind == "take"


async def test_two_schedulers_race_for_one_timer(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    a, b = make_service(), make_service()
    tids = [await new_table(a, 2, timer=30, first_user=10 * i + 1) for i in range(5)]
    versions = {t: (await a.tables.get(t))[2] for t in tids}
    clock.advance(31)
    results = await asyncio.gather(
        a.timers.tick(), b.timers.tick(), a.timers.tick(), b.timers.tick()
    )
    done = [r for rs in results for r in rs]
    assert sorted(r.table_id for r in done) == sorted(tids)  # each exactly once
    for t in tids:
        assert (await a.tables.get(t))[2] == versions[t] + 1
        assert (await kinds(a, t)).count("timeout") == 1


async def test_timers_survive_a_restart_and_a_crashed_claimer(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    first = make_service()
    tid = await new_table(first, 2, timer=30)
    await first.aclose()
    clock.advance(31)
    second = make_service()
    # a process that crashed after its tick claimed the timer: its shard lease
    # (10 s) and its claim on the hint (30 s) hide the timer for a while
    shard = second.keys.shard_of(tid)
    claimed = await second.store.tick_shard(
        shard, "crashed", second.tables.now_ms(), 10_000, 10, 30_000
    )
    assert claimed is not None
    assert claimed.due == [tid]
    assert await second.timers.tick() == []
    assert shard not in second.timers.held
    clock.advance(11)  # the shard's lease ran out: second takes it, the claim still holds
    assert await second.timers.tick() == []
    assert shard in second.timers.held
    clock.advance(20)  # the claim ran out: second handles the timer
    [r] = await second.timers.tick()
    assert r.table_id == tid
    assert r.events[0].kind == "timeout"


async def test_no_timer_no_hint_and_stale_hints_are_dropped(
    svc: TableService, clock: FakeClock
) -> None:
    tid = await new_table(svc, 2, timer=0, rated=False)  # no timer: a casual game (#38)
    assert await svc.timers.next_deadline() is None
    timed = await new_table(svc, 2, timer=30, first_user=5)
    assert await svc.timers.next_deadline() == int((clock.now + 30) * 1000)
    await svc.admin.admin_reset(timed, to="abort")
    clock.advance(31)
    assert await svc.timers.tick() == []
    assert await svc.timers.next_deadline() is None
    assert (await svc.tables.get(tid))[1] is not None


async def test_run_timers_loop(svc: TableService, clock: FakeClock) -> None:
    tid = await new_table(svc, 2, timer=30)
    clock.advance(31)
    stop = asyncio.Event()
    seen: list[str] = []

    async def on_result(r: object) -> None:
        seen.append(tid)
        stop.set()

    await asyncio.wait_for(svc.timers.run_timers(stop, interval=0.01, on_result=on_result), 30)
    assert seen == [tid]


async def test_processes_split_the_timer_shards(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    a, b = make_service(timer_shards=4), make_service(timer_shards=4)
    tids = [await new_table(a, 2, timer=30, first_user=10 * i + 1) for i in range(8)]
    assert len({a.keys.shard_of(t) for t in tids}) > 1
    await a.timers.tick()
    assert a.timers.held == {0, 1, 2, 3}  # alone: every shard
    await b.timers.tick()  # two processes now: b's share is 2, all held by a
    assert b.timers.held == set()
    await a.timers.tick()  # a hands back the shards beyond its share
    assert len(a.timers.held) == 2
    await b.timers.tick()
    assert len(b.timers.held) == 2
    assert a.timers.held.isdisjoint(b.timers.held)
    clock.advance(31)
    by_a, by_b = await a.timers.tick(), await b.timers.tick()
    assert {a.keys.shard_of(r.table_id) for r in by_a} <= a.timers.held
    assert {b.keys.shard_of(r.table_id) for r in by_b} <= b.timers.held
    done = [r.table_id for r in by_a + by_b]
    assert sorted(done) == sorted(tids)  # each timer once, by its shard's holder
    assert a.timers.held | b.timers.held == {0, 1, 2, 3}
    await b.aclose()  # b stops: after its leases run out a takes every shard
    clock.advance(11)
    await a.timers.tick()
    assert a.timers.held == {0, 1, 2, 3}


async def test_one_process_prunes_the_index(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    a, b = make_service(), make_service()
    assert await a.timers.prune()
    assert not await b.timers.prune()  # a holds the pruner's lease
    assert await a.timers.prune()  # and renews it
    await a.aclose()
    clock.advance(121)  # a stopped renewing: b takes over
    assert await b.timers.prune()
    assert not await make_service().timers.prune()


async def test_an_idle_tick_is_one_round_trip_per_shard_held(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """Counted on the client's connections: marking the process alive, then one
    script per shard that renews its lease and claims its due hints."""
    wire_a, wire_b = Wire(), Wire()
    a = make_service(wire=wire_a, timer_shards=4)
    await new_table(a, 2, timer=30)  # a hint in one shard, not due
    await a.timers.tick()  # takes every shard (and loads the scripts)
    assert a.timers.held == {0, 1, 2, 3}
    wire_a.reset()
    assert await a.timers.tick() == []
    assert wire_a.trips == 1 + 4  # the old code: 1 + 4 leases + 4 claims
    assert len(wire_a.named("EVALSHA")) == 4
    # and the 2 commands marking a alive and counting the live processes (#39:
    # 4 of old; the dead ones are dropped once in 30 s)
    assert len(wire_a.commands) == 4 + 2
    b = make_service(wire=wire_b, timer_shards=4)
    await b.timers.tick()  # two processes: b's share is 2, still held by a
    await a.timers.tick()  # a hands back two
    await b.timers.tick()  # b takes them
    assert len(a.timers.held) == len(b.timers.held) == 2
    wire_a.reset()
    wire_b.reset()
    assert await a.timers.tick() == []
    assert await b.timers.tick() == []
    assert (wire_a.trips, wire_b.trips) == (1 + 2, 1 + 2)


async def deadline_of(svc: TableService, tid: str) -> int | None:
    return (await svc.admin.table_info(tid)).deadline


@pytest.mark.parametrize("how", ["killed", "stopped"])
async def test_deadlines_inside_a_restart_gap_are_extended(
    make_service: Callable[..., TableService], clock: FakeClock, how: str
) -> None:
    """#28: the only process ticks the timers, then dies (no hand-over) or is
    stopped with the whole fleet (hand-over, nobody to take the shards); one
    starts 25 s later.  The deadline that fell inside the gap is moved on by
    the gap, not enforced; the moved deadline is enforced as usual."""
    a = make_service()
    tid = await new_table(a, 2, timer=30)
    t0 = clock.now
    clock.advance(15)
    assert await a.timers.tick() == []  # a watches the shards: the gap starts here
    if how == "stopped":
        await a.timers.hand_over()
    clock.advance(30)  # the deadline (t0 + 30) passes while nobody watches
    b = make_service()
    [r] = await b.timers.tick()
    assert [(e.kind, e.text) for e in r.events] == [("extend", "30000")]
    assert r.deadline == int((t0 + 60) * 1000)  # 30 s + the 30 s gap
    assert await deadline_of(b, tid) == r.deadline
    assert all(s.timeouts == 0 for s in r.table.seats)
    assert "timeout" not in await kinds(b, tid)
    clock.advance(14)
    assert await b.timers.tick() == []  # no gap now: b ticked 14 s ago
    clock.advance(2)
    [r] = await b.timers.tick()
    assert r.events[0].kind == "timeout"


async def test_a_short_gap_extends_to_the_restart_grace(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    a = make_service()
    tid = await new_table(a, 2, timer=30)
    t0 = clock.now
    clock.advance(29)
    await a.timers.tick()
    clock.advance(11)  # a died at t0 + 29 (its lease ran to t0 + 39); deadline t0 + 30
    b = make_service()
    [r] = await b.timers.tick()
    assert r.events[0].kind == "extend"
    assert r.deadline == int((t0 + 40 + 10) * 1000)  # at least restart_grace from now
    assert await deadline_of(b, tid) == r.deadline


async def test_a_hand_over_lets_the_next_process_go_on_at_once(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """#28: SIGTERM hands the shards over: another live process takes them at
    its next tick (not after the 10 s shard lease) and enforces the deadline
    as usual -- no gap."""
    a, b = make_service(timer_shards=4), make_service(timer_shards=4)
    tid = await new_table(a, 2, timer=30)
    await a.timers.tick()
    await b.timers.tick()
    await a.timers.tick()  # hands back the two beyond its share
    await b.timers.tick()  # takes them
    assert len(a.timers.held) == 2
    assert len(b.timers.held) == 2
    clock.advance(29)
    await a.timers.tick()
    await b.timers.tick()
    await a.timers.hand_over()
    assert a.timers.held == set()
    clock.advance(2)  # a's leases would still run 8 s: b takes its shards at once
    [r] = await b.timers.tick()
    assert b.timers.held == {0, 1, 2, 3}
    assert r.table_id == tid
    assert r.events[0].kind == "timeout"


async def test_an_outage_of_one_table_is_never_taken_for_gone(
    svc: TableService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The table's own store fails while its deadline is due (on a cluster: its
    master, and only its slots): the tick goes on, the timer stays -- due again
    once its claim's lease ends -- and the timeout move is made then.  Before
    #38 the outage was a :class:`LiveError` ("gone"): the hint was dropped and a
    game with an absent player hung until it expired."""
    tid = await new_table(svc, 2, timer=30)
    _, _, version = await svc.tables.get(tid)
    load = svc.tables.load
    down = {tid}

    async def load_or_fail(table_id: str) -> Any:
        if table_id in down:
            raise ServiceUnavailable("Redis is unavailable: no answer from its master")
        return await load(table_id)

    monkeypatch.setattr(svc.tables, "load", load_or_fail)
    clock.advance(31)
    assert await svc.timers.tick() == []  # nothing written, nothing raised
    clock.advance(0.5)
    assert await svc.timers.tick() == []  # not due again yet
    clock.advance(1)
    assert await svc.timers.tick() == []  # due again: still down
    down.clear()  # the node is back (or its replica promoted)
    clock.advance(1.5)
    [r] = await svc.timers.tick()
    # his presses were refused meanwhile: the deadline moves on, no timeout (#38)
    assert r.version == version + 1
    assert [(e.kind, e.seat) for e in r.events] == [("extend", -1)]
    assert r.deadline == int((clock.now + svc.config.restart_grace) * 1000)
    assert all(s.timeouts == 0 for s in r.table.seats)
    clock.advance(svc.config.restart_grace + 0.1)
    [r] = await svc.timers.tick()  # then enforced as usual
    assert [e.kind for e in r.events][:1] == ["timeout"]


async def test_deadlines_during_an_outage_in_the_same_process_are_extended(
    svc: TableService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#38: the restart gap's grace (#28) applied only when a timer shard changed
    owner.  An outage inside one process -- every tick fails, the process lives
    on -- let every deadline that passed meanwhile fire on the first good tick:
    players whose presses were answered "unavailable" got a timeout.  Now the
    gap runs from the process's last good tick."""
    tid = await new_table(svc, 2, timer=30)
    t0 = clock.now
    clock.advance(15)
    assert await svc.timers.tick() == []  # the last good tick: the gap starts here
    store = svc.timers.store
    tick_shard = store.tick_shard

    async def down(*args: Any, **kwargs: Any) -> Any:
        raise ServiceUnavailable("Redis is unavailable: no answer to a PING")

    monkeypatch.setattr(store, "tick_shard", down)
    for _ in range(30):  # 30 s of failed ticks: the deadline (t0 + 30) passes
        clock.advance(1)
        assert await svc.timers.tick() == []
    monkeypatch.setattr(store, "tick_shard", tick_shard)
    [r] = await svc.timers.tick()
    assert [(e.kind, e.text) for e in r.events] == [("extend", "30000")]
    assert r.deadline == int((t0 + 60) * 1000)  # 30 s + the 30 s outage
    assert "timeout" not in await kinds(svc, tid)
    clock.advance(14)
    assert await svc.timers.tick() == []  # no gap now
    clock.advance(2)
    [r] = await svc.timers.tick()
    assert r.events[0].kind == "timeout"


async def test_a_stalled_timer_loop_is_a_gap_too(svc: TableService, clock: FakeClock) -> None:
    """The loop that ticks stalled (a blocked event loop) past the deadline: the
    deadlines that passed meanwhile are extended, not enforced (#38).  A stall
    is real time; the service's clock moved on alone is none (the next test)."""
    tid = await new_table(svc, 2, timer=30)
    t0 = clock.now
    stop = asyncio.Event()
    seen: list[Any] = []
    loops = 0

    async def on_result(r: Any) -> None:
        seen.append(r)
        stop.set()

    real_tick = svc.timers.tick
    real = [0.0]  # the loop's real time (the service's clock is the test's)
    svc.timers.monotonic = lambda: real[0]

    async def tick(limit: int = 100, hooks: TimerHooks = NO_HOOKS) -> Any:
        nonlocal loops
        loops += 1
        got = await real_tick(limit, hooks)
        real[0] += 0.01
        if loops == 1:
            clock.advance(40)  # then the loop blocked 40 s before the next tick
            real[0] += 40
        return got

    svc.timers.tick = tick  # type: ignore[method-assign]
    clock.advance(5)
    await asyncio.wait_for(svc.timers.run_timers(stop, interval=0.01, on_result=on_result), 30)
    [r] = seen
    assert r.table_id == tid
    assert [e.kind for e in r.events] == ["extend"]
    assert r.deadline > int((t0 + 45) * 1000)


async def test_the_services_clock_moved_on_alone_is_no_stall(
    svc: TableService, clock: FakeClock
) -> None:
    """Only real time makes a stall: a clock moved on between two ticks of a
    loop that kept running (a test's, a corrected wall clock) enforces the
    deadline as usual."""
    tid = await new_table(svc, 2, timer=30)
    stop = asyncio.Event()
    seen: list[Any] = []
    loops = 0

    async def on_result(r: Any) -> None:
        seen.append(r)
        stop.set()

    real_tick = svc.timers.tick

    async def tick(limit: int = 100, hooks: TimerHooks = NO_HOOKS) -> Any:
        nonlocal loops
        loops += 1
        got = await real_tick(limit, hooks)
        if loops == 1:
            clock.advance(40)
        return got

    svc.timers.tick = tick  # type: ignore[method-assign]
    await asyncio.wait_for(svc.timers.run_timers(stop, interval=0.01, on_result=on_result), 30)
    [r] = seen
    assert r.table_id == tid
    assert [e.kind for e in r.events][:1] == ["timeout"]


async def test_an_outage_that_ends_before_the_deadline_gives_its_time_back(
    svc: TableService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#38 (found by the fair-play property): the gap's grace covered only the
    deadlines that passed inside it.  An outage from 4 s to 26 s of a 30 s turn
    ended before its deadline, so at 30 s the player -- whose presses were
    answered "unavailable" for 22 s -- was timed out after 8 s of his turn.
    Now the deadline moves on by the time the gap took from the turn, once."""
    tid = await new_table(svc, 2, timer=30)
    t0 = clock.now
    clock.advance(4)
    assert await svc.timers.tick() == []  # the last good tick: the gap starts here
    store = svc.timers.store
    tick_shard = store.tick_shard

    async def down(*args: Any, **kwargs: Any) -> Any:
        raise ServiceUnavailable("Redis is unavailable: no answer to a PING")

    monkeypatch.setattr(store, "tick_shard", down)
    for _ in range(22):  # 4 s .. 26 s: every tick fails
        clock.advance(1)
        assert await svc.timers.tick() == []
    monkeypatch.setattr(store, "tick_shard", tick_shard)
    assert await svc.timers.tick() == []  # 26 s: Redis back, nothing due yet
    clock.advance(4)
    [r] = await svc.timers.tick()  # 30 s: his deadline
    assert [(e.kind, e.text) for e in r.events] == [("extend", "22000")]
    assert r.deadline == int((t0 + 52) * 1000)  # the 22 s the outage took
    assert "timeout" not in await kinds(svc, tid)
    clock.advance(21)
    assert await svc.timers.tick() == []
    clock.advance(2)
    [r] = await svc.timers.tick()  # given back once: now the timeout
    assert r.events[0].kind == "timeout"


async def test_a_write_that_moves_nothing_keeps_the_turns_deadline(
    svc: TableService, clock: FakeClock
) -> None:
    """A seated player who is not to act leaves (the AI has nothing to play)
    and takes his seat back, every 25 s of a 30 s turn: the waiting player's
    deadline stays where his turn set it, so his timeout comes (review3: each
    such write set a whole new turn, and a friend could stall a rated game for
    ever)."""
    seeds = iter(range(500, 600))
    svc.games.new_seed = lambda: next(seeds)
    tid = await new_table(svc, 3, timer=30)
    table, state, _ = await svc.tables.get(tid)
    assert state is not None
    [staller] = state.to_act()  # the leader: the game waits for him alone
    friend = next(i for i in range(3) if i not in state.to_act())
    friend_user = table.seats[friend].user
    assert friend_user is not None
    due = (await svc.tables.load(tid)).deadline
    ply = state.ply
    clock.advance(25)
    await svc.lobbies.leave(tid, friend_user)
    await svc.games.take_seat_back(tid, friend_user)
    assert (await svc.tables.load(tid)).deadline == due
    clock.advance(6)  # 31 s into his 30 s turn
    await svc.timers.tick()
    table, state, _ = await svc.tables.get(tid)
    assert state is not None
    assert state.ply > ply  # his timeout move
    assert table.seats[staller].timeouts == 1


async def _late_take_spot(svc: TableService, rng: random.Random) -> str | None:
    """A 2-player game (30 s timer) played at random until the defender faces
    an uncovered card after a cover and the attacker may throw in too
    (to_act: both); None if it ended first."""
    tid = await new_table(svc, 2, timer=30)
    for _ in range(400):
        table, state, version = await svc.tables.get(tid)
        assert state is not None
        if state.over:
            return None
        to_act = state.to_act()
        if len(to_act) == 2 and state.defender in to_act and not state.taking and state.covered_any:
            return tid
        seat = rng.choice(to_act)
        legal = [a for a in state.legal_actions(seat) if a.kind != TAKE] or state.legal_actions(
            seat
        )
        user = table.seats[seat].user
        assert user is not None
        await svc.games.apply(tid, user, rng.choice(legal).text(), version)
    return None


async def test_a_stalling_defender_takes_and_the_thrower_gets_his_throw_ins(
    svc: TableService, clock: FakeClock
) -> None:
    """The defender lets his time run out where he and the attacker may both
    act: his timeout takes, and the attacker -- who was not the one stalling
    -- gets a turn of his own to throw in after the take (C11, S11), with no
    timeout counted (review3: both timed out in one write, the bout ended
    and the throw-ins were lost)."""
    rng = random.Random(3)
    seeds = iter(range(1000, 2000))  # the deals fixed: deterministic
    svc.games.new_seed = lambda: next(seeds)
    tid = None
    for _ in range(40):
        tid = await _late_take_spot(svc, rng)
        if tid is not None:
            break
        clock.advance(3600)
    assert tid is not None, "no late-take spot found"
    _, state, _ = await svc.tables.get(tid)
    assert state is not None
    defender = state.defender
    thrower = next(s for s in state.to_act() if s != defender)
    after_take = state.copy()
    after_take.apply(Action(defender, TAKE))
    assert [a for a in after_take.legal_actions(thrower) if a.kind == THROW]
    clock.advance(31)
    [r] = await svc.timers.tick()
    events = [(e.kind, e.seat, e.text) for e in r.events]
    assert ("auto", defender, "K") in events
    assert ("timeout", thrower, "1") not in events
    assert r.table.seats[thrower].timeouts == 0
    _table, now, _ = await svc.tables.get(tid)
    assert now is not None
    assert now.taking
    assert thrower in now.to_act()
    assert (await svc.tables.load(tid)).deadline == int((clock.now + 30) * 1000)


async def test_a_late_view_gives_the_waited_player_his_turn_again_once(
    svc: TableService, clock: FakeClock
) -> None:
    """The bot could not show a player his cards in time (his hand held back by
    the chat's flood limit, the bot's doing): his turn starts again from then,
    once a turn -- no timeout for the bot's delivery trouble, and no way to
    stall a game with it."""
    tid = await new_table(svc, 2, timer=30)
    loaded = await svc.tables.load(tid)
    assert loaded.state is not None
    leader = loaded.state.to_act()[0]
    other = 1 - leader
    leader_user, other_user = (loaded.table.seats[s].user for s in (leader, other))
    assert leader_user is not None
    assert other_user is not None
    first = loaded.deadline
    assert first == int((clock.now + 30) * 1000)
    clock.advance(20)
    assert await svc.games.view_late(tid, other_user) is None  # not his turn
    r = await svc.games.view_late(tid, leader_user)
    assert r is not None
    moved = int((clock.now + 30) * 1000)
    assert r.deadline == moved
    assert [(e.kind, e.seat, e.text) for e in r.events] == [("extend", leader, str(moved - first))]
    clock.advance(20)  # 40 s since his turn began: his first deadline is past
    assert await svc.timers.tick() == []
    assert await svc.games.view_late(tid, leader_user) is None  # once a turn
    assert (await svc.tables.load(tid)).deadline == moved
    clock.advance(11)  # now his (one) second turn is out too
    [r] = await svc.timers.tick()
    assert ("timeout", leader, "1") in [(e.kind, e.seat, e.text) for e in r.events]
    # a new turn (the timeout moved the game on): late again, moved again
    after = await svc.tables.load(tid)
    assert after.state is not None
    assert after.deadline is not None
    waited = [s for s in after.state.to_act() if after.table.seats[s].user is not None]
    user = after.table.seats[waited[0]].user
    assert user is not None
    clock.advance(5)
    again = await svc.games.view_late(tid, user)
    assert again is not None
    assert again.deadline == int((clock.now + 30) * 1000)


async def test_no_late_view_for_a_seat_the_ai_plays_or_an_untimed_game(
    svc: TableService, clock: FakeClock
) -> None:
    untimed = await new_table(svc, 2, rated=False, first_user=21)
    loaded = await svc.tables.load(untimed)
    assert loaded.state is not None
    u = loaded.table.seats[loaded.state.to_act()[0]].user
    assert u is not None
    assert await svc.games.view_late(untimed, u) is None  # no timer: nothing to move
    tid = await new_table(svc, 2, timer=30, first_user=31)
    loaded = await svc.tables.load(tid)
    assert loaded.state is not None
    seat = loaded.state.to_act()[0]
    u = loaded.table.seats[seat].user
    assert u is not None
    await svc.admin.admin_hand_to_ai(tid, seat, by="test")
    before = (await svc.tables.load(tid)).deadline
    clock.advance(10)
    assert await svc.games.view_late(tid, u) is None  # the AI plays it
    assert (await svc.tables.load(tid)).deadline == before
