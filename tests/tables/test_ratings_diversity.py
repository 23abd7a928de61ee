"""#38, the opponent-diversity guard, read as a cheater would: two players'
rated result counts against each other only if each finished games with at
least ``rated_diversity_opponents`` other people besides the other one in the
last ``rated_diversity_days`` -- so a second account that only ever plays its
main feeds it nothing, even within the pair cap.  Read at the start (the
lobby and the table say it), kept in the result and the log (a recompute
replays it), each player's opponents kept in his own slot with his part of
the settlement -- on a real Redis and a cluster."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterable
from typing import Any

import pytest

from tables import TableService
from tables.games import timeout_move
from tables.ratings import Rating, ranks, rate
from tests.tables.conftest import FakeClock, new_table, play_out
from tests.tables.test_ratings import HOUR, T0, result

DAY = 86_400_000


def guarded(make: Callable[..., TableService], **overrides: Any) -> TableService:
    """A service with the guard as deployed: 3 other people in 7 days."""
    return make(**{"rated_diversity_opponents": 3, "rated_diversity_days": 7, **overrides})


async def met(svc: TableService, user: int, others: Iterable[int], at: int) -> None:
    """``user`` finished a casual game with each of ``others`` at ``at``."""
    for o in others:
        await svc.ratings.settle(
            result([user, o], [1, 2], table=f"met{user}x{o}", game=1, at=at, rated=False)
        )


async def play(svc: TableService, tid: str, rng: random.Random, losers: Iterable[int] = ()) -> None:
    """The humans move until the game ends; ``losers`` lose on purpose (take
    every attack, pass every throw-in, lead the lowest card)."""
    lose = set(losers)
    while True:
        table, state, version = await svc.tables.get(tid)
        assert state is not None
        if state.over:
            return
        seat = min(s for s in state.to_act() if not table.seats[s].ai_controlled)
        user = table.seats[seat].user
        assert user is not None
        if user in lose:
            action = timeout_move(state, seat)
        else:
            action = rng.choice(state.legal_actions(seat))
        await svc.games.apply(tid, user, action.text(), version)


async def opponents_of(svc: TableService, user: int) -> list[tuple[int, int]]:
    key = svc.ratings.opponents_key(user)
    raw = await svc.store.one(lambda p: p.zrange(key, 0, -1, withscores=True))
    return [(int(m), int(s)) for m, s in raw]


async def test_a_second_account_that_only_plays_its_main_feeds_it_nothing(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """Main (1, who plays other people too) and his second account (2, who
    plays no one else) -- both established --: 2 loses every game on purpose,
    as many as the pair cap allows.  The lobby says the two do not count
    against each other, and no game moves a rating."""
    svc = guarded(make_service)
    now = int(clock() * 1000)
    await met(svc, 1, [10, 11, 12], at=now - DAY)
    for g in range(svc.ratings.rules.pair_daily):
        tid = await new_table(svc, humans=2, start=False)
        lobby = (await svc.tables.load(tid)).table
        assert lobby.narrow == ((1, 2),)
        assert not lobby.rated_now  # only the narrow pair: casual, and it says why
        await svc.games.start(tid, 1)
        assert (await svc.tables.load(tid)).table.narrow == ((1, 2),)
        await play(svc, tid, random.Random(g), losers=[2])
        res = (await svc.tables.load(tid)).result
        assert res is not None
        assert res.narrow == ((1, 2),)
        s = await svc.ratings.settlement(tid, 1)
        assert s is not None
        assert not s.counted
        assert s.why == "pair_diversity"
        assert s.offences == {}
        clock.advance(600)
    assert (await svc.ratings.of(1)).ratings == {}  # main gained nothing
    assert (await svc.ratings.of(2)).ratings == {}
    assert await svc.ratings.opponents(2, int(clock() * 1000)) == {1}
    assert await svc.ratings.opponents(1, int(clock() * 1000)) == {2, 10, 11, 12}
    assert (await svc.ratings.log_entries()) == []


async def test_an_honest_player_counts_against_a_diverse_opponent(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """1 played three other people; 2 only two: their pair does not count,
    nor after a game of theirs (the other one of the pair is not one of the
    three); once 2 played a third other person this week, it counts."""
    svc = guarded(make_service)
    now = int(clock() * 1000)
    await met(svc, 1, [10, 11, 12], at=now - 6 * DAY)
    await met(svc, 2, [20, 21], at=now - DAY)
    tid = await new_table(svc, humans=2)
    assert (await svc.tables.load(tid)).table.narrow == ((1, 2),)
    await play_out(svc, tid, random.Random(1))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.why == "pair_diversity"
    assert await svc.ratings.opponents(2, now) == {1, 20, 21}  # 1 himself does not help
    tid = await new_table(svc, humans=2, start=False)
    assert (await svc.tables.load(tid)).table.narrow == ((1, 2),)
    await svc.lobbies.cancel(tid, 1)
    await met(svc, 2, [22], at=now)
    tid = await new_table(svc, humans=2, start=False)
    lobby = (await svc.tables.load(tid)).table
    assert lobby.narrow == ()
    assert lobby.rated_now
    await svc.games.start(tid, 1)
    await play_out(svc, tid, random.Random(2))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted, s
    assert s.narrow == ()
    assert {c.user for c in s.changes if c.moved} == {1, 2}
    # a day later 1's three others are more than 7 days old: the pair is out again
    clock.advance(2 * 86_400)
    tid = await new_table(svc, humans=2, start=False)
    assert (await svc.tables.load(tid)).table.narrow == ((1, 2),)
    assert (await svc.ratings.recompute()).mismatches == ()


async def test_a_narrow_pair_voids_only_its_own_result(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """A 3-player table where only the pair 1-2 is short of other opponents
    (2 played 1 and two others): 3 is rated against both, 1 and 2 each
    against 3 only, as if the other were not there; only the counted pairs'
    counters move, and the recompute replays the decision the log recorded."""
    svc = guarded(make_service)
    now = int(clock() * 1000)
    await met(svc, 1, [10, 11, 12, 2], at=now - DAY)
    await met(svc, 2, [40, 41], at=now - DAY)
    await met(svc, 3, [30, 31, 32], at=now - DAY)
    tid = await new_table(svc, humans=3, start=False)
    lobby = (await svc.tables.load(tid)).table
    assert lobby.narrow == ((1, 2),)
    assert lobby.rated_now
    await svc.games.start(tid, 1)
    before = await svc.ratings.many([1, 2, 3], "chuvash")
    await play_out(svc, tid, random.Random(7))
    res = (await svc.tables.load(tid)).result
    assert res is not None
    assert res.narrow == ((1, 2),)
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted, s
    assert s.narrow == ((0, 1),)
    assert s.capped == ()
    assert {c.user for c in s.changes if c.moved} == {1, 2, 3}
    o = ranks(res)
    after = await svc.ratings.many([1, 2, 3], "chuvash")
    b1, b2, b3 = before[1], before[2], before[3]
    assert after[3] == rate([b1, b2, b3], [o[0], o[1], o[2]])[2]  # the whole game
    assert after[1] == rate([b1, b3], [o[0], o[2]])[0]  # 1 against 3 only
    assert after[2] == rate([b2, b3], [o[1], o[2]])[0]  # 2 against 3 only
    pair = svc.ratings._pair_key
    counts = await svc.store.run(
        lambda p: [p.zcard(pair(1, 2)), p.zcard(pair(1, 3)), p.zcard(pair(2, 3))]
    )
    assert counts == [0, 1, 1]
    assert (await svc.ratings.recompute()).mismatches == ()
    # the log keeps the decision: replayed without it, 1 and 2 would differ
    [entry] = await svc.ratings.log_entries()
    assert entry["result"]["narrow"] == [[1, 2]]


async def test_a_retried_settlement_adds_no_opponent_twice(
    make_service: Callable[..., TableService], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The opponents are written with each player's part, once: a plan whose
    process died is completed by another game's settlement, then retried by
    both processes and applied again part by part -- each player's opponents
    are those of his games, each at the time of the latest, and his games
    with other people counted once each."""
    a, b = guarded(make_service), guarded(make_service)
    first = result([1, 2], [1, 2], table="x", game=1, at=T0)
    plans: list[Any] = []

    async def die(plan: Any) -> Any:
        plans.append(plan)
        raise ConnectionError("the process died")

    monkeypatch.setattr(a.ratings, "_complete", die)
    with pytest.raises(ConnectionError):
        await a.ratings.settle(first)
    monkeypatch.undo()
    later = await b.ratings.settle(result([1, 3], [1, 2], table="y", game=1, at=T0 + HOUR))
    assert later is not None
    again = await asyncio.gather(a.ratings.settle(first), b.ratings.settle(first))
    assert again[0] == again[1]
    await b.ratings._complete(plans[0])  # every part once more: each answers "dup"
    assert await opponents_of(b, 1) == [(2, T0), (3, T0 + HOUR)]
    assert await opponents_of(b, 2) == [(1, T0)]
    assert await opponents_of(b, 3) == [(1, T0 + HOUR)]
    played = await b.store.run(
        lambda p: [p.hget(b.ratings.rating_key(u), "played") for u in (1, 2)]
    )
    assert [int(x) for x in played] == [2, 1]
    assert (await b.ratings.recompute()).mismatches == ()


async def test_the_opponents_kept_are_bounded_and_recent(
    make_service: Callable[..., TableService],
) -> None:
    """At most ``diversity_keep`` of them (the latest), none older than the
    window, the key expiring; a player who walked away from a game met no
    one in it (the others met him)."""
    svc = guarded(make_service)
    keep = svc.ratings.rules.diversity_keep
    for i in range(keep + 8):
        await svc.ratings.settle(result([1, 100 + i], [1, 2], table="b", game=i, at=T0 + i))
    mine = await opponents_of(svc, 1)
    assert [u for u, _ in mine] == [100 + i for i in range(8, keep + 8)]
    ttl = await svc.store.one(lambda p: p.pttl(svc.ratings.opponents_key(1)))
    assert 0 < ttl <= 7 * DAY
    late = T0 + 8 * DAY
    await svc.ratings.settle(result([1, 200], [1, 2], table="c", game=1, at=late))
    assert await opponents_of(svc, 1) == [(200, late)]
    await svc.ratings.settle(
        result([1, 300], [1, 2], table="c", game=2, at=late + 1, away=(0,), taken=(0,))
    )
    assert await svc.ratings.opponents(1, late + 1) == {200}
    assert await svc.ratings.opponents(300, late + 1) == {1}


async def test_the_guard_set_to_0_is_off(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """``RATED_DIVERSITY_OPPONENTS=0``: the same farming counts (within the
    pair cap); ``RATED_DIVERSITY_DAYS=0``: nor is any opponent kept."""
    svc = guarded(make_service, rated_diversity_opponents=0)
    tid = await new_table(svc, humans=2)
    assert (await svc.tables.load(tid)).table.narrow == ()
    await play(svc, tid, random.Random(3), losers=[2])
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted
    assert (await svc.ratings.of(1)).ratings["chuvash"].mu > Rating().mu
    off = guarded(make_service, rated_diversity_days=0)
    tid = await new_table(off, humans=2, first_user=5)
    assert (await off.tables.load(tid)).table.narrow == ()
    await play(off, tid, random.Random(4), losers=[6])
    s = await off.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted
    there = await off.store.run(lambda p: [p.exists(off.ratings.opponents_key(u)) for u in (5, 6)])
    assert there == [0, 0]
