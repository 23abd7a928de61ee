"""Game records (issue #16): a finished game's record is kept for
``replay_ttl``, replays to the same end through the engine, lists the game for
its human players and is gone (``no_record``) once expired."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from engine.fairness import commitment
from engine.verify import record_states, replay_record
from tables import LiveError, TableService
from tests.tables.conftest import new_table, play_out, same_state


async def test_finished_game_keeps_its_record(svc: TableService) -> None:
    seed = random.randrange(2**62)
    print("seed", seed)
    svc.games.new_seed = lambda: seed
    tid = await new_table(svc, humans=2, ais=1)
    with pytest.raises(LiveError) as e:
        await svc.replays.record(tid, 1)  # not over yet
    assert e.value.code == "no_record"
    await play_out(svc, tid, random.Random(seed))
    table, state, _ = await svc.tables.get(tid)
    assert state is not None
    assert state.over
    rec = await svc.replays.record(tid, 1)
    assert rec["seed"] == str(seed)
    assert rec["commitment"] == commitment(seed, "chuvash", 3, table.options)
    assert rec["seats"] == [[1, "U1"], [2, "U2"], [None, table.seats[2].name]]
    assert rec["ai"] == [None, None, table.seats[2].ai]  # its level in the replay (#29)
    assert table.seats[2].ai
    assert rec["result"]["loser"] == state.loser
    states = record_states(rec)
    assert same_state(states[-1], state)
    assert len(states) == len(rec["actions"]) + 1
    out = replay_record(rec)
    assert out["ok"] is True
    assert out["result"]["loser"] == state.loser
    assert await svc.replays.recent(1) == [(tid, 1)]
    assert await svc.replays.recent(2) == [(tid, 1)]


async def test_rematch_record_starts_under_the_loser(svc: TableService) -> None:
    rng = random.Random(5)
    tid = await new_table(svc, humans=2)
    await play_out(svc, tid, rng)
    table, _, _ = await svc.tables.get(tid)
    await svc.games.rematch(tid, 2)  # #38: a rematch starts once both said yes
    await svc.games.rematch(tid, 1)
    await play_out(svc, tid, rng)
    _, state, _ = await svc.tables.get(tid)
    assert state is not None
    rec = await svc.replays.record(tid, 2)
    assert rec["previous_loser"] == table.previous_loser
    assert same_state(record_states(rec)[-1], state)
    assert [g for _, g in await svc.replays.recent(1)] == [2, 1]


async def test_record_expires(make_service: Callable[..., TableService]) -> None:
    svc = make_service(replay_ttl=0.2)
    tid = await new_table(svc, humans=2)
    await play_out(svc, tid, random.Random(3))
    assert (await svc.replays.record(tid, 1))["game"] == 1
    key = svc.keys.record(tid, 1)
    assert 0 < await svc.store.one(lambda p: p.pttl(key)) <= 200  # the configured time
    await svc.store.one(lambda p: p.delete(key))  # what the server does when the PTTL runs out
    with pytest.raises(LiveError) as e:
        await svc.replays.record(tid, 1)
    assert e.value.code == "no_record"
