"""#38 point 21: each player's rating data in his own slot (a cluster spreads
them), the ratings log bounded, a solo game against the AI writes no rating
data, and whatever the log kept still replays to the stored ratings -- on a
real Redis and a cluster."""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from typing import Any

import pytest
from redis.crc import key_slot

from tables import TableService
from tables.ratings import Rating, rate
from tests.tables.conftest import FakeClock, new_table, play_out
from tests.tables.test_ratings import HOUR, T0, result, run_command


async def every_key(svc: TableService) -> list[str]:
    """Every key under the test's prefix (each node of a cluster)."""
    out: list[str] = []
    async for k in svc.store.r.scan_iter(match=f"{svc.config.prefix}*", count=500):
        out.append(k.decode() if isinstance(k, bytes) else k)
    return sorted(set(out))


async def test_two_players_rating_data_lives_in_different_slots(svc: TableService) -> None:
    """All of a player's rating data -- rating, reliability, history, offences,
    cooldown, his settled games, his pairs -- shares one slot, his own; the one
    slot all players share holds only the leaderboards."""
    for g in range(2):  # he walks away twice: offences and a cooldown too
        await svc.ratings.settle(
            result([1, 2, 3], [3, 1, 2], game=g, at=T0 + g, away=(0,), taken=(0,))
        )
    keys = await every_key(svc)
    slots: dict[int, set[int]] = {}
    for user in (1, 2, 3):
        mine = [k for k in keys if f"{{ru:{user}}}" in k]
        assert any(k.endswith(":r") for k in mine)
        assert any(k.endswith(":h") for k in mine)
        assert any(":pair:" in k for k in mine) or user == 3  # his pairs: in the lower one's slot
        slots[user] = {key_slot(k.encode()) for k in mine}
        assert len(slots[user]) == 1, mine
    assert len(slots[1] | slots[2] | slots[3]) == 3
    shared = [k for k in keys if "{rt}" in k]
    assert shared, keys
    assert all(k.rsplit(":", 2)[-2] in ("top", "new", "brev") for k in shared), shared
    assert (await svc.ratings.cooldown(1)) is not None
    assert (await svc.ratings.recompute()).mismatches == ()


async def test_the_log_is_bounded_and_what_it_keeps_replays(
    make_service: Callable[..., TableService],
) -> None:
    """``MAXLEN ~``: a stream keeps about ``rating_log_maxlen`` entries (a
    whole node of 100 at least); recompute-ratings replays what is kept, each
    player from the ratings his oldest kept entry records, and lands on every
    stored rating."""
    svc = make_service(rating_log_maxlen=10)
    rng = random.Random(5)
    for g in range(400):
        users: list[int | None] = list(rng.sample(range(1, 9), 3))
        order = [1, 2, 3]
        rng.shuffle(order)
        await svc.ratings.settle(result(users, order, table="one", game=g, at=T0 + g * HOUR))
    key = svc.ratings.log_key_of(svc.ratings.log_shard("one"))
    length = await svc.store.one(lambda p: p.xlen(key))
    assert 10 <= length < 400 - 100
    again = await svc.ratings.recompute()
    assert again.mismatches == ()
    assert again.games == length
    # a rating written around the log is still caught
    await svc.store.one(
        lambda p: p.hset(svc.ratings.rating_key(3), "chuvash", Rating(30.0, 5.0, 1).to_json())
    )
    assert [m[:2] for m in (await svc.ratings.recompute()).mismatches] == [(3, "chuvash")]


async def test_a_solo_game_against_the_ai_writes_no_rating_data(
    svc: TableService, clock: FakeClock
) -> None:
    tid = await new_table(svc, humans=1, ais=2)
    await play_out(svc, tid, random.Random(11))
    assert (await svc.tables.load(tid)).result is not None
    assert await svc.ratings.settlement(tid, 1) is None
    keys = await every_key(svc)
    rating = [k for k in keys if "{ru:" in k or "{rt}" in k or "{rl:" in k]
    assert rating == []
    assert (await svc.ratings.of(1)).recent == 0  # no reliability mark either
    clock.advance(60)
    assert await svc.tables.settle_finished() == 0  # the sweep has nothing to settle


async def test_a_settlement_interrupted_after_its_plan_is_completed_by_the_next(
    make_service: Callable[..., TableService], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exactly once across slots: a process commits a game's plan and dies
    before applying it; a game of one of its players, settled by another
    process, completes the first one (his part and the rest) before its own;
    a retry of the first changes nothing; the log replays."""
    a, b = make_service(), make_service()
    first = result([1, 2], [1, 2], table="x", game=1)

    async def die(plan: Any) -> Any:
        raise ConnectionError("the process died")

    monkeypatch.setattr(a.ratings, "_complete", die)
    with pytest.raises(ConnectionError):
        await a.ratings.settle(first)
    monkeypatch.undo()
    assert await b.ratings.settlement("x", 1) is None
    second = await b.ratings.settle(result([2, 3], [1, 2], table="y", game=1, at=T0 + 1))
    assert second is not None
    assert second.counted
    done = await b.ratings.settlement("x", 1)
    assert done is not None
    assert done.counted
    assert (await b.ratings.of(2)).ratings["chuvash"].games == 2
    again = await asyncio.gather(a.ratings.settle(first), b.ratings.settle(first))
    assert list(again) == [done, done]
    assert (await b.ratings.of(2)).ratings["chuvash"].games == 2
    out = await b.ratings.recompute()
    assert (out.games, out.mismatches) == (2, ())


async def test_an_attempt_given_up_before_its_plan_frees_its_players(
    make_service: Callable[..., TableService], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process holds a player for a game and dies before its plan: once its
    lease ran out, another game of that player takes him over; the first game,
    tried again, is settled after it, from his newer rating."""
    a, b = make_service(), make_service()
    b.ratings.rules = a.ratings.rules = type(a.ratings.rules)(lease=0.2)
    first = result([1, 2], [1, 2], table="x", game=1)

    async def die(*_a: Any, **_k: Any) -> Any:
        raise ConnectionError("the process died")

    monkeypatch.setattr(a.ratings, "_complete", die)
    real = a.ratings._game

    async def no_commit(keys: list[str], args: list[Any]) -> Any:
        if args[0] == "commit":
            raise ConnectionError("the process died")
        return await real(keys, args)

    monkeypatch.setattr(a.ratings, "_game", no_commit)
    with pytest.raises(ConnectionError):
        await a.ratings.settle(first)
    monkeypatch.undo()
    second = await b.ratings.settle(result([2, 3], [1, 2], table="y", game=1, at=T0 + 1))
    assert second is not None
    assert second.counted
    assert await b.ratings.settlement("x", 1) is None  # taken over, not completed
    late = await a.ratings.settle(first)
    assert late is not None
    assert late.counted
    assert (await b.ratings.of(2)).ratings["chuvash"].games == 2
    assert (await b.ratings.recompute()).mismatches == ()


async def test_data_of_before_the_per_player_slots_is_migrated(
    svc: TableService, live_url: str, redis_url: str
) -> None:
    """``python -m tables migrate-ratings`` (here its function): the keys of
    the one ``{rt}`` slot are moved into each player's slot once; a game
    settled there is not settled again; the old log still replays first."""
    if live_url != redis_url:
        pytest.skip("the old layout is written by hand: one server is enough")
    from tables.migrate import migrate_ratings

    old = f"{svc.config.prefix}{{rt}}"
    a1, a2 = rate([Rating(), Rating()], [1, 2])
    entry = json.dumps(
        {
            "g": "old:1",
            "v": "chuvash",
            "at": T0,
            "result": result([1, 2], [1, 2], table="old").to_json(),
        }
    )
    settled = {"table": "old", "game": 1, "variant": "chuvash", "counted": True}
    await svc.store.run(
        lambda p: [
            p.hset(f"{old}:r:1", mapping={"chuvash": a1.to_json(), "rev": 1, "name": "U1"}),
            p.hset(f"{old}:r:2", mapping={"chuvash": a2.to_json(), "rev": 1, "name": "U2"}),
            p.lpush(f"{old}:rel:1", "1"),
            p.lpush(f"{old}:h:1", json.dumps({"at": T0 - 5 * 86_400_000, "game": 1})),
            p.zadd(f"{old}:pair:1:2", {"old:1": T0}),
            p.hset(f"{old}:g:old:1", mapping={"s": json.dumps(settled)}),
            p.xadd(f"{old}:log", {"g": entry}),
        ]
    )
    report = await migrate_ratings(svc)
    assert report == {"players": 2, "pairs": 1, "games": 1, "log": 1,
                      "opp_games": 1, "opp_players": 2, "opponents": 2}  # fmt: skip
    assert (await migrate_ratings(svc))["players"] == 0  # once
    me = await svc.ratings.of(1)
    assert me.ratings["chuvash"] == a1
    assert me.recent == 1
    assert len(await svc.ratings.history(1)) == 1
    first, played = await svc.store.one(
        lambda p: p.hmget(svc.ratings.rating_key(1), "first", "played")
    )
    assert (int(first), int(played)) == (T0 - 5 * 86_400_000, 1)
    pair = await svc.store.one(lambda p: p.zcard(f"{svc.config.prefix}{{ru:1}}:pair:2"))
    assert pair == 1
    again = await svc.ratings.settle(result([1, 2], [1, 2], table="old", game=1))
    assert again is not None
    assert (await svc.ratings.of(1)).ratings["chuvash"] == a1  # not counted twice
    await svc.ratings.settle(result([1, 2], [2, 1], table="new", game=1, at=T0 + HOUR))
    out = await svc.ratings.recompute()
    assert (out.games, out.mismatches) == (2, ())
    assert not [k for k in await every_key(svc) if f"{old}:r:" in k]  # moved, not copied


async def test_the_migrate_command_reports_what_it_moved(
    svc: TableService, redis_url: str, redis_prefix: str, live_url: str
) -> None:
    """``python -m tables migrate-ratings`` (one server): exit 0 and what it
    moved and filled (#38: the opponents of a game of 4 and 5 an hour ago,
    by its record); nothing the second time."""
    if live_url != redis_url:
        pytest.skip("the command's own client: one server is enough")
    old = f"{redis_prefix}{{rt}}"
    await svc.store.one(lambda p: p.hset(f"{old}:r:4", mapping={"rev": 1, "name": "U4"}))
    at = int(time.time() * 1000) - HOUR  # the command's clock is the real one
    game = result([4, 5], [1, 2], table="cmd", at=at, rated=False)
    k = svc.store.keys
    await svc.store.run(
        lambda p: [
            p.set(k.record("cmd", 1), json.dumps({"result": game.to_json()})),
            p.zadd(k.finished, {"cmd:1:chuvash": at}),
        ]
    )
    args = ["migrate-ratings", "--redis", redis_url, "--prefix", redis_prefix]
    done = await asyncio.to_thread(run_command, args)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"players": 1, "pairs": 0, "games": 0, "log": 0,
                                       "opp_games": 1, "opp_players": 2, "opponents": 2}  # fmt: skip
    assert (await svc.ratings.of(4)).name == "U4"
    assert await svc.ratings.opponents(4, at) == {5}
    again = json.loads((await asyncio.to_thread(run_command, args)).stdout)
    assert (again["players"], again["opp_players"], again["opponents"]) == (0, 0, 0)


async def test_the_service_upgrades_older_ratings_once_at_its_start(
    svc: TableService, redis_prefix: str, live_url: str, redis_url: str
) -> None:
    """#38: the bot's start (``BotApp.wait_for_redis``) calls
    ``TableService.upgrade``: a player's rating data of before the per-player
    slots is moved on the first call; a mark spares every later start the scan,
    so data written in the old layout afterwards (none is: nothing writes it)
    would not be looked for again."""
    if live_url != redis_url:
        pytest.skip("the old layout is written by hand: one server is enough")
    old = f"{redis_prefix}{{rt}}"
    await svc.store.one(lambda p: p.hset(f"{old}:r:7", mapping={"rev": 1, "name": "U7"}))
    first = await svc.upgrade()
    assert first is not None
    assert first["players"] == 1
    assert (await svc.ratings.of(7)).name == "U7"
    await svc.store.one(lambda p: p.hset(f"{old}:r:8", mapping={"rev": 1, "name": "U8"}))
    assert await svc.upgrade() is None  # marked: not scanned again
    assert (await svc.ratings.of(8)).name != "U8"
