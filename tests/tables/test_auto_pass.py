"""Seats that pass by themselves, in the same compare-and-set as the write that
made them (issue 13): a thrower whose only move is PASS until the table changes
(RULES §0 Passing, Throw-in priority), and a thrower who chose "pass for the rest
of this bout"."""

from __future__ import annotations

import random

import pytest

from engine import BOUT_PHASE, Action
from engine.actions import PASS
from tables import LiveError, Seat, TableService
from tests.tables.conftest import human_move, new_table, replay_current_game, same_state


@pytest.mark.parametrize("variant", ["chuvash", "shchelkovsky"])
async def test_a_seat_that_can_only_pass_passes_by_itself(svc: TableService, variant: str) -> None:
    seed = random.randrange(10**6)
    print("seed", seed)
    rng = random.Random(seed)
    tid = await new_table(svc, 5, variant=variant)
    autopasses = 0
    for _ in range(400):
        if not await human_move(svc, tid, rng):
            break
        _t, state, _v = await svc.tables.get(tid)
        assert state is not None
        # nobody is left holding a PASS that is all he may do (RULES §0 Passing)
        assert not [s for s in range(state.players) if state.forced_pass(s)]
        events = await svc.admin.event_page(tid, 0, 10_000)
        autopasses = sum(e.kind == "autopass" for e in events)
    assert autopasses > 0  # the history shows the passes made by themselves
    assert all(e.text == "P" for e in events if e.kind == "autopass")
    assert state is not None
    assert same_state(state, await replay_current_game(svc, tid))


async def test_pass_for_the_rest_of_the_bout(svc: TableService) -> None:
    seed = random.randrange(10**6)
    print("seed", seed)
    rng = random.Random(seed)
    tid = await new_table(svc, 4)
    chose = None
    ended_at_once = 0
    for _ in range(2000):  # until a human thrower may pass (and throw in)
        table, state, version = await svc.tables.get(tid)
        assert state is not None
        assert not state.over
        throwers = [
            s
            for s in state.to_act()
            if s != state.defender and Action(s, PASS) in state.legal_actions(s)
        ]
        if not throwers:
            await human_move(svc, tid, rng)
            continue
        user = table.seats[throwers[0]].user
        assert user is not None
        r = await svc.games.apply(tid, user, "P", version, rest_of_bout=True)
        if r.table.seats[throwers[0]].bout_pass:
            chose = throwers[0]
            break
        # his pass ended the bout (the others passed, by themselves too): the
        # choice is cleared with it -- look for a bout it outlives
        assert any(e.kind == "bout_end" for e in r.engine_events) or r.game_over
        assert r.table.status == "playing", "the game ended before a choice outlived its pass"
        ended_at_once += 1
    print("passes that ended their bout at once", ended_at_once)
    assert chose is not None
    for _ in range(200):
        table, state, _v = await svc.tables.get(tid)
        assert state is not None
        if state.phase != BOUT_PHASE or state.over:
            break
        # while the bout lasts he is never asked again, nor offered a pass
        assert chose not in state.to_act() or chose == state.defender
        assert Action(chose, PASS) not in state.legal_actions(chose)
        assert table.seats[chose].bout_pass
        await human_move(svc, tid, rng)
    else:
        raise AssertionError("the bout did not end")
    table, state, _v = await svc.tables.get(tid)
    assert not table.seats[chose].bout_pass  # cleared at the next bout
    assert state is not None
    assert same_state(state, await replay_current_game(svc, tid))


async def test_only_a_pass_is_made_for_the_rest_of_the_bout(svc: TableService) -> None:
    tid = await new_table(svc, 2)
    table, state, version = await svc.tables.get(tid)
    assert state is not None
    seat = state.to_act()[0]
    user = table.seats[seat].user
    assert user is not None
    lead = state.legal_actions(seat)[0].text()
    with pytest.raises(LiveError) as e:
        await svc.games.apply(tid, user, lead, version, rest_of_bout=True)
    assert e.value.code == "not_allowed"
    assert (await svc.tables.get(tid))[2] == version  # nothing changed


def test_the_choice_round_trips_and_old_records_read() -> None:
    seat = Seat(7, "Ann", bout_pass=True)
    assert Seat.from_json(seat.to_json()) == seat
    assert Seat.from_json([7, "Ann", None, 0, 0]) == Seat(7, "Ann")
