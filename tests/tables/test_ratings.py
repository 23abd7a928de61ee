"""Ratings, reliability and cooldowns (#25) on a real Redis (one server and a
cluster): a finished game is settled once whatever the retries or processes,
the ratings log replays to the stored ratings exactly, the farming guard, the
cooldown's escalation by the game's clock, reliability."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from collections.abc import Callable

import pytest

from tables import GameResult, LiveError, TableService
from tables.ratings import (
    DEFAULT_SIGMA,
    PROVISIONAL_SIGMA,
    Rating,
    RatingRules,
    ranks,
    rate,
    shown,
)
from tests.tables.conftest import FakeClock, new_table, play_out

T0 = 1_700_000_000_000
HOUR = 3_600_000


def result(
    users: list[int | None],
    places: list[int],
    *,
    table: str = "tbl",
    game: int = 1,
    variant: str = "chuvash",
    at: int = T0,
    rated: bool = True,
    away: tuple[int, ...] = (),
    taken: tuple[int, ...] = (),
    draw: bool = False,
) -> GameResult:
    loser = None if draw else places.index(max(places))
    return GameResult(
        table=table,
        game=game,
        variant=variant,
        chat=-100,
        places=tuple(places),
        loser=loser,
        draw=draw,
        seats=tuple((u, f"U{u}") for u in users),
        at=at,
        rated=rated,
        away=away,
        taken=taken,
    )


# ------------------------------------------------------------------ the maths


def test_ranks_put_who_walked_away_last_and_tie_a_draw() -> None:
    r = result([1, 2, 3, 4], [1, 2, 3, 4], away=(0,), taken=(0,))
    assert ranks(r) == {0: 5, 1: 2, 2: 3, 3: 4}  # out first, but he left: last
    d = result([1, 2, 3], [1, 3, 3], draw=True)
    assert ranks(d) == {0: 1, 1: 3, 2: 3}
    ai = result([1, None, 3], [2, 1, 3])
    assert ranks(ai) == {0: 2, 2: 3}  # an AI seat has no rank


def test_shown_is_conservative_and_new_players_are_provisional() -> None:
    new = Rating()
    assert new.shown == 1000  # mu - 3 sigma = 0
    assert new.provisional
    assert shown(25.0, 2.0) > shown(25.0, 5.0)  # less doubt, higher figure
    assert shown(-100.0, 8.0) == 0
    after = rate([Rating(), Rating()], [1, 2])
    assert after[0].mu > 25 > after[1].mu
    assert after[0].sigma < DEFAULT_SIGMA
    assert after[0].games == after[1].games == 1
    settled = Rating(25.0, PROVISIONAL_SIGMA - 0.01, 30)
    assert not settled.provisional


def test_cooldown_escalates_and_is_capped() -> None:
    rules = RatingRules()
    assert [rules.cooldown(n) for n in (1, 2, 3, 4)] == [0.0, 600.0, 1800.0, 5400.0]
    assert rules.cooldown(30) == 3 * 86400.0


# ------------------------------------------------------------------ settling


async def test_a_game_moves_ratings_once_whatever_the_retries(
    make_service: Callable[..., TableService],
) -> None:
    a, b = make_service(), make_service()  # two processes, one Redis
    r = result([11, 12, 13], [2, 1, 3])
    firsts = await asyncio.gather(*(svc.ratings.settle(r) for svc in (a, b, a, b)))
    assert all(s == firsts[0] for s in firsts)
    s = firsts[0]
    assert s is not None
    assert s.counted
    by = {c.user: c for c in s.changes}
    assert by[12].delta > by[11].delta > by[13].delta  # first out gains most
    mine = await a.ratings.of(12)
    assert mine.ratings["chuvash"].games == 1
    assert mine.reliability == 1.0
    assert mine.recent == 1
    assert len(await a.ratings.log_entries()) == 1
    assert await b.ratings.settlement("tbl", 1) == s
    assert len(await a.ratings.history(12)) == 1


async def test_a_finished_game_is_settled_by_the_move_that_ends_it(svc: TableService) -> None:
    seed = random.randrange(2**62)
    print("seed", seed)
    tid = await new_table(svc, humans=3)
    await play_out(svc, tid, random.Random(seed))
    table, state, _ = await svc.tables.get(tid)
    assert state is not None
    assert state.over
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted, s
    assert {c.user for c in s.changes} == {1, 2, 3}
    if state.loser is not None:
        loser = table.seats[state.loser].user
        assert min(s.changes, key=lambda c: c.delta).user == loser
    assert (await svc.ratings.recompute()).mismatches == ()


@pytest.mark.parametrize(
    ("players", "seed", "policy", "places"),
    [(2, 71, 0, (1, 1)), (3, 137, 0, (2, 2, 1))],  # found by playing the policy on the engine
)
async def test_a_draws_players_share_a_rank_and_move_alike(
    svc: TableService, players: int, seed: int, policy: int, places: tuple[int, ...]
) -> None:
    """#38: a rated game played to a draw through the table service -- the
    players still holding cards in its last bout share a place and a rank, and
    their ratings move alike; one out before them keeps his better place."""
    svc.games.new_seed = lambda: seed
    tid = await new_table(svc, humans=players)
    while True:  # each move a function of the state alone (forced passes are the service's)
        table, state, version = await svc.tables.get(tid)
        assert state is not None
        if state.over:
            break
        seat = min(state.to_act())
        action = random.Random(f"{policy}:{state.ply}").choice(state.legal_actions(seat))
        user = table.seats[seat].user
        assert user is not None
        await svc.games.apply(tid, user, action.text(), version)
    assert state.draw
    res = (await svc.tables.load(tid)).result
    assert res is not None
    assert res.places == places
    assert ranks(res) == dict(enumerate(places))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted
    tied = [table.seats[i].user for i, p in enumerate(places) if p == max(places)]
    after = await svc.ratings.many([u for u in tied if u is not None], "chuvash")
    assert len(after) == 2
    a, b = after.values()
    assert (a.mu, a.sigma) == (b.mu, b.sigma)  # both new: the same rank, the same move
    deltas = {c.delta for c in s.changes if c.user in after}
    assert len(deltas) == 1
    if players == 3:  # out first, before the draw's last bout: he gains most
        first = next(c for c in s.changes if c.seat == places.index(1))
        assert first.delta > deltas.pop()
    assert (await svc.ratings.recompute()).mismatches == ()


async def test_casual_games_and_ai_seats_move_no_rating(svc: TableService) -> None:
    casual = await svc.ratings.settle(result([1, 2], [1, 2], rated=False))
    assert casual is not None
    assert not casual.counted
    assert casual.why == "casual"
    tid = await new_table(svc, humans=2, ais=1)
    await play_out(svc, tid, random.Random(3))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert not s.counted
    assert s.why == "ai_seat"
    assert (await svc.ratings.of(1)).ratings == {}  # no rating yet
    assert (await svc.ratings.of(1)).recent == 2  # both games count for reliability
    assert await svc.ratings.log_entries() == []


async def test_a_game_everyone_walked_away_from_counts_for_no_one(svc: TableService) -> None:
    r = result([1, 2], [1, 2], away=(0, 1), taken=(0, 1))
    s = await svc.ratings.settle(r)
    assert s is not None
    assert not s.counted
    assert s.why == "abandoned"
    assert s.offences == {}
    me = await svc.ratings.of(1)
    assert me.ratings == {}
    assert me.reliability == 0.0  # he still walked away
    assert me.offences == 0


async def test_the_same_two_count_at_most_pair_daily_games_a_day(svc: TableService) -> None:
    svc.ratings.rules = RatingRules(pair_daily=3)
    got = []
    for g in range(5):
        s = await svc.ratings.settle(result([1, 2], [1, 2], game=g, at=T0 + g * HOUR))
        assert s is not None
        got.append(s.counted)
    assert got == [True, True, True, False, False]
    assert (await svc.ratings.settlement("tbl", 4)).why == "pair_limit"  # type: ignore[union-attr]
    assert (await svc.ratings.of(1)).ratings["chuvash"].games == 3
    # a third player's game with one of them counts; a day after the first, they count again
    other = await svc.ratings.settle(result([1, 3], [1, 2], game=9, at=T0 + 5 * HOUR))
    assert other is not None
    assert other.counted
    later = await svc.ratings.settle(result([1, 2], [2, 1], game=10, at=T0 + 24 * HOUR + 1))
    assert later is not None
    assert later.counted
    assert (await svc.ratings.recompute()).mismatches == ()


async def test_walking_away_from_rated_games_escalates_the_cooldown(svc: TableService) -> None:
    """The clock is the games' own: offences at hours 0, 1, 2, 3 -> a warning,
    then 10, 30, 90 minutes; one 73 hours after the last starts over."""
    cools = []
    for g in range(4):
        at = T0 + g * HOUR
        r = result([1, 2, 3], [3, 1, 2], game=g, at=at, away=(0,), taken=(0,))
        s = await svc.ratings.settle(r)
        assert s is not None
        assert s.counted
        assert set(s.offences) == {1}  # only the one who walked away
        cools.append(s.offences[1])
    assert cools == [0.0, 600.0, 1800.0, 5400.0]
    me = await svc.ratings.of(1)
    assert me.offences == 4
    # the cooldown key lives in real time on Redis: its end is the game's clock + 90 min
    assert me.cooldown_until == T0 + 3 * HOUR + 5400 * 1000
    assert (await svc.ratings.of(2)).cooldown_until is None
    # after the window, the first offence is a warning again
    at = T0 + 3 * HOUR + 73 * HOUR
    s = await svc.ratings.settle(result([1, 2], [2, 1], game=20, at=at, away=(0,), taken=(0,)))
    assert s is not None
    assert s.offences == {1: 0.0}
    # an operator's takeover (away, not taken) is no offence; casual games never are
    s = await svc.ratings.settle(result([1, 2], [2, 1], game=21, at=at + 1, away=(0,)))
    assert s is not None
    assert s.offences == {}
    s = await svc.ratings.settle(
        result([1, 2], [2, 1], game=22, at=at + 2, rated=False, away=(0,), taken=(0,))
    )
    assert s is not None
    assert s.offences == {}
    assert (await svc.ratings.of(1)).offences == 1  # the old ones are forgotten
    assert await svc.ratings.lift_cooldown(1) is True
    assert (await svc.ratings.of(1)).offences == 0
    assert await svc.ratings.lift_cooldown(1) is False  # nothing left to lift


async def test_an_operators_takeover_is_no_offence_of_his(
    svc: TableService, clock: FakeClock
) -> None:
    """#38: an operator hands a player's seat to the AI through the admin part's
    own path, and the rated game ends with the AI on it: counted, but no
    offence, no cooldown, no reliability hit for that player -- even with an
    offence of his just before, which a second would turn into a cooldown."""
    now = int(clock() * 1000)
    before = result([1, 99], [2, 1], table="before", at=now, away=(0,), taken=(0,))
    assert (await svc.ratings.settle(before)).offences == {1: 0.0}  # type: ignore[union-attr]
    tid = await new_table(svc, humans=2)
    await svc.admin.admin_hand_to_ai(tid, 0, by="ops")
    await play_out(svc, tid, random.Random(5))
    res = (await svc.tables.load(tid)).result
    assert res is not None
    assert res.away == (0,)  # the AI still played his seat at the end
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    # his seat not ranked, one player left to rank: nobody's rating moves (#38)
    assert (s.counted, s.why) == (False, "operator")
    assert s.offences == {}
    assert await svc.ratings.cooldown(1) is None
    me = await svc.ratings.of(1)
    assert me.offences == 1  # the one before only
    assert me.cooldown_until is None
    assert (me.recent, me.reliability) == (2, 0.5)  # this game kept his record clean


async def test_the_offences_shown_are_those_of_the_last_72_hours(
    svc: TableService, clock: FakeClock
) -> None:
    """#38: the count /rating and the admin API show (``Ratings.of``) drops an
    offence once it is older than the window by the service's clock, as the
    cooldown does -- not only when a newer offence trims the key."""
    now = int(clock() * 1000)
    for g in range(2):
        r = result([1, 2], [2, 1], game=g, at=now + g * HOUR, away=(0,), taken=(0,))
        await svc.ratings.settle(r)
    assert (await svc.ratings.of(1)).offences == 2
    clock.advance(72 * 3600)  # the first one is 72 h old: out of the window
    assert (await svc.ratings.of(1)).offences == 1
    clock.advance(3600)
    assert (await svc.ratings.of(1)).offences == 0
    assert (await svc.ratings.of(2)).offences == 0


async def test_lifting_a_cooldown(svc: TableService) -> None:
    for g in range(2):
        r = result([1, 2], [2, 1], game=g, at=T0 + g, away=(0,), taken=(0,))
        await svc.ratings.settle(r)
    assert await svc.ratings.cooldown(1) == T0 + 1 + 600_000
    assert await svc.ratings.lift_cooldown(1) is True
    assert await svc.ratings.cooldown(1) is None
    assert (await svc.ratings.of(1)).offences == 0


async def test_reliability_is_the_share_of_the_last_twenty_games(svc: TableService) -> None:
    for g in range(25):
        walked = g < 5  # the five oldest: the AI took his seat (he came back each time)
        r = result([1, 2], [1, 2], game=g, at=T0 + g * 25 * HOUR, taken=(0,) if walked else ())
        await svc.ratings.settle(r)
    me = await svc.ratings.of(1)
    assert me.recent == 20
    assert me.reliability == 1.0
    for g in range(25, 30):
        r = result([1, 2], [1, 2], game=g, at=T0 + g * 25 * HOUR, taken=(0,))
        await svc.ratings.settle(r)
    me = await svc.ratings.of(1)
    assert me.reliability == 15 / 20
    assert me.offences == 0  # he came back: taken, never away at the end


@pytest.mark.slow
async def test_recomputing_from_the_log_gives_the_stored_ratings(
    make_service: Callable[..., TableService],
) -> None:
    """1,000 random games (an hour apart) of 2-6 of 30 players, both variants, draws, walkaways,
    casual ones, settled eight at a time from two processes (their reads race;
    the compare-and-set keeps each player's order): replaying the log from the
    defaults lands on every stored rating to the last bit."""
    seed = random.randrange(2**62)
    print("seed", seed)
    rng = random.Random(seed)
    procs = [make_service(), make_service()]
    games = []
    for g in range(1000):
        n = rng.randint(2, 6)
        users: list[int | None] = list(rng.sample(range(1, 31), n))
        order = list(range(1, n + 1))
        rng.shuffle(order)
        draw = rng.random() < 0.05
        if draw:  # the last two tie
            order = [min(k, n - 1) for k in order]
        away = tuple(s for s in range(n) if rng.random() < 0.05)
        games.append(
            result(
                users,
                order,
                game=g,
                variant=rng.choice(["chuvash", "shchelkovsky"]),
                at=T0 + g * HOUR,  # the farming guard seldom bites
                rated=rng.random() < 0.9,
                away=away,
                taken=away,
                draw=draw,
            )
        )
    counted = 0
    for i in range(0, len(games), 8):
        batch = games[i : i + 8]
        done = await asyncio.gather(*(procs[k % 2].ratings.settle(r) for k, r in enumerate(batch)))
        counted += sum(1 for s in done if s is not None and s.counted)
    again = await procs[0].ratings.recompute()
    assert again.games == counted
    assert counted > 700
    assert again.players == 30
    assert again.mismatches == ()
    # a rating written around the log is caught
    await procs[0].store.one(
        lambda p: p.hset(procs[0].ratings.rating_key(7), "chuvash", Rating(30.0, 5.0, 1).to_json())
    )
    assert [m[:2] for m in (await procs[0].ratings.recompute()).mismatches] == [(7, "chuvash")]


async def test_a_game_the_ending_process_could_not_settle_is_swept_later(
    svc: TableService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def down(*_a: object, **_k: object) -> None:
        raise LiveError("unavailable", "Redis is down")

    tid = await new_table(svc, humans=2)
    with monkeypatch.context() as m:
        m.setattr(svc.ratings, "settle", down)
        await play_out(svc, tid, random.Random(8))  # the move that ended it is not refused
    assert await svc.ratings.settlement(tid, 1) is None
    assert await svc.tables.settle_finished() == 0  # not 30 s old yet
    clock.advance(31)
    assert await svc.tables.settle_finished() == 1
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted
    assert await svc.tables.settle_finished() == 0  # once


async def test_the_recompute_command_reports_the_replay(
    svc: TableService, redis_url: str, redis_prefix: str, live_url: str
) -> None:
    """``python -m tables recompute-ratings`` (one server): exit 0 and the figures
    when the stored ratings are reproduced, 1 with the mismatch when not."""
    if live_url != redis_url:
        pytest.skip("the command's own client: one server is enough")
    for g in range(3):
        await svc.ratings.settle(result([1, 2, 3], [1, 2, 3], game=g, at=T0 + g * HOUR))
    args = ["recompute-ratings", "--redis", redis_url, "--prefix", redis_prefix]
    done = await asyncio.to_thread(run_command, args)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"games": 3, "players": 3, "mismatches": []}
    await svc.store.one(
        lambda p: p.hset(svc.ratings.rating_key(2), "chuvash", Rating(1.0, 1.0, 3).to_json())
    )
    done = await asyncio.to_thread(run_command, args)
    assert done.returncode == 1
    assert [m["user"] for m in json.loads(done.stdout)["mismatches"]] == [2]


def run_command(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tables", *args], capture_output=True, text=True, timeout=120
    )


async def cool_down(svc: TableService, user: int, clock: FakeClock, minutes: int = 10) -> int:
    """Two walkaways of ``user`` from rated games just now: the cooldown they set
    (``minutes``: 10 after none before)."""
    now = int(clock() * 1000)
    for g in range(2):
        r = result([user, 99], [2, 1], table=f"gone{now}", game=g, at=now, away=(0,), taken=(0,))
        await svc.ratings.settle(r)
    until = await svc.ratings.cooldown(user)
    assert until == now + minutes * 60_000
    return until


async def test_a_cooldown_keeps_him_from_rated_games_only(
    svc: TableService, clock: FakeClock
) -> None:
    """#25: while his cooldown lasts he may not join a rated lobby nor start a
    rated game (told when it ends); a casual lobby takes him; a rematch with him
    goes on casual; once it is over, rated games are open to him again."""
    until = await cool_down(svc, 3, clock)
    rated = await new_table(svc, humans=2, start=False)
    with pytest.raises(LiveError) as e:
        await svc.lobbies.join(rated, 3, "U3")
    assert e.value.code == "cooldown"
    assert e.value.info["until"] == until
    assert e.value.info["left"] == 600
    casual = await new_table(svc, humans=1, start=False, first_user=10)
    await svc.lobbies.configure(casual, 10, rated=False)
    await svc.lobbies.join(casual, 3, "U3")  # casual: never blocked
    await svc.lobbies.configure(casual, 10, rated=True)  # the owner turns it rated
    with pytest.raises(LiveError) as e:
        await svc.games.start(casual, 10)
    assert e.value.code == "cooldown"
    assert e.value.info["name"] == "U3"
    await svc.lobbies.configure(casual, 10, rated=False)
    await svc.games.start(casual, 10)
    await play_out(svc, casual, random.Random(1))
    # a rated match whose rematch meets his cooldown: casual, not refused
    clock.advance(601)
    await svc.lobbies.join(rated, 3, "U3")
    await svc.games.start(rated, 1)
    table, _s, _v = await svc.tables.get(rated)
    assert table.rated_now
    labels = await svc.ratings.labels([1, 2, 3], table.variant)
    assert [s.rating for s in table.seats] == [labels[1], labels[2], labels[3]]
    assert labels[3] != "1000?"  # the two games he walked away from, ranked last
    await play_out(svc, rated, random.Random(2))
    assert (await svc.ratings.settlement(rated, 1)).counted  # type: ignore[union-attr]
    await cool_down(svc, 3, clock, 90)  # two more walkaways elsewhere: 30, then 90 min
    for user in (3, 2, 1):  # #38: it starts once all three said yes
        await svc.games.rematch(rated, user)
    table, _s, _v = await svc.tables.get(rated)
    assert not table.rated
    await play_out(svc, rated, random.Random(3))
    s = await svc.ratings.settlement(rated, 2)
    assert s is not None
    assert s.why == "casual"


@pytest.mark.parametrize("by", ["ops", "bot:forbidden:blocked"])
async def test_an_operators_takeover_never_moves_his_rating_a_block_does(
    svc: TableService, clock: FakeClock, by: str
) -> None:
    """#38: an operator hands a player's seat to the AI and the AI plays it to
    the end: that game never moves his rating (before: he ranked last, a rating
    loss for the operator's act); the other two are rated among themselves.
    The bot's takeover after he blocked it is his own act: he ranks last.
    Either way the log replays to the stored ratings."""
    tid = await new_table(svc, humans=3)
    await svc.admin.admin_hand_to_ai(tid, 0, by=by)
    await play_out(svc, tid, random.Random(7))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted
    mine = s.change_of(1)
    assert mine is not None
    others = [s.change_of(u) for u in (2, 3)]
    assert all(c is not None and c.after != c.before for c in others)
    me = (await svc.ratings.of(1)).ratings.get("chuvash")
    if by == "ops":
        assert mine.after == mine.before  # not ranked
        assert me is None or me.games == 0
    else:
        assert mine.after < mine.before  # he walked away: last
        assert me is not None
        assert me.games == 1
    again = await svc.ratings.recompute()
    assert again.mismatches == ()
