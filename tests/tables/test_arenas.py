"""Arenas in Redis (#27, tables/arenas.py): one per group, joining and
withdrawing, the start and the end by the clock, pairing and scoring exactly
once across processes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from tables import LiveError, TableService
from tables.arena_rules import CANCELLED, FINISHED, RUNNING, SCHEDULED
from tables.records import GameResult
from tests.tables.conftest import FakeClock

CHAT = -500


def two_player_result(table: str, winner: int, loser: int) -> GameResult:
    return GameResult(
        table=table,
        game=1,
        variant="chuvash",
        chat=CHAT,
        places=(1, 2),
        loser=1,
        draw=False,
        seats=((winner, f"U{winner}"), (loser, f"U{loser}")),
        at=0,
        rated=True,
    )


async def test_create_checks_its_settings_and_keeps_one_arena_per_group(
    svc: TableService, clock: FakeClock
) -> None:
    arenas = svc.arenas
    for kwargs, code in [
        ({"variant": "poker"}, "bad_variant"),
        ({"variant": "chuvash", "seats": 1}, "bad_seats"),
        ({"variant": "chuvash", "seats": 7}, "bad_seats"),  # Chuvash: at most 6 players
        ({"variant": "chuvash", "minutes": 5}, "bad_minutes"),
        ({"variant": "chuvash", "minutes": 181}, "bad_minutes"),
        ({"variant": "chuvash", "starts": int(clock() * 1000) + 25 * 3_600_000}, "bad_start"),
    ]:
        with pytest.raises(LiveError) as e:
            await arenas.create(CHAT, 1, **kwargs)  # type: ignore[arg-type]
        assert e.value.code == code, kwargs
    a = await arenas.create(CHAT, 1, "shchelkovsky", seats=3, minutes=45)
    assert (a.status, a.seats, a.minutes, a.creator) == (SCHEDULED, 3, 45, 1)
    assert await arenas.current(CHAT) == a
    with pytest.raises(LiveError) as e:
        await arenas.create(CHAT, 2, "chuvash")
    assert e.value.code == "arena_running"
    assert e.value.info["arena"] == a.id
    clock.advance(1)
    other = await arenas.create(CHAT - 1, 2, "chuvash")  # another group: its own
    cancelled = await arenas.cancel(a.id, "by an operator")
    assert (cancelled.status, cancelled.why) == (CANCELLED, "by an operator")
    clock.advance(1)
    b = await arenas.create(CHAT, 2, "chuvash")  # the group's next one
    assert (await arenas.current(CHAT)) == b
    assert [x.id for x in await arenas.listing()] == [b.id, other.id, a.id]
    with pytest.raises(LiveError) as e:
        await arenas.get("nope")
    assert e.value.code == "no_arena"


async def test_admins_racing_to_start_one_get_one_arena(svc: TableService) -> None:
    got = await asyncio.gather(
        *(svc.arenas.create(CHAT, u, "chuvash") for u in range(1, 6)), return_exceptions=True
    )
    made = [a for a in got if not isinstance(a, BaseException)]
    refused = [e for e in got if isinstance(e, LiveError)]
    assert len(made) == 1
    assert {e.code for e in refused} <= {"arena_running", "busy"}
    assert len(refused) == 4
    assert (await svc.arenas.current(CHAT)) == made[0]


async def test_join_withdraw_and_come_back_with_the_points(
    svc: TableService, clock: FakeClock
) -> None:
    arenas = svc.arenas
    a = await arenas.create(CHAT, 1, "chuvash", minutes=30)
    for u in (1, 2):
        a = await arenas.join(a.id, u, f"U{u}", rating=1500 - u)
    again = await arenas.join(a.id, 2, "U2")  # a second tap
    assert again == a
    ticked = await arenas.tick(a.id)
    assert ticked.started
    assert len(ticked.seated) == 1
    table, users = ticked.seated[0]
    assert set(users) == {1, 2}
    scored = await arenas.record(a.id, two_player_result(table, users[0], users[1]))
    assert scored is not None
    winner = users[0]
    a = await arenas.withdraw(a.id, winner)
    p = a.player(winner)
    assert p is not None
    assert (p.withdrawn, p.score) == (True, 2)
    assert (await arenas.tick(a.id)).seated == []  # nobody to pair him with
    a = await arenas.join(a.id, winner, "Back")
    p = a.player(winner)
    assert p is not None
    assert (p.withdrawn, p.score, p.name) == (False, 2, "Back")
    with pytest.raises(LiveError) as e:
        await arenas.withdraw(a.id, 99)
    assert e.value.code == "not_in_arena"
    clock.advance(31 * 60)
    with pytest.raises(LiveError) as e:
        await arenas.join(a.id, 3, "Late")
    assert e.value.code == "arena_over"


async def test_starts_at_its_time_and_finishes_after_the_last_game(
    svc: TableService, clock: FakeClock
) -> None:
    arenas = svc.arenas
    start = int(clock() * 1000) + 600_000
    a = await arenas.create(CHAT, 1, "chuvash", minutes=20, starts=start)
    for u in (1, 2, 3, 4):
        await arenas.join(a.id, u, f"U{u}")
    t = await arenas.tick(a.id)
    assert (t.arena.status, t.seated, t.started) == (SCHEDULED, [], False)
    clock.advance(600)
    t = await arenas.tick(a.id)
    assert t.started
    assert t.arena.status == RUNNING
    assert sorted(u for _tid, users in t.seated for u in users) == [1, 2, 3, 4]
    assert (await arenas.tick(a.id)).seated == []  # all playing: nobody paired twice
    clock.advance(20 * 60)  # the end: the games running finish
    t = await arenas.tick(a.id)
    assert (t.arena.status, t.finished) == (RUNNING, False)
    first, second = t.arena.playing
    await arenas.record(a.id, two_player_result(first.table, *first.users))
    t = await arenas.tick(a.id)
    assert t.seated == []  # no pairing after the end
    assert t.arena.status == RUNNING
    await arenas.record(a.id, two_player_result(second.table, *second.users))
    t = await arenas.tick(a.id)
    assert (t.arena.status, t.finished) == (FINISHED, True)
    assert t.arena.games == 2
    assert [p.score for p in t.arena.standings()] == [2, 2, 0, 0]
    assert (await arenas.tick(a.id)).finished is False  # once


async def test_two_processes_pair_each_player_once_and_score_each_game_once(
    make_service: Callable[..., TableService],
) -> None:
    one, two = make_service(), make_service()
    a = await one.arenas.create(CHAT, 1, "chuvash", seats=2)
    await asyncio.gather(*(one.arenas.join(a.id, u, f"U{u}") for u in range(1, 21)))
    ticks = await asyncio.gather(*(s.arenas.tick(a.id) for s in (one, two, one, two)))
    seated = [users for t in ticks for _tid, users in t.seated]
    flat = [u for users in seated for u in users]
    assert sorted(flat) == list(range(1, 21))  # everyone once
    arena = await one.arenas.get(a.id)
    assert len(arena.playing) == 10
    results = [two_player_result(p.table, *p.users) for p in arena.playing]
    recorded = await asyncio.gather(
        *(s.arenas.record(a.id, r) for r in results for s in (one, two))
    )
    assert sum(r is not None for r in recorded) == 10  # each game once
    arena = await two.arenas.get(a.id)
    assert arena.games == 10
    assert arena.playing == ()
    assert sorted(p.score for p in arena.players) == [0] * 10 + [2] * 10
    games = await one.arenas.games(a.id, 0, 100)  # listed once each
    assert sorted(g["table"] for g in games) == sorted(r.table for r in results)
    assert all(g["points"] == [2, 0] and g["loser"] == g["users"][1] for g in games)


async def test_a_pairing_whose_table_never_came_frees_its_players(svc: TableService) -> None:
    a = await svc.arenas.create(CHAT, 1, "chuvash")
    for u in (1, 2):
        await svc.arenas.join(a.id, u, f"U{u}")
    (table, _users), = (await svc.arenas.tick(a.id)).seated  # fmt: skip
    freed = await svc.arenas.release(a.id, table)
    assert freed is not None
    assert all(p.waiting and p.games == 0 for p in freed.players)
    assert await svc.arenas.release(a.id, table) is None
    assert await svc.arenas.record(a.id, two_player_result(table, 1, 2)) is None


async def test_a_cancelled_arena_scores_no_game_that_ends_after_it(svc: TableService) -> None:
    """#38: the games still being played when an arena is cancelled finish as
    ordinary games: the standings stay as they were at the cancel."""
    arenas = svc.arenas
    a = await arenas.create(CHAT, 1, "chuvash", seats=2)
    for u in (1, 2, 3, 4):
        await arenas.join(a.id, u, f"U{u}")
    first, second = (await arenas.tick(a.id)).arena.playing
    assert await arenas.record(a.id, two_player_result(first.table, *first.users)) is not None
    cancelled = await arenas.cancel(a.id, "an operator")
    assert await arenas.record(a.id, two_player_result(second.table, *second.users)) is None
    after = await arenas.get(a.id)
    assert after == cancelled
    assert [p.score for p in after.standings()] == [2, 0, 0, 0]
    assert (after.games, len(await arenas.games(a.id))) == (1, 1)


async def test_a_cancel_between_the_load_and_the_write_of_a_score_wins(
    make_service: Callable[..., TableService], monkeypatch: pytest.MonkeyPatch
) -> None:
    """#38: the check that the arena still runs is made inside the score's
    compare-and-set: a cancel by another process that lands after the score
    loaded the arena makes its write stale, and the retry scores nothing."""
    one, two = make_service(), make_service()
    a = await one.arenas.create(CHAT, 1, "chuvash", seats=2)
    for u in (1, 2):
        await one.arenas.join(a.id, u, f"U{u}")
    (table, users), = (await one.arenas.tick(a.id)).seated  # fmt: skip
    write = one.arenas._write
    cancels: list[object] = []

    async def cancel_first(*args: object, **kwargs: object) -> int | None:
        if not cancels:  # the score has loaded the running arena: the cancel lands now
            cancels.append(await two.arenas.cancel(a.id, "an operator"))
        return await write(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(one.arenas, "_write", cancel_first)
    assert await one.arenas.record(a.id, two_player_result(table, *users)) is None
    after = await two.arenas.get(a.id)
    assert after.status == CANCELLED
    assert after == cancels[0]
    assert all(p.score == 0 and p.games == 0 for p in after.players)
    assert await two.arenas.games(a.id) == []
