"""AI levels in the table service (issue 15): the lobby's level, the search AI
in a process pool (another process, the same move as inline), the fallback to
the heuristic when a worker dies, and the compare-and-set that keeps a move
thought out on an old state from being written."""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Callable

import pytest

from engine import Action, GameState, new_game
from engine.ai import HeuristicPlayer
from tables import LiveError, PoolDecider, StaleVersion, Table, TableService
from tables.deciders import FALLBACK_KIND, Decider, InlineDecider, choose
from tables.model import DEFAULT_AI
from tests.tables.conftest import FakeClock

SEED = 1515


def seed_where(variant: str, players: int, first: int) -> int:
    """A shuffle seed whose first game waits for ``first`` alone."""
    for seed in range(SEED, SEED + 500):
        if new_game(variant, players, seed).to_act() == [first]:
            return seed
    raise AssertionError("no such seed")


def busy_state() -> tuple[GameState, int]:
    """A state where the search has a real choice (several candidates)."""
    state = new_game("chuvash", 3, SEED)
    seat = state.to_act()[0]
    return state, seat


async def test_the_pool_decides_in_another_process_as_inline() -> None:
    state, seat = busy_state()
    pool = PoolDecider(1)
    try:
        seed = f"{SEED}:{state.ply}:{seat}"
        action = await pool.decide("search", seed, state, seat)
        assert pool.last_pid is not None
        assert pool.last_pid != os.getpid()
        assert pool.pooled == 1
        assert action == choose("search", seed, state, seat)  # the same move as inline
        pid = pool.last_pid
        await pool.decide("heuristic", seed, state, seat)  # cheap kinds stay inline
        assert (pool.pooled, pool.last_pid) == (1, pid)
    finally:
        pool.close()


async def test_a_dead_worker_falls_back_to_the_heuristic_and_the_pool_is_rebuilt() -> None:
    state, seat = busy_state()
    seed = f"{SEED}:{state.ply}:{seat}"
    pool = PoolDecider(1)
    try:
        await pool.decide("search", seed, state, seat)
        dead = pool.last_pid
        assert dead is not None
        os.kill(dead, signal.SIGKILL)  # the worker crashes (OOM killer, a bug)
        action = await pool.decide("search", seed, state, seat)
        assert pool.fallbacks == 1
        assert (
            action
            == HeuristicPlayer(seed).choose(state, seat)
            == choose(FALLBACK_KIND, seed, state, seat)
        )
        again = await pool.decide("search", seed, state, seat)  # a new pool, a new worker
        assert pool.last_pid not in (None, dead, os.getpid())
        assert again == choose("search", seed, state, seat)
        assert (pool.pooled, pool.fallbacks) == (2, 1)
    finally:
        pool.close()
    assert await pool.decide("search", seed, state, seat) is not None  # closed: inline
    assert pool.pooled == 2


async def test_the_lobby_level_sets_its_ai_seats(svc: TableService) -> None:
    r = await svc.lobbies.create_lobby(1, "Ann", timer=0)
    tid = r.table_id
    assert r.table.ai_kind == DEFAULT_AI == "heuristic"
    await svc.lobbies.add_ai(tid, 1)
    r = await svc.lobbies.configure(tid, 1, ai_kind="search")
    assert r.table.ai_kind == "search"
    assert [s.ai for s in r.table.seats] == [None, "search"]  # the seat there plays it too
    r = await svc.lobbies.add_ai(tid, 1)
    assert [s.ai for s in r.table.seats] == [None, "search", "search"]
    r = await svc.lobbies.add_ai(tid, 1, "easy")  # an explicit kind (the admin API) wins
    assert [s.ai for s in r.table.seats] == [None, "search", "search", "easy"]
    r = await svc.lobbies.configure(tid, 1, timer=30)  # another setting keeps the seats' kinds
    assert [s.ai for s in r.table.seats] == [None, "search", "search", "easy"]
    before = await svc.tables.get(tid)
    with pytest.raises(LiveError) as e:
        await svc.lobbies.configure(tid, 1, ai_kind="genius")
    assert e.value.code == "bad_settings"
    assert await svc.tables.get(tid) == before  # nothing changed
    with pytest.raises(LiveError) as e:
        await svc.lobbies.create_lobby(2, "Bob", ai_kind="genius")
    assert e.value.code == "bad_settings"
    assert await svc.tables.where(2) is None
    hard = await svc.lobbies.create_lobby(2, "Bob", ai_kind="search")
    assert hard.table.ai_kind == "search"


def test_a_table_stored_before_the_levels_loads() -> None:
    old: dict[str, object] = {
        "id": "T",
        "c": None,
        "cr": 1,
        "va": "chuvash",
        "o": {},
        "mx": 6,
        "ti": 60,
        "se": [[1, "Ann", None, 0, 0], [None, "AI 1", "heuristic", 0, 0]],
        "st": "open",
        "p": 1,
        "g": 0,
        "sd": 0,
        "pl": None,
        "ct": 0,
        "ut": 0,
    }  # the JSON of a table written before issue 15 (no "ai")
    table = Table.from_json(json.dumps(old))
    assert table.ai_kind == DEFAULT_AI
    assert Table.from_json(table.to_json()) == table


async def play_human(svc: TableService, tid: str, user: int) -> int:
    """The human plays heuristic moves until the game is over; his moves."""
    moves = 0
    while True:
        table, state, version = await svc.tables.get(tid)
        assert state is not None
        if state.over:
            return moves
        seat = table.seat_of(user)
        assert seat is not None
        assert seat in state.to_act(), "the game waits for the AI"
        action = HeuristicPlayer(moves).choose(state, seat)
        assert action is not None
        await svc.games.apply(tid, user, action, version)
        moves += 1


@pytest.mark.slow
async def test_a_hard_ai_game_plays_to_the_end_in_the_pool(
    make_service: Callable[..., TableService],
) -> None:
    pool = PoolDecider(1)
    svc = make_service()
    svc.use_decider(pool)
    try:
        r = await svc.lobbies.create_lobby(1, "Ann", timer=0, ai_kind="search")
        await svc.lobbies.add_ai(r.table_id, 1)
        svc.games.new_seed = lambda: SEED
        await svc.games.start(r.table_id, 1)
        assert await play_human(svc, r.table_id, 1) > 0
        table, state, _v = await svc.tables.get(r.table_id)
        assert state is not None
        assert state.over
        assert table.status == "over"
        assert pool.pooled > 0
        assert pool.fallbacks == 0
        assert pool.last_pid not in (None, os.getpid())
    finally:
        pool.close()


class Recorder:
    """Inline decisions, remembering the kinds asked for."""

    def __init__(self) -> None:
        self.kinds: list[str] = []

    async def decide(self, kind: str, seed: str, state: GameState, seat: int) -> Action | None:
        self.kinds.append(kind)
        return choose(kind, seed, state, seat)

    def close(self) -> None:
        return None


async def test_with_no_human_left_the_hard_ai_plays_fast(svc: TableService) -> None:
    recorder = Recorder()
    svc.use_decider(recorder)
    r = await svc.lobbies.create_lobby(1, "Ann", timer=0, ai_kind="search")
    await svc.lobbies.add_ai(r.table_id, 1)
    await svc.lobbies.add_ai(r.table_id, 1)
    svc.games.new_seed = lambda: seed_where("chuvash", 3, 0)
    await svc.games.start(r.table_id, 1)
    assert recorder.kinds == []  # the game waits for Ann
    await svc.lobbies.leave(r.table_id, 1)  # the rest of the game: AIs alone
    _t, state, _v = await svc.tables.get(r.table_id)
    assert state is not None
    assert state.over
    assert recorder.kinds
    assert set(recorder.kinds) == {FALLBACK_KIND}


class Meddler:
    """Before its first decision, another write reaches the table (an operator,
    a timer): the state it thinks on is old by the time it answers."""

    def __init__(self, svc: TableService, tid: str, inner: Decider) -> None:
        self.svc, self.tid, self.inner = svc, tid, inner
        self.meddled = False

    async def decide(self, kind: str, seed: str, state: GameState, seat: int) -> Action | None:
        if not self.meddled:
            self.meddled = True
            await self.svc.admin.admin_hand_to_ai(self.tid, 0, by="test")
        return await self.inner.decide(kind, seed, state, seat)

    def close(self) -> None:
        return None


async def test_a_move_thought_out_on_an_old_state_is_not_written(svc: TableService) -> None:
    r = await svc.lobbies.create_lobby(1, "Ann", timer=0, ai_kind="search")
    tid = r.table_id
    await svc.lobbies.add_ai(tid, 1)
    svc.games.new_seed = lambda: seed_where("chuvash", 2, 0)
    r = await svc.games.start(tid, 1)
    _table, state, version = await svc.tables.get(tid)
    assert state is not None
    assert state.to_act() == [0]
    lead = HeuristicPlayer(0).choose(state, 0)
    assert lead is not None
    svc.use_decider(Meddler(svc, tid, InlineDecider()))
    with pytest.raises(StaleVersion):
        await svc.games.apply(tid, 1, lead, version)  # the AI answers it, on the old state
    events = await svc.admin.event_page(tid, version)
    assert events[0].kind == "takeover"  # the operator's write, alone
    assert not any(e.kind == "act" for e in events)  # Ann's move and the AI's reply: gone


async def test_the_timers_ask_the_decider(svc: TableService, clock: FakeClock) -> None:
    recorder = Recorder()
    svc.use_decider(recorder)
    r = await svc.lobbies.create_lobby(1, "Ann", timer=30, ai_kind="search")
    await svc.lobbies.add_ai(r.table_id, 1)
    svc.games.new_seed = lambda: seed_where("chuvash", 2, 0)
    await svc.games.start(r.table_id, 1)
    assert recorder.kinds == []  # the game waits for Ann
    clock.advance(31)
    results = await svc.timers.tick()
    assert [x.table_id for x in results] == [r.table_id]
    # Ann's timeout lead, then the hard AI's answer, asked of the service's decider
    assert recorder.kinds
    assert recorder.kinds[0] == "search"
