"""The table service's parts, each built alone over one store (no facade): what
``TableService`` composes is usable -- and testable -- piece by piece."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, replace

import pytest
import redis.asyncio as aredis

from tables import LiveConfig, LiveError
from tables.arena_runner import ArenaRunner
from tables.games import Games
from tables.keys import Keys
from tables.lobbies import Lobbies
from tables.records import GameResult
from tables.results import Results
from tables.scripts import RECORDED_GAMES
from tables.store import Store
from tables.tables import Tables
from tables.timers import Timers
from tests.tables.conftest import FakeClock


@dataclass
class Parts:
    store: Store
    results: Results
    tables: Tables
    games: Games
    lobbies: Lobbies
    timers: Timers


@pytest.fixture
async def parts(redis_url: str, config: LiveConfig, clock: FakeClock) -> AsyncIterator[Parts]:
    client = aredis.Redis.from_url(redis_url)
    store = Store(client, Keys(config.prefix))
    results = Results(store, config)
    tables = Tables(store, results, config, clock)
    games = Games(tables, config)
    lobbies = Lobbies(tables, games)
    timers = Timers(tables, games, ArenaRunner(tables, lobbies, games), config, clock)
    yield Parts(store, results, tables, games, lobbies, timers)
    await store.aclose()


async def test_a_games_follow_up_retried_after_the_next_game_counts_it_once(
    parts: Parts,
) -> None:
    """A finished game's follow-up is tried again until it went through (#38):
    after an outage its retry can come once the player finished another game
    -- it counted the first game twice (the script remembered only the last
    game counted; found by the fair-play property, seed 5)."""
    first = GameResult(
        table="T1",
        game=1,
        variant="chuvash",
        chat=-100,
        places=(1, 2),
        loser=1,
        draw=False,
        seats=((7, "Ann"), (8, "Bob")),
        at=1_700_000_000_000,
    )
    other = replace(first, table="T2", places=(2, 1), loser=0, at=1_700_000_100_000)
    await parts.results.record(first)
    await parts.results.record(other)
    await parts.results.record(first)  # the retry
    ann = (await parts.results.user_stats(7)).counts["chuvash"]
    assert (ann["games"], ann["p1"], ann["p2"], ann["losses"]) == (2, 1, 1, 1)
    board = await parts.results.leaderboard(-100)
    assert [(e.user, e.games, e.losses) for e in board] == [(7, 2, 1), (8, 2, 1)]
    for n in range(3, 3 + RECORDED_GAMES):  # a long row of games later: still once
        await parts.results.record(replace(first, game=n))
    await parts.results.record(replace(first, game=3 + RECORDED_GAMES - 1))
    games = (await parts.results.user_stats(7)).counts["chuvash"]["games"]
    assert games == 2 + RECORDED_GAMES


async def test_results_alone_count_a_finished_game(parts: Parts) -> None:
    result = GameResult(
        table="T1",
        game=1,
        variant="chuvash",
        chat=-100,
        places=(1, 2),
        loser=1,
        draw=False,
        seats=((7, "Ann"), (8, "Bob")),
        at=1_700_000_000_000,
    )
    await parts.results.record(result)
    ann = (await parts.results.user_stats(7)).counts["chuvash"]
    bob = (await parts.results.user_stats(8)).counts["chuvash"]
    assert (ann["games"], ann.get("losses", 0), ann["p1"]) == (1, 0, 1)
    assert (bob["games"], bob["losses"], bob["p2"]) == (1, 1, 1)
    board = await parts.results.leaderboard(-100)
    assert [(e.user, e.games, e.losses) for e in board] == [(7, 1, 0), (8, 1, 1)]
    assert [e.name for e in board] == ["Ann", "Bob"]
    # the same result again (a round trip retried after a lost reply): counted once
    await parts.results.record(result)
    assert (await parts.results.user_stats(7)).counts["chuvash"] == ann
    assert [(e.user, e.games) for e in await parts.results.leaderboard(-100)] == [(7, 1), (8, 1)]
    await parts.results.record(replace(result, game=2))  # the next game counts
    assert (await parts.results.user_stats(7)).counts["chuvash"]["games"] == 2


async def test_lobbies_and_games_alone_seat_players_and_start(parts: Parts) -> None:
    made = await parts.lobbies.create_lobby(1, "Ann", chat=-5, variant="chuvash", timer=30)
    tid = made.table_id
    joined = await parts.lobbies.join(tid, 2, "Bob")
    again = await parts.lobbies.join(tid, 2, "Bob")  # seated already: nothing written
    assert again.version == joined.version
    with pytest.raises(LiveError, match="only a seated player"):
        await parts.games.start(tid, 99)
    started = await parts.games.start(tid, 1)
    loaded = await parts.tables.load(tid)
    assert loaded.version == started.version
    assert loaded.state is not None
    assert [s.user for s in loaded.table.seats] == [1, 2]
    assert loaded.deadline == int((parts.tables.clock() + 30) * 1000)


async def test_timers_alone_move_for_a_player_who_let_his_turn_expire(
    parts: Parts, clock: FakeClock
) -> None:
    made = await parts.lobbies.create_lobby(1, "Ann", variant="chuvash", timer=30)
    await parts.lobbies.join(made.table_id, 2, "Bob")
    started = await parts.games.start(made.table_id, 1)
    assert await parts.timers.tick() == []  # nothing due yet
    clock.advance(31)
    moved = await parts.timers.tick()
    assert [w.table_id for w in moved] == [made.table_id]
    assert moved[0].version > started.version
