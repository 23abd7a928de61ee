"""#38, the opponent-diversity guard on upgrade: ``python -m tables
migrate-ratings`` fills each player's recent opponents (``{ru:<user>}:opp``)
from the games the service recorded before the guard kept them -- so players
who met enough other people last week count against each other from the
first game after the upgrade -- by the live writer's rules (the window, the
latest few, no game whose seat the AI played at the end), once however often
it runs; on a real Redis and a cluster."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

from tables import TableService
from tables.migrate import migrate_ratings
from tables.records import GameResult
from tests.tables.conftest import FakeClock, new_table, play_out
from tests.tables.test_ratings import result
from tests.tables.test_ratings_diversity import DAY, guarded, opponents_of


def before_the_guard(make: Callable[..., TableService]) -> TableService:
    """The service as it was before the guard: no opponents kept (its games,
    results and records as ever)."""
    return make(rated_diversity_days=0)


async def finished_at(svc: TableService, tid: str) -> int:
    res = (await svc.tables.load(tid)).result
    assert res is not None
    return res.at


async def no_opponents(svc: TableService, *users: int) -> bool:
    keys = [svc.ratings.opponents_key(u) for u in users]
    there = await svc.store.run(lambda p: [p.exists(k) for k in keys])
    return not any(there)


async def test_the_migration_fills_the_opponents_of_last_week(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """Before the upgrade: 10-14 played each other 7.5 days ago; 1-5 a rated
    game 1 day ago that 5 left (the AI played his seat to the end); 1 and 2 a
    casual game after it; 7 a solo game against the AI.  Nobody's opponents
    were kept, so 1 and 2 do not count against each other.  The migration
    gives each his opponents of the last 7 days (5 met no one, the others met
    him; 10-14 nothing: too old), each at the time of his latest game with
    him -- and then 1 and 2 count against each other.  Run again, it changes
    nothing."""
    old = before_the_guard(make_service)
    new = guarded(make_service)
    await play_out(old, await new_table(old, humans=5, first_user=10), random.Random(1))
    clock.advance(6.5 * 86_400)
    rated = await new_table(old, humans=5, first_user=1)
    await old.lobbies.leave(rated, 5)
    await play_out(old, rated, random.Random(2))
    res = (await old.tables.load(rated)).result
    assert res is not None
    assert res.away == (4,)
    clock.advance(3600)
    casual = await new_table(old, humans=2, first_user=1, rated=False)
    await play_out(old, casual, random.Random(3))
    await play_out(old, await new_table(old, humans=1, ais=1, first_user=7), random.Random(4))
    clock.advance(86_400)
    now = int(clock() * 1000)
    assert await no_opponents(new, 1, 2, 3, 4, 5, 7, 10, 11)
    assert (await new.ratings.eligibility([1, 2], now)).narrow == ((1, 2),)

    report = await migrate_ratings(new)

    r1, r2 = await finished_at(old, rated), await finished_at(old, casual)
    assert await opponents_of(new, 1) == [(3, r1), (4, r1), (5, r1), (2, r2)]
    assert await opponents_of(new, 2) == [(3, r1), (4, r1), (5, r1), (1, r2)]
    assert await opponents_of(new, 3) == [(1, r1), (2, r1), (4, r1), (5, r1)]
    assert await no_opponents(new, 5, 7, 10, 11, 12, 13, 14)
    assert (report["opp_games"], report["opp_players"], report["opponents"]) == (2, 4, 16)
    assert (await new.ratings.eligibility([1, 2], now)).narrow == ()
    lobby = (await new.tables.load(await new_table(new, humans=2, start=False))).table
    assert lobby.narrow == ()
    assert lobby.rated_now
    ttl = await new.store.one(lambda p: p.pttl(new.ratings.opponents_key(1)))
    assert 5 * DAY < ttl <= 7 * DAY  # until his latest game leaves the window

    again = await migrate_ratings(new)
    assert (again["opp_players"], again["opponents"]) == (0, 0)
    assert again["opp_games"] == report["opp_games"]
    assert await opponents_of(new, 1) == [(3, r1), (4, r1), (5, r1), (2, r2)]
    assert await opponents_of(new, 3) == [(1, r1), (2, r1), (4, r1), (5, r1)]
    assert await no_opponents(new, 5, 10)


async def test_the_migration_keeps_the_live_writers_bounds(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """What the settlements since the upgrade wrote stays (a later game
    together is not moved back), at most ``diversity_keep`` opponents are
    kept (the latest), and a rated game whose record is gone is still found
    in the ratings log -- that of before the per-player slots too."""
    old = before_the_guard(make_service)
    new = guarded(make_service)
    now = int(clock() * 1000)
    keep = new.ratings.rules.diversity_keep
    for i in range(keep + 4):  # 1 met 100, 101, ... casually, oldest first
        await _record(
            old, result([1, 100 + i], [1, 2], table="c", game=i, at=now - 3 * DAY + i, rated=False)
        )
    gone = await new_table(old, humans=2, first_user=40)  # rated: its log entry stays
    await play_out(old, gone, random.Random(5))
    at = await finished_at(old, gone)
    await old.store.one(lambda p: p.delete(old.store.keys.record(gone, 1)))
    legacy = result([50, 51], [1, 2], table="legacy", at=now - DAY)
    entry = json.dumps({"g": "legacy:1", "v": "chuvash", "at": legacy.at,
                        "result": legacy.to_json()})  # fmt: skip
    await old.store.one(lambda p: p.xadd(old.ratings.legacy_log_key, {"g": entry}))
    await new.ratings.settle(result([1, 130], [1, 2], table="live", game=1, at=now + 5))
    await new.ratings.settle(result([1, 100], [1, 2], table="live", game=2, at=now + 9))

    await migrate_ratings(new)

    mine = await opponents_of(new, 1)
    assert len(mine) == keep
    assert mine[-2:] == [(130, now + 5), (100, now + 9)]  # the live writes stay
    assert [u for u, _ in mine[:-2]] == [u for u in range(105, 100 + keep + 4) if u != 130]
    assert await opponents_of(new, 40) == [(41, at)]
    assert await opponents_of(new, 51) == [(50, now - DAY)]
    again = await migrate_ratings(new)
    assert again["opponents"] == 0
    assert await opponents_of(new, 1) == mine


async def _record(svc: TableService, res: GameResult) -> None:
    """The record and the finished-games entry a finished game leaves
    (:meth:`tables.replays.Replays.save`, :meth:`tables.results.Results.record`),
    written by hand for a game not played move by move."""
    k = svc.store.keys
    blob = json.dumps({"result": res.to_json()})
    member = f"{res.table}:{res.game}:{res.variant}"
    await svc.store.run(
        lambda p: [
            p.set(k.record(res.table, res.game), blob, px=7 * DAY),
            p.zadd(k.finished, {member: res.at}),
        ]
    )
