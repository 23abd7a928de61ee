"""#39: one read per press -- a move's writer draws the move from what its write
returned (:meth:`tables.Loaded.after`) instead of reading the table again, so
what it gives must be what a read after the write gives: the table, its game,
deadline, version, the request ids it answers duplicates from and the log's
open chunk a double tap is told from."""

from __future__ import annotations

import random

import pytest

from engine.serialize import state_to_json
from tables import TableService
from tests.tables.conftest import new_table


@pytest.mark.parametrize(
    ("variant", "humans", "ais", "seed"),
    [("chuvash", 3, 0, 1), ("shchelkovsky", 3, 1, 3)],
)
async def test_a_writes_own_table_is_what_a_read_after_it_gives(
    svc: TableService, variant: str, humans: int, ais: int, seed: int
) -> None:
    rng = random.Random(seed)
    print(f"seed {seed}")
    tid = await new_table(svc, humans, ais, variant=variant, timer=30)
    drawn = 0
    for n in range(5000):
        loaded = await svc.tables.load(tid)
        state = loaded.state
        assert state is not None
        if state.over:
            break
        seat = rng.choice([s for s in state.to_act() if not loaded.table.seats[s].ai_controlled])
        user = loaded.table.seats[seat].user
        assert user is not None
        action = rng.choice(state.legal_actions(seat)).text()
        rid = f"r{n}"
        result = await svc.games.apply(tid, user, action, loaded.version, rid, loaded=loaded)
        written = loaded.after(result, rid)
        read = await svc.tables.load(tid)
        if written is None:  # the game's end: read instead (its result, settlement)
            assert result.game_over
            continue
        drawn += 1
        assert written.version == read.version == result.version
        assert written.table == read.table
        assert read.state is not None
        assert written.state is not None
        assert state_to_json(written.state) == state_to_json(read.state)
        assert written.deadline == read.deadline
        assert written.result == read.result
        assert written.log == read.log
        assert written.applied(rid) == read.applied(rid) == result.version
        for s in range(len(read.table.seats)):  # a double tap is told the same way
            for v in range(loaded.version - 2, read.version + 1):
                assert written.moved_since(s, v) == read.moved_since(s, v)
    assert drawn > 20, "too few moves drawn from their writes to tell"
    # the last press delivered again: a duplicate, whose table is read afresh
    assert user is not None
    again = await svc.games.apply(tid, user, action, loaded.version, rid)
    assert again.duplicate
    assert (await svc.tables.load(tid)).after(again, rid) is None
