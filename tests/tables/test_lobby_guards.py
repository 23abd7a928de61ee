"""Every rule of a lobby write is checked inside the compare-and-set plan, so a
lost race re-checks it on the newer state (seated once, lobby full, owner only);
and only the lobby's owner (its creator) starts, adds or removes AI players,
changes the settings or cancels."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tables import LiveError, TableService
from tests.tables.conftest import new_table, play_out


async def test_one_user_joining_twenty_times_at_once_gets_one_seat(svc: TableService) -> None:
    for owner in range(1, 31):  # many lobbies: the race was lost in 49 of 50
        tid = (await svc.lobbies.create_lobby(owner, f"U{owner}")).table_id
        user = 1000 + owner
        results = await asyncio.gather(*(svc.lobbies.join(tid, user, "Zed") for _ in range(20)))
        table = await svc.lobbies.lobby(tid)
        assert [s.user for s in table.seats] == [owner, user], tid
        assert {r.version for r in results} == {max(r.version for r in results)}
        assert (await svc.tables.where(user)) is not None


async def test_two_users_racing_for_the_last_seat(svc: TableService) -> None:
    for owner in range(1, 21):
        tid = (await svc.lobbies.create_lobby(owner, "Ann", max_seats=2)).table_id
        a, b = 100 + owner, 200 + owner
        results = await asyncio.gather(
            svc.lobbies.join(tid, a, "A"), svc.lobbies.join(tid, b, "B"), return_exceptions=True
        )
        errors = [r for r in results if isinstance(r, LiveError)]
        assert [e.code for e in errors] == ["lobby_full"], results
        table = await svc.lobbies.lobby(tid)
        assert len(table.seats) == 2
        loser = a if table.seat_of(a) is None else b
        assert await svc.tables.where(loser) is None  # a refused join leaves him free


async def test_a_rematch_asked_twice_at_once_starts_one_game(svc: TableService) -> None:
    """#38: both players say yes at once -- two yeses, one game (the later
    write sees the earlier yes and starts it)."""
    tid = await new_table(svc, 2, first_user=1)
    await play_out(svc, tid, random.Random(3))
    results = await asyncio.gather(svc.games.rematch(tid, 1), svc.games.rematch(tid, 2))
    assert sum(any(e.kind == "start" for e in r.events) for r in results) == 1
    assert (await svc.lobbies.lobby(tid)).game_no == 2


Write = Callable[[TableService, str, int], Awaitable[Any]]

OWNER_ONLY: dict[str, Write] = {
    "start": lambda s, t, u: s.games.start(t, u),
    "add_ai": lambda s, t, u: s.lobbies.add_ai(t, u),
    "remove_ai": lambda s, t, u: s.lobbies.remove_ai(t, u, 2),
    "configure": lambda s, t, u: s.lobbies.configure(t, u, timer=30),
    "cancel": lambda s, t, u: s.lobbies.cancel(t, u),
}


@pytest.mark.parametrize("what", list(OWNER_ONLY))
async def test_only_the_owner_runs_the_lobby(svc: TableService, what: str) -> None:
    tid = (await svc.lobbies.create_lobby(1, "Ann")).table_id
    await svc.lobbies.join(tid, 2, "Bob")
    await svc.lobbies.add_ai(tid, 1)
    table, _, version = await svc.tables.get(tid)
    with pytest.raises(LiveError) as e:
        await OWNER_ONLY[what](svc, tid, 2)
    assert e.value.code == "not_owner"
    assert (await svc.tables.get(tid))[::2] == (table, version)  # nothing changed
    await OWNER_ONLY[what](svc, tid, 1)  # the owner may


async def test_the_next_owner_runs_the_lobby_once_the_creator_left(svc: TableService) -> None:
    tid = (await svc.lobbies.create_lobby(1, "Ann")).table_id
    await svc.lobbies.join(tid, 2, "Bob")
    await svc.lobbies.join(tid, 3, "Cid")
    await svc.lobbies.leave(tid, 1)
    with pytest.raises(LiveError) as e:
        await svc.games.start(tid, 3)
    assert e.value.code == "not_owner"
    r = await svc.games.start(tid, 2)
    assert r.table.game_no == 1


async def test_a_join_paused_after_its_claim_keeps_the_user_from_another_lobby(
    svc: TableService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Already at another table (defect 1 of issue 17): the user pointer is claimed
    before the seat is written.  A process paused between the two (here: until
    the rival join is over) must still keep the user from sitting elsewhere --
    the rival sees the fresh claim and is refused."""
    a = (await svc.lobbies.create_lobby(3001, "A")).table_id
    b = (await svc.lobbies.create_lobby(4001, "B")).table_id
    user = 5001
    store = svc.tables.store
    swap = store.swap_user
    rival_done = asyncio.Event()
    claimed = asyncio.Event()

    async def paused_swap(who: int, old: str, new: str, *args: int) -> bool:
        ok = await swap(who, old, new, *args)
        if ok and new == a:
            claimed.set()
            await rival_done.wait()  # the join of ``a`` pauses here
        return ok

    monkeypatch.setattr(store, "swap_user", paused_swap)
    first = asyncio.ensure_future(svc.lobbies.join(a, user, "Zed"))
    await claimed.wait()
    try:
        with pytest.raises(LiveError) as e:
            await svc.lobbies.join(b, user, "Zed")
    finally:
        rival_done.set()
    await first
    assert e.value.code == "busy"
    assert (await svc.lobbies.lobby(b)).seat_of(user) is None
    assert (await svc.lobbies.lobby(a)).seat_of(user) is not None
    where = await svc.tables.where(user)
    assert where is not None
    assert where.id == a


async def test_a_rematch_paused_after_its_claims_keeps_its_players(
    svc: TableService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The players' pointers already name the finished table; a rematch renews
    them as fresh claims, so a join elsewhere while it is in flight is refused."""
    tid = await new_table(svc, 2, first_user=1)
    await play_out(svc, tid, random.Random(4))
    await svc.games.rematch(tid, 2)  # #38: his yes first; 1's starts the game
    other = (await svc.lobbies.create_lobby(4002, "B")).table_id
    store = svc.tables.store
    swap = store.swap_user
    rival_done = asyncio.Event()
    claimed = asyncio.Event()

    async def paused_swap(who: int, old: str, new: str, *args: int) -> bool:
        ok = await swap(who, old, new, *args)
        if ok and new == tid and who == 2:
            claimed.set()
            await rival_done.wait()  # the rematch pauses here
        return ok

    monkeypatch.setattr(store, "swap_user", paused_swap)

    rematch = asyncio.ensure_future(svc.games.rematch(tid, 1))

    async def rival() -> Any:
        await asyncio.wait(
            [rematch, asyncio.ensure_future(claimed.wait())], return_when=asyncio.FIRST_COMPLETED
        )
        try:
            return await svc.lobbies.join(other, 2, "Zed")
        except LiveError as e:
            return e
        finally:
            rival_done.set()

    refused = await rival()
    result = await rematch
    assert isinstance(refused, LiveError), refused
    assert refused.code == "busy"
    assert (await svc.lobbies.lobby(other)).seat_of(2) is None
    assert (await svc.lobbies.lobby(tid)).game_no == 2 == result.table.game_no
    monkeypatch.undo()
    with pytest.raises(LiveError) as e:  # once the rematch is written: seated there
        await svc.lobbies.join(other, 2, "Zed")
    assert e.value.code == "seated_elsewhere"


async def test_a_refused_join_leaves_a_rival_claim_in_flight(svc: TableService) -> None:
    """The same user joins three lobbies at once: the first has claimed him and
    not written his seat yet.  The second, refused ("busy"), must not clear that
    claim on its way out, or the third sees a stale pointer and seats him too
    (the race the cluster run of the racing-joins test lost, CI of stop 33)."""
    a, b, c = [(await svc.lobbies.create_lobby(u, f"U{u}")).table_id for u in (1, 2, 3)]
    user = 9
    assert await svc.tables.claim_user(user, a)  # a's join: claimed, seat not written
    for t in (b, c):
        with pytest.raises(LiveError) as e:
            await svc.lobbies.join(t, user, "Zed")
        assert e.value.code == "busy", t
    await svc.lobbies.join(a, user, "Zed")  # a's write lands
    for t in (b, c):
        assert (await svc.lobbies.lobby(t)).seat_of(user) is None
        with pytest.raises(LiveError) as e:
            await svc.lobbies.join(t, user, "Zed")
        assert e.value.code == "seated_elsewhere"


async def test_a_refused_rematch_leaves_a_players_claim_elsewhere(svc: TableService) -> None:
    """A rematch that leaves out a player who is joining another lobby right
    now (#38: his yes lapses; the game starts without him) leaves that join's
    claim fresh: a third join of his is refused."""
    tid = await new_table(svc, 2, first_user=1)
    await play_out(svc, tid, random.Random(5))
    a, c = [(await svc.lobbies.create_lobby(u, f"U{u}")).table_id for u in (4001, 4003)]
    await svc.games.rematch(tid, 2)  # his yes, and then
    assert await svc.tables.claim_user(2, a)  # 2's join of a: in flight
    started = await svc.games.rematch(tid, 1)
    assert [s.user for s in started.table.seats] == [1, None]
    with pytest.raises(LiveError) as e:
        await svc.lobbies.join(c, 2, "Bob")
    assert e.value.code == "busy"
    assert (await svc.lobbies.lobby(c)).seat_of(2) is None
