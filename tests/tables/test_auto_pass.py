"""Seats that pass by themselves, in the same compare-and-set as the write that
made them (issue 13): a thrower whose only move is PASS until the table changes
(RULES §0 Passing, Throw-in priority), and a thrower who chose "pass for the rest
of this bout"."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from engine import BOUT_PHASE, Action, from_deal, parse_cards, public_view
from engine.actions import PASS
from engine.scenario import load_scenario
from tables import PLAYING, LiveError, Seat, Table, TableService
from tables.games import auto_pass, run_ai
from tests.tables.conftest import human_move, new_table, replay_current_game, same_state


@pytest.mark.parametrize("variant", ["chuvash", "shchelkovsky"])
async def test_a_seat_that_can_only_pass_passes_by_itself(svc: TableService, variant: str) -> None:
    seed = random.randrange(10**6)
    print("seed", seed)
    rng = random.Random(seed)
    tid = await new_table(svc, 5, variant=variant)
    for _ in range(400):
        if not await human_move(svc, tid, rng):
            break
        _t, state, _v = await svc.tables.get(tid)
        assert state is not None
        # nobody is left holding a PASS that is all he may do for all to see
        # (RULES §0 Passing); one for his cards' sake is not shown (review "leaks")
        assert not [s for s in range(state.players) if state.forced_pass_in_sight(s)]
        events = await svc.admin.event_page(tid, 0, 10_000)
    # the history shows the passes made by themselves, as passes (a seat with
    # no room left does pass by itself, test_auto_pass_when_no_room_is_left)
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


def _public_after_cover(seat2: list[str], stock: list[str]) -> dict[str, Any]:
    """A 3-player Chuvash bout: seat 0 led 7C, seat 1 covered with 8C; seat 0
    holds 8D and so the throw-in priority; seat 2's hand is ``seat2``.  The
    public view once the service's own passes are made."""
    state, actions = load_scenario(
        {
            "variant": "chuvash",
            "hands": [
                ["7C", "8D", "9H", "10S", "JC", "QD"],
                ["8C", "KS", "KH", "AD", "AH", "QS"],
                seat2,
            ],
            "stock": stock,
            "first_attacker": 0,
            "actions": [
                {"seat": 0, "type": "lead", "cards": ["7C"]},
                {"seat": 1, "type": "cover", "attack": "7C", "card": "8C"},
            ],
        }
    )
    for a in actions:
        state.apply(Action.from_json(a))
    seats = (Seat(1, "a"), Seat(2, "b"), Seat(3, "c"))
    table = Table(
        id="t", chat=-1, creator=1, variant="chuvash", options={}, max_seats=3, timer=0,
        seats=seats, status=PLAYING,
    )  # fmt: skip
    asyncio.run(run_ai(table, state, 50))  # the passes the service writes with the cover
    assert state.priority() == 0  # seat 0 decides: throw his 8D in, or pass
    return public_view(state)


def test_a_seat_is_not_shown_passed_for_the_cards_it_lacks() -> None:
    """Two deals that differ only in seat 2's hidden cards (a 7 or not) look the
    same to everyone while seat 0 holds the priority: seat 2 was shown as passed
    at once when it held no rank of the table -- telling what its hand lacks
    (review "leaks").  When priority passes on, the bout ends as before."""
    rest = ["6C", "6D", "6H", "6S", "7D", "7H", "7S", "8H", "8S", "9C", "9D", "9S"]
    tail = ["10C", "10D", "10H", "JS", "QH", "AS"]
    lacks = _public_after_cover(["JD", "JH", "QC", "KC", "KD", "AC"], [*rest, *tail])
    holds = _public_after_cover(
        ["7D", "JH", "QC", "KC", "KD", "AC"], ["JD", *[c for c in rest if c != "7D"], *tail]
    )
    assert lacks["passed"] == holds["passed"]
    assert lacks["events"][-1:] == holds["events"][-1:]


async def test_auto_pass_when_no_room_is_left() -> None:
    """No room left (the defender holds as many cards as lie uncovered): the
    throwers pass by themselves, at once, for all to see (RULES §0 Passing) --
    whether or not they hold a rank of the table."""
    hands = [parse_cards(h.split()) for h in ["6C 6D 8D", "8C 9C", "7D"]]
    state = from_deal("chuvash", None, hands, [], first_attacker=0)
    for seat, text in ((0, "L6C"), (1, "C6C8C"), (0, "T6D")):
        state.apply(Action.from_text(seat, text))
    seats = (Seat(1, "a"), Seat(2, "b"), Seat(3, "c"))
    table = Table(
        id="t", chat=-1, creator=1, variant="chuvash", options={}, max_seats=3, timer=0,
        seats=seats, status=PLAYING,
    )  # fmt: skip
    assert auto_pass(table, state) == 0
    await run_ai(table, state, 50)
    assert public_view(state)["passed"] == [0, 2]
    assert state.to_act() == [1]  # the defender covers or takes
