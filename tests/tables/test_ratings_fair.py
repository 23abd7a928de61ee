"""#38 point 4, read as a cheater would: the farming guard stops only the
capped pair's result against each other (a third player's game still
counts), it is read at the rated start so the table says it from the first
move, and a new account's games count for no one until it is established --
on a real Redis and a cluster."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

from tables import TableService
from tables.ratings import Rating, rate
from tests.tables.conftest import FakeClock, new_table, play_out
from tests.tables.test_ratings import HOUR, T0, result

DAY = 86_400_000


async def test_a_capped_pair_voids_only_its_own_result(svc: TableService) -> None:
    """Farm pair 1-2 at the guard; a 3-player game of 1, 2 and 3: 3 is rated
    against both, 1 and 2 each against 3 only -- as if the other were not
    there --; the pair's counter does not move, the two others' do."""
    svc.ratings.rules = replace(svc.ratings.rules, pair_daily=2)
    for g in range(2):
        s = await svc.ratings.settle(result([1, 2], [1, 2], game=g, at=T0 + g * HOUR))
        assert s is not None
        assert s.counted
    before = await svc.ratings.many([1, 2, 3], "chuvash")
    s = await svc.ratings.settle(result([1, 2, 3], [1, 2, 3], game=5, at=T0 + 5 * HOUR))
    assert s is not None
    assert s.counted, s
    assert s.capped == ((0, 1),)
    after = await svc.ratings.many([1, 2, 3], "chuvash")
    b1, b2, b3 = before[1], before[2], before[3]
    assert after[3] == rate([b1, b2, b3], [1, 2, 3])[2]  # the third: the whole game
    assert after[1] == rate([b1, b3], [1, 3])[0]  # 1 against 3 only
    assert after[2] == rate([b2, b3], [2, 3])[0]
    assert {c.user for c in s.changes} == {1, 2, 3}
    pair = svc.ratings._pair_key
    counts = await svc.store.run(
        lambda p: [p.zcard(pair(1, 2)), p.zcard(pair(1, 3)), p.zcard(pair(2, 3))]
    )
    assert counts == [2, 1, 1]
    # a game of the capped pair alone moves no one
    alone = await svc.ratings.settle(result([2, 1], [1, 2], game=6, at=T0 + 6 * HOUR))
    assert alone is not None
    assert not alone.counted
    assert alone.why == "pair_limit"
    assert (await svc.ratings.recompute()).mismatches == ()


async def test_the_guard_is_read_at_the_start_and_the_lobby_knows(svc: TableService) -> None:
    """The pair's count is read when a player joins and again inside the
    start: the table carries the capped pair from the first move, a lobby of
    only that pair would be casual, and the game's settlement agrees."""
    svc.ratings.rules = replace(svc.ratings.rules, pair_daily=1)
    tid = await new_table(svc, humans=2)
    await play_out(svc, tid, random.Random(4))
    first = await svc.ratings.settlement(tid, 1)
    assert first is not None
    assert first.counted
    tid = await new_table(svc, humans=2, start=False)
    lobby = (await svc.tables.load(tid)).table
    assert lobby.capped == ((1, 2),)
    assert not lobby.rated_now  # only the capped pair: casual, and it says why
    await svc.lobbies.join(tid, 3, "U3")
    lobby = (await svc.tables.load(tid)).table
    assert lobby.rated_now
    await svc.games.start(tid, 1)
    playing = (await svc.tables.load(tid)).table
    assert playing.capped == ((1, 2),)
    assert playing.rated_now
    await play_out(svc, tid, random.Random(6))
    res = (await svc.tables.load(tid)).result
    assert res is not None
    assert res.capped == ((1, 2),)
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted
    assert s.capped == ((0, 1),)
    assert {c.user for c in s.changes} == {1, 2, 3}


async def test_a_new_accounts_game_is_casual_until_it_is_established(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """A fresh second account (2) with an established one (1): the lobby and
    the table say 2 is new, the game moves no rating (neither his nor 1's);
    once he finished enough games and the days passed, his games count."""
    svc = make_service(rated_after_games=2, rated_after_days=1)
    now = int(clock() * 1000)
    for g in range(2):  # 1 played two games with others three days ago
        await svc.ratings.settle(result([1, 50], [1, 2], table="past", game=g, at=now - 3 * DAY, rated=False))  # fmt: skip
    tid = await new_table(svc, humans=2, start=False)
    lobby = (await svc.tables.load(tid)).table
    assert lobby.fresh == (2,)
    assert not lobby.rated_now
    await svc.games.start(tid, 1)
    assert (await svc.tables.load(tid)).table.fresh == (2,)
    await play_out(svc, tid, random.Random(9))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert not s.counted
    assert s.why == "new_players"
    assert s.offences == {}
    assert (await svc.ratings.of(1)).ratings == {}
    assert (await svc.ratings.of(2)).recent == 1  # his game still counts for reliability
    # a third, established player: 1 and 3 rate each other, 2 moves no one
    for g in range(2):
        await svc.ratings.settle(result([3, 50], [1, 2], table="p3", game=g, at=now - 3 * DAY, rated=False))  # fmt: skip
    tid = await new_table(svc, humans=3, start=False)
    assert (await svc.tables.load(tid)).table.fresh == (2,)
    await svc.games.start(tid, 1)
    await play_out(svc, tid, random.Random(10))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted
    assert s.fresh == (1,)
    assert {c.user for c in s.changes if c.moved} == {1, 3}
    assert {c.user for c in s.changes} == {1, 2, 3}  # listed, unchanged
    assert (await svc.ratings.of(2)).ratings == {}
    # two games with others and a day later, 2's games count
    clock.advance(86_400 + 1)
    tid = await new_table(svc, humans=2, start=False)
    assert (await svc.tables.load(tid)).table.fresh == ()
    await svc.games.start(tid, 1)
    await play_out(svc, tid, random.Random(12))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted
    assert isinstance((await svc.ratings.of(2)).ratings["chuvash"], Rating)
    assert (await svc.ratings.recompute()).mismatches == ()
