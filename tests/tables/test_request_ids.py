"""Lobby and game writes carry the request id of the press that asked for them:
the same request delivered again -- to this process or to another one, at once
or later -- is applied once and answered as the duplicate it is (never as an
error its first application caused, such as "not open" after a Start), even
without the bot's update dedupe in front (issue #17)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tables import OPEN, PLAYING, TableService, WriteResult
from tests.tables.conftest import new_table, play_out

Write = Callable[[TableService, str, int, str], Awaitable[WriteResult]]

LOBBY_WRITES: dict[str, Write] = {  # (service, table, owner, request id); his guest is owner + 1
    "add_ai": lambda s, t, u, r: s.lobbies.add_ai(t, u, request_id=r),
    "remove_ai": lambda s, t, u, r: s.lobbies.remove_ai(t, u, request_id=r),
    "configure": lambda s, t, u, r: s.lobbies.configure(t, u, timer=30, request_id=r),
    "leave": lambda s, t, u, r: s.lobbies.leave(t, u + 1, request_id=r),
    "start": lambda s, t, u, r: s.games.start(t, u, request_id=r),
    "cancel": lambda s, t, u, r: s.lobbies.cancel(t, u, request_id=r),
}


async def _lobby(svc: TableService, owner: int = 1) -> str:
    tid = (await svc.lobbies.create_lobby(owner, "Ann")).table_id
    await svc.lobbies.join(tid, owner + 1, "Bob")
    await svc.lobbies.add_ai(tid, owner)
    await svc.lobbies.add_ai(tid, owner)
    return tid


@pytest.mark.parametrize("what", list(LOBBY_WRITES))
async def test_a_lobby_write_delivered_to_two_processes_at_once_applies_once(
    make_service: Callable[..., TableService], what: str
) -> None:
    one, two = make_service(), make_service()
    for n in range(10):  # the race is lost now and then: many rounds
        owner = 10 * n + 1
        tid = await _lobby(one, owner)
        _, _, before = await one.tables.get(tid)
        rid = f"cb{what}{n}"
        copies = [LOBBY_WRITES[what](svc, tid, owner, rid) for svc in (one, two, one, two)]
        results = await asyncio.gather(*copies)
        _, _, after = await one.tables.get(tid)
        assert after == before + 1, (what, results)
        assert {r.version for r in results} == {after}
        assert sum(not r.duplicate for r in results) == 1


async def test_add_ai_pressed_once_but_delivered_twice_adds_one_seat(svc: TableService) -> None:
    tid = (await svc.lobbies.create_lobby(1, "Ann")).table_id
    first = await svc.lobbies.add_ai(tid, 1, request_id="cb42")
    again = await svc.lobbies.add_ai(tid, 1, request_id="cb42")
    assert (again.duplicate, again.version) == (True, first.version)
    assert [s.user for s in (await svc.lobbies.lobby(tid)).seats] == [1, None]
    other = await svc.lobbies.add_ai(tid, 1, request_id="cb43")  # another press: another seat
    assert not other.duplicate
    assert [s.user for s in (await svc.lobbies.lobby(tid)).seats] == [1, None, None]


async def test_a_second_start_of_the_same_press_is_no_error(svc: TableService) -> None:
    tid = await _lobby(svc)
    first = await svc.games.start(tid, 1, request_id="cb7")
    again = await svc.games.start(tid, 1, request_id="cb7")  # the lobby is no longer open
    assert (again.duplicate, again.version) == (True, first.version)
    table = await svc.lobbies.lobby(tid)
    assert (table.status, table.game_no) == (PLAYING, 1)


async def test_a_rematch_delivered_twice_starts_one_game(svc: TableService) -> None:
    tid = await new_table(svc, 2, first_user=1)
    await play_out(svc, tid, random.Random(5))
    await svc.games.rematch(tid, 2)  # #38: the other's yes first; 1's starts the game
    results = await asyncio.gather(*(svc.games.rematch(tid, 1, request_id="cb9") for _ in range(4)))
    assert sum(not r.duplicate for r in results) == 1
    assert (await svc.lobbies.lobby(tid)).game_no == 2


async def test_a_duplicate_move_is_answered_before_the_version_check(svc: TableService) -> None:
    tid = await new_table(svc, 2, first_user=1)
    table, state, version = await svc.tables.get(tid)
    assert state is not None
    seat = state.to_act()[0]
    user = table.seats[seat].user
    assert user is not None
    action = state.legal_actions(seat)[0]
    first = await svc.games.apply(tid, user, action, version, request_id="cb1")
    # the same press again, still naming the version it was drawn at
    again = await svc.games.apply(tid, user, action, version, request_id="cb1")
    assert (again.duplicate, again.version) == (True, first.version)


async def test_join_and_leave_with_request_ids(svc: TableService) -> None:
    tid = (await svc.lobbies.create_lobby(1, "Ann")).table_id
    joins: list[Any] = await asyncio.gather(
        *(svc.lobbies.join(tid, 2, "Bob", request_id="cbj") for _ in range(20))
    )
    assert [s.user for s in (await svc.lobbies.lobby(tid)).seats] == [1, 2]
    assert sum(not r.duplicate for r in joins) >= 1
    await svc.lobbies.leave(tid, 2, request_id="cbl")
    again = await svc.lobbies.leave(tid, 2, request_id="cbl")  # he sits nowhere now: no error
    assert again.duplicate
    table = await svc.lobbies.lobby(tid)
    assert (table.status, [s.user for s in table.seats]) == (OPEN, [1])
