"""An arena driven by the table service's timers (#27, tables/arena_runner.py):
its tables are ordinary rated games in its group, their results are scored
once, the players seated again, a lost table or a lost score repaired."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from tables import CANCELLED as TABLE_CANCELLED
from tables import OPEN, PLAYING, LiveError, ServiceUnavailable, TableService
from tables.arena_rules import CANCELLED, FINISHED, RUNNING, Arena
from tables.arena_runner import Woken
from tables.records import GameResult
from tables.timers import TimerHooks
from tests.tables._wire import Wire
from tests.tables.conftest import FakeClock, human_move, play_out
from tests.tables.test_ratings import cool_down

CHAT = -700


async def arena_of(svc: TableService, players: int, **kwargs: int) -> Arena:
    a = await svc.arenas.create(CHAT, 1, "chuvash", **kwargs)
    for u in range(1, players + 1):
        await svc.arenas.join(a.id, u, f"U{u}")
    return a


async def test_the_timers_start_it_and_seat_rated_games_in_the_group(
    svc: TableService, clock: FakeClock
) -> None:
    start = int(clock() * 1000) + 60_000
    a = await arena_of(svc, 6, seats=3, starts=start)
    assert await svc.timers.tick() == []  # not yet
    clock.advance(60)
    started = await svc.timers.tick()
    assert len(started) == 2
    seated: set[int] = set()
    for r in started:
        t = r.table
        assert (t.status, t.arena, t.chat, t.rated, len(t.seats)) == (PLAYING, a.id, CHAT, True, 3)
        assert t.timer == 60
        users = {s.user for s in t.seats}
        assert not users & seated
        seated |= {u for u in users if u is not None}
        for u in users:
            assert u is not None
            where = await svc.tables.where(u)
            assert where is not None
            assert where.id == t.id
    assert seated == set(range(1, 7))
    arena = await svc.arenas.get(a.id)
    assert arena.status == RUNNING
    assert {p.table for p in arena.players} == {r.table_id for r in started}


async def test_games_are_scored_once_and_the_players_seated_again(
    svc: TableService, clock: FakeClock
) -> None:
    a = await arena_of(svc, 4, seats=2)
    first = await svc.timers.tick()
    assert len(first) == 2
    rng = random.Random(27)
    for r in first:
        await play_out(svc, r.table_id, rng)
    arena = await svc.arenas.get(a.id)
    assert arena.games == 2
    assert arena.playing == ()
    assert sorted(p.score for p in arena.players) in ([0, 0, 2, 2], [1, 1, 1, 1], [0, 1, 1, 2])
    with pytest.raises(LiveError) as e:  # an arena's table has no rematch
        await svc.games.rematch(first[0].table_id, first[0].table.creator)
    assert e.value.code == "not_allowed"
    again = await svc.timers.tick()  # the scores hinted the arena: due now
    assert len(again) == 2
    before = {frozenset(s.user for s in r.table.seats) for r in first}
    after = {frozenset(s.user for s in r.table.seats) for r in again}
    assert not before & after  # nobody meets his last opponent while another waits


async def test_an_arena_table_refuses_a_rematch_and_says_why(svc: TableService) -> None:
    """#38: docs/ARENA.md -- an arena's table has no rematch.  The refusal says
    so (action ``arena_rematch``), never "once the game is over" (``rematch``,
    which the bot showed under the result), and starts nothing."""
    a = await arena_of(svc, 2, seats=2)
    [r] = await svc.timers.tick()
    for _ in range(2):  # while it is played, and once it is over
        with pytest.raises(LiveError) as e:
            await svc.games.rematch(r.table_id, r.table.creator)
        assert (e.value.code, e.value.info.get("action")) == ("not_allowed", "arena_rematch")
        assert e.value.info["arena"] == a.id
        await play_out(svc, r.table_id, random.Random(38))
    loaded = await svc.tables.load(r.table_id)
    assert (loaded.table.status, loaded.table.game_no) == ("over", 1)
    assert [await svc.tables.where(u) for u in (1, 2)] == [None, None]


async def test_a_player_seated_elsewhere_is_withdrawn_and_the_others_wait(
    svc: TableService,
) -> None:
    a = await arena_of(svc, 2, seats=2)
    other = await svc.lobbies.create_lobby(2, "U2", chat=-1)  # 2 sits in a lobby elsewhere
    assert await svc.timers.tick() == []
    arena = await svc.arenas.get(a.id)
    p1, p2 = arena.player(1), arena.player(2)
    assert p1 is not None
    assert p2 is not None
    assert (p1.waiting, p2.withdrawn) == (True, True)
    assert arena.playing == ()
    assert await svc.tables.where(1) is None  # the dropped table holds nobody
    assert (await svc.tables.where(2)) is not None
    assert (await svc.tables.where(2)).id == other.table_id  # type: ignore[union-attr]


async def test_a_cooldown_met_at_the_start_withdraws_the_player_it_names(
    svc: TableService, clock: FakeClock
) -> None:
    """#38: the second seat's cooldown refuses the game's start (it began after
    he joined the table): he is withdrawn and told (``withdrawn``), the first
    seat -- the pairing's best -- waits for the next pairing.  Before, the
    first seat was withdrawn and told he had left games unfinished."""
    a = await arena_of(svc, 2, seats=2)
    runner = svc.timers.arenas
    assert runner is not None
    cooled: list[int] = []

    async def second_cools_down(table: str, _version: int) -> None:
        loaded = await svc.tables.load(table)
        assert [s.user for s in loaded.table.seats] == [1, 2]  # 2 holds the second seat
        cooled.append(await cool_down(svc, 2, clock))

    woken = await runner.wake(a.id, before_start=second_cools_down)
    assert cooled
    assert woken.started == []
    assert woken.withdrawn == [(2, "cooldown")]
    first, second = woken.arena.player(1), woken.arena.player(2)
    assert first is not None
    assert second is not None
    assert (first.withdrawn, first.waiting, second.withdrawn) == (False, True, True)
    assert woken.arena.playing == ()
    assert await svc.tables.where(1) is None
    assert await svc.tables.where(2) is None


async def test_a_refusal_that_names_nobody_withdraws_nobody(
    svc: TableService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#38: a start refused for the table's own sake (``busy``: it was written
    too often at once) is nobody's fault: the table is dropped, its players
    wait for the next pairing, nobody is withdrawn."""
    a = await arena_of(svc, 2, seats=2)

    async def busy(table_id: str, user: int, request_id: str = "") -> Any:
        raise LiveError("busy", "the table is too busy right now; try again")

    monkeypatch.setattr(svc.games, "start", busy)
    assert svc.timers.arenas is not None
    woken = await svc.timers.arenas.wake(a.id)
    assert (woken.started, woken.withdrawn) == ([], [])
    assert all(p.waiting for p in woken.arena.players)
    assert woken.arena.playing == ()


async def test_a_table_never_made_frees_its_players_after_a_while(
    svc: TableService, clock: FakeClock
) -> None:
    a = await arena_of(svc, 2, seats=2)
    ticked = await svc.arenas.tick(a.id)  # paired, as by a process that then died
    (tid, _users), = ticked.seated  # fmt: skip
    clock.advance(30)
    assert await svc.timers.tick() == []  # not yet: its maker may still be at it
    clock.advance(60)
    [made] = await svc.timers.tick()  # released, and seated again at once
    assert made.table_id != tid
    assert {s.user for s in made.table.seats} == {1, 2}
    with pytest.raises(LiveError):
        await svc.tables.load(tid)


async def test_a_score_that_never_reached_the_arena_is_taken_from_the_result(
    svc: TableService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = await arena_of(svc, 2, seats=2)
    [r] = await svc.timers.tick()
    record = svc.arenas.record

    async def lost(arena_id: str, result: GameResult) -> Arena | None:
        raise RedisConnectionError("the arena's node went away")

    monkeypatch.setattr(svc.arenas, "record", lost)
    await play_out(svc, r.table_id, random.Random(5))  # ends: the score is lost
    monkeypatch.setattr(svc.arenas, "record", record)
    arena = await svc.arenas.get(a.id)
    assert (arena.games, len(arena.playing)) == (0, 1)
    clock.advance(61)
    again = await svc.timers.tick()  # repaired: scored from the table's result, seated again
    arena = await svc.arenas.get(a.id)
    assert arena.games == 1
    assert sum(p.score for p in arena.players) == 2  # a win and a loss, or a draw
    assert len(again) == 1


async def test_two_processes_make_each_table_once(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    one, two = make_service(), make_service()
    a = await arena_of(one, 12, seats=3)
    got = await asyncio.gather(one.timers.tick(), two.timers.tick(), one.timers.tick())
    started = [r for rs in got for r in rs]
    assert len(started) == 4
    assert len({r.table_id for r in started}) == 4
    arena = await two.arenas.get(a.id)
    assert len(arena.playing) == 4
    assert all(not p.waiting for p in arena.players)


async def test_it_finishes_after_its_end_once_the_last_game_is_over(
    svc: TableService, clock: FakeClock
) -> None:
    a = await arena_of(svc, 2, seats=2, minutes=10)
    [r] = await svc.timers.tick()
    clock.advance(10 * 60)
    for result in await svc.timers.tick():  # a turn timer ran out meanwhile
        assert result.table_id == r.table_id
    assert (await svc.arenas.get(a.id)).status == RUNNING  # its last game goes on
    await play_out(svc, r.table_id, random.Random(9))
    assert await svc.timers.tick() == []  # the score woke it: nobody is seated again
    arena = await svc.arenas.get(a.id)
    assert arena.status == FINISHED
    assert arena.games == 1


async def test_a_cancelled_arena_wakes_once_to_be_shown_then_never(
    svc: TableService, clock: FakeClock
) -> None:
    woken: list[str] = []

    async def seen(w: Woken) -> None:
        woken.append(w.arena.status)

    hooks = TimerHooks(on_arena=seen)
    a = await arena_of(svc, 1, seats=2, minutes=30)
    await svc.timers.tick(hooks=hooks)  # started: one player, nobody to pair
    woken.clear()
    await svc.arenas.cancel(a.id, "an operator")
    await svc.timers.tick(hooks=hooks)
    assert woken == ["cancelled"]  # the adapter redraws its message
    clock.advance(3600)
    await svc.timers.tick(hooks=hooks)
    assert woken == ["cancelled"]


async def test_an_outage_of_a_table_being_played_never_releases_it(
    svc: TableService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The arena's check of its tables (``repair``) meets an outage of a table's
    store (on a cluster: its master only; the arena's own slot answers): the
    table is neither released nor its players withdrawn, and the arena's wake
    comes again.  Before #38 the outage was a :class:`LiveError` ("never made,
    or long gone"): the table was released while it was played -- its result
    never scored, its players withdrawn when they were seated again."""
    a = await arena_of(svc, 2, seats=2)
    [r] = await svc.timers.tick()
    load, heads = svc.tables.load, svc.tables.heads
    asked: list[str] = []

    async def load_or_fail(table_id: str) -> Any:
        if table_id == r.table_id:
            raise ServiceUnavailable("Redis is unavailable: no answer from its master")
        return await load(table_id)

    async def heads_or_fail(table_ids: list[str], also: Any = None) -> Any:
        # #38: the check reads its tables in one pipeline: the failed master fails it
        asked.extend(table_ids)
        if r.table_id in table_ids:
            raise ServiceUnavailable("Redis is unavailable: no answer from its master")
        return await heads(table_ids, also)

    monkeypatch.setattr(svc.tables, "load", load_or_fail)
    monkeypatch.setattr(svc.tables, "heads", heads_or_fail)
    clock.advance(61)  # the table is old enough to be checked (and its turn is due)
    assert await svc.timers.tick() == []
    assert asked == [r.table_id]  # the check met the outage
    arena = await svc.arenas.get(a.id)
    assert [p.table for p in arena.playing] == [r.table_id]
    assert not any(p.withdrawn for p in arena.players)
    monkeypatch.setattr(svc.tables, "load", load)  # the node is back
    monkeypatch.setattr(svc.tables, "heads", heads)
    await play_out(svc, r.table_id, random.Random(5))
    arena = await svc.arenas.get(a.id)
    assert arena.games == 1  # its result scored
    clock.advance(svc.config.timer_lease + 0.1)  # the arena's wake comes again
    [again] = await svc.timers.tick()
    assert {s.user for s in again.table.seats} == {1, 2}


async def test_a_lost_group_stops_its_arena_and_games_once_charging_nobody(
    svc: TableService, clock: FakeClock
) -> None:
    """#38: the bot removed from the group (or the group upgraded): the arena
    is cancelled, its games and the group's other tables stopped without a
    result -- nobody rated, no offence, no cooldown -- and a second call (the
    other update, another process) finds nothing left to do."""
    a = await arena_of(svc, 4, seats=2)
    started = await svc.timers.tick()
    assert len(started) == 2
    rng = random.Random(38)
    for _ in range(3):  # a few moves into the first game
        await human_move(svc, started[0].table_id, rng)
    lobby = await svc.lobbies.create_lobby(9, "Lobbyist", chat=CHAT, variant="chuvash")
    elsewhere = await svc.lobbies.create_lobby(8, "Other", chat=CHAT - 1, variant="chuvash")

    closed = await svc.groups.close(CHAT, "removed")

    assert closed.arena is not None
    assert closed.arena.status == CANCELLED
    assert sorted(t.id for t in closed.stopped) == sorted(
        [*(r.table_id for r in started), lobby.table_id]
    )
    assert closed.players() == [1, 2, 3, 4, 9]
    arena = await svc.arenas.get(a.id)
    assert (arena.status, arena.playing, arena.games) == (CANCELLED, (), 0)
    for r in started:
        loaded = await svc.tables.load(r.table_id)
        assert (loaded.table.status, loaded.table.stopped, loaded.result) == (
            TABLE_CANCELLED,
            "removed",
            None,
        )
    for u in (1, 2, 3, 4, 9):
        assert await svc.tables.where(u) is None
        mine = await svc.ratings.of(u)
        assert (mine.offences, mine.cooldown_until, mine.recent) == (0, None, 0)
    assert (await svc.lobbies.lobby(elsewhere.table_id)).status == OPEN  # another group's
    assert await svc.timers.tick() == []  # nobody seated again
    again = await svc.groups.close(CHAT, "removed")
    assert (again.arena, again.stopped, again.anything) == (None, [], False)


# ---------------------------------------------------------------- #38: scale


async def test_a_join_beyond_the_cap_is_refused_and_a_returning_player_is_not(
    svc: TableService,
) -> None:
    """#38: an arena takes 200 players (``LiveConfig.arena_max_players``); the
    201st is refused in the join's own compare-and-set, with the cap; a player
    who withdrew comes back all the same.  Before, there was no cap: every
    join, pairing and score reads and writes the whole record."""
    assert svc.config.arena_max_players == 200
    a = await svc.arenas.create(CHAT, 1, "chuvash", seats=2)
    for u in range(1, 201):
        await svc.arenas.join(a.id, u, f"U{u}")
    with pytest.raises(LiveError) as e:
        await svc.arenas.join(a.id, 201, "U201")
    assert (e.value.code, e.value.info.get("limit")) == ("arena_full", 200)
    await svc.arenas.withdraw(a.id, 7)
    back = await svc.arenas.join(a.id, 7, "U7")  # his place is his
    assert len(back.players) == 200
    p7 = back.player(7)
    assert p7 is not None
    assert not p7.withdrawn
    with pytest.raises(LiveError):
        await svc.arenas.join(a.id, 202, "U202")
    assert (await svc.arenas.get(a.id)).player(202) is None


async def test_the_cap_is_a_setting(make_service: Callable[..., TableService]) -> None:
    small = make_service(arena_max_players=3)
    a = await arena_of(small, 3, seats=2)
    with pytest.raises(LiveError) as e:
        await small.arenas.join(a.id, 4, "U4")
    assert (e.value.code, e.value.info.get("limit")) == ("arena_full", 3)


async def seat_tables(svc: TableService, chat: int, first: int, tables: int) -> Arena:
    """An arena of ``2 * tables`` players (ids from ``first``) with every table seated."""
    a = await svc.arenas.create(chat, first, "chuvash", seats=2)
    for u in range(first, first + 2 * tables):
        await svc.arenas.join(a.id, u, f"U{u}")
    for _ in range(tables):
        await svc.timers.tick()
        arena = await svc.arenas.get(a.id)
        if len(arena.playing) == tables:
            return arena
    raise AssertionError("the arena never seated everybody")


async def test_a_wake_costs_the_same_round_trips_with_ten_or_forty_tables(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """#38: a wake of an arena whose tables were all seated a minute ago costs
    the same round trips with 10 tables or 40 -- its tables are checked in one
    pipeline (one round trip per node) -- and the next wake checks none again
    until ``repair_after`` has passed.  Counted on the wire: what the
    service's client really sends (tests/tables/_wire.py), on one server and
    on a cluster.  Before: one round trip per table at every wake (a join, a
    scored game) -- the square of the players."""
    wire = Wire()
    svc = make_service(wire=wire)
    runner = svc.timers.arenas
    assert runner is not None
    small = await seat_tables(svc, CHAT, 1, 10)
    large = await seat_tables(svc, CHAT - 1, 1001, 40)
    clock.advance(61)  # every table is due for its check
    cost: dict[int, int] = {}
    reads: dict[int, int] = {}
    for n, arena in ((10, small), (40, large)):
        await runner.wake(arena.id)  # a first wake: its scripts loaded, its slots learned
        clock.advance(61)
        wire.reset()
        woken = await runner.wake(arena.id)
        assert (woken.repaired, woken.started) == (0, [])  # all being played
        cost[n] = wire.trips
        reads[n] = len([c for c in wire.named("HMGET", "HGETALL") if "{t:" in c[1]])
        assert reads[n] == n  # each table read once, all in one pipeline
        wire.reset()
        await runner.wake(arena.id)  # at once again (another join, another score)
        assert [c for c in wire.named("HMGET", "HGETALL") if "{t:" in c[1]] == []
    nodes = 3 if svc.store.cluster else 1
    assert cost[40] <= cost[10] + nodes - 1, cost
    assert cost[40] <= 4 + nodes, cost


async def test_a_wake_seats_a_bounded_number_of_tables_the_rest_at_the_next_tick(
    svc: TableService,
) -> None:
    """#38: 40 free players, 20 tables to seat: one wake seats and makes at most
    ``tables_per_wake`` (16), the others at the next timer tick -- the timers
    are never held for a whole large pairing.  Before: all 20 in one wake."""
    assert svc.arenas.config.tables_per_wake == 16
    a = await arena_of(svc, 40, seats=2)
    first = await svc.timers.tick()
    assert len(first) == 16
    arena = await svc.arenas.get(a.id)
    assert len(arena.playing) == 16
    assert len([p for p in arena.players if p.waiting]) == 8
    second = await svc.timers.tick()  # due again at once
    assert len(second) == 4
    seated = {s.user for r in first + second for s in r.table.seats}
    assert seated == set(range(1, 41))


async def test_an_outage_of_the_arena_at_its_wake_is_never_taken_for_gone(
    svc: TableService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The arena's own store fails at its wake (#38, point 10: on a cluster, the
    master of its slot): the tick goes on, and the wake comes again a moment
    later -- it seats its players then.  Were the outage a :class:`LiveError`
    ("the arena is gone") its timer would be dropped, and the arena would never
    seat anyone again."""
    a = await arena_of(svc, 2, seats=2)
    runner = svc.timers.arenas
    assert runner is not None
    wake = runner.wake
    down = [True]

    async def wake_or_fail(arena_id: str, before_start: Any = None) -> Any:
        if down[0]:
            raise ServiceUnavailable("Redis is unavailable: no answer from its master")
        return await wake(arena_id, before_start)

    monkeypatch.setattr(runner, "wake", wake_or_fail)
    assert await svc.timers.tick() == []  # nothing seated, nothing raised
    down[0] = False  # the node is back (or its replica promoted)
    clock.advance(svc.config.timer_lease + 1.1)  # the wake is due again
    [started] = await svc.timers.tick()
    arena = await svc.arenas.get(a.id)
    assert [p.table for p in arena.playing] == [started.table_id]
