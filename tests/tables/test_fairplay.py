"""Fair play in one home (#39, :mod:`tables.fairplay`): the one cooldown check
refuses a player in a cooldown from rated games at each of the three entry
points -- joining a rated lobby, starting a rated game, joining an arena --
and each runs it inside the plan of the compare-and-set that writes the
join or the start, so a cooldown that begins during a lost race refuses the
retry.  Before #39 the arena's check was the bot's use case's: the table
service's own ``arenas.join`` let a cooling player in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from tables import GameResult, LiveError, TableService
from tests.tables.conftest import FakeClock, new_table

CHAT = -700


def walked_away(user: int, at: int, table: str) -> GameResult:
    """A rated game ``user`` walked away from (settled: an offence of his)."""
    return GameResult(
        table=table, game=1, variant="chuvash", chat=-100, places=(2, 1), loser=0, draw=False,
        seats=((user, f"U{user}"), (99, "U99")), at=at, rated=True, away=(0,), taken=(0,),
    )  # fmt: skip


async def cool(svc: TableService, clock: FakeClock, user: int) -> int:
    """Two offences of ``user`` in the window: a 10-minute cooldown; its end (ms)."""
    now = int(clock() * 1000)
    for i, at in enumerate((now - 3_600_000, now)):
        s = await svc.ratings.settle(walked_away(user, at, f"off{user}x{i}"))
        assert s is not None
    until = await svc.ratings.cooldown(user)
    assert until == now + 600_000
    return until


class Spy:
    """Counts the calls of the one check (:meth:`FairPlay.cooldowns`)."""

    def __init__(self, svc: TableService) -> None:
        self.calls: list[list[int]] = []
        self._real = svc.fairplay.cooldowns

    async def __call__(self, users: Sequence[int], *, at: str = "") -> dict[int, int]:
        self.calls.append(list(users))
        return await self._real(users, at=at)


async def test_the_one_check_refuses_at_each_entry_point(
    svc: TableService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cooling player is refused (``cooldown``, with its end and the seconds
    left) when he joins a rated lobby, when a rated game with him starts
    (naming him) and when he joins an arena through the service itself; each
    refusal came from the one check."""
    until = await cool(svc, clock, 1)
    spy = Spy(svc)
    monkeypatch.setattr(svc.fairplay, "cooldowns", spy)
    # 1. joining a rated lobby
    rated = await new_table(svc, humans=1, start=False, first_user=10)
    with pytest.raises(LiveError) as e:
        await svc.lobbies.join(rated, 1, "U1")
    assert (e.value.code, e.value.info["until"], e.value.info["left"]) == ("cooldown", until, 600)
    assert spy.calls == [[1]]
    # 2. starting a rated game: he sat while it was casual
    casual = await new_table(svc, humans=1, start=False, first_user=20)
    await svc.lobbies.configure(casual, 20, rated=False)
    spy.calls.clear()
    await svc.lobbies.join(casual, 1, "U1")  # casual: never checked, never blocked
    assert spy.calls == []
    await svc.lobbies.configure(casual, 20, rated=True)
    with pytest.raises(LiveError) as e:
        await svc.games.start(casual, 20)
    assert (e.value.code, e.value.info["name"], e.value.info["until"]) == ("cooldown", "U1", until)
    assert spy.calls == [[20, 1]]
    await svc.lobbies.leave(casual, 1)
    # 3. joining an arena, through the service's own join (no adapter needed)
    arena = await svc.arenas.create(CHAT, 5, "chuvash")
    spy.calls.clear()
    with pytest.raises(LiveError) as e:
        await svc.arenas.join(arena.id, 1, "U1", 1000)
    assert (e.value.code, e.value.info["until"], e.value.info["left"]) == ("cooldown", until, 600)
    assert spy.calls == [[1]]
    assert (await svc.arenas.get(arena.id)).player(1) is None
    # once the cooldown is over, the same three let him in
    clock.advance(601)
    await svc.arenas.join(arena.id, 1, "U1", 1000)
    await svc.lobbies.join(rated, 1, "U1")


async def test_the_arena_join_checks_again_after_a_lost_race(
    svc: TableService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check is inside the join's compare-and-set: his first try loses the
    race to another write, and meanwhile a cooldown began; the retry, on the
    newer arena, checks again and refuses -- he is not let in on a check made
    before the write it guards lost."""
    arena = await svc.arenas.create(CHAT, 5, "chuvash")
    real_write = svc.arenas._write
    lost = False

    async def rival_first(a: Any, version: int, game: str = "") -> int | None:
        nonlocal lost
        if not lost:  # another write got there first, and he got a cooldown
            lost = True
            await svc.arenas.join(arena.id, 2, "U2", 1000)
            await cool(svc, clock, 1)
            return None
        return await real_write(a, version, game)

    monkeypatch.setattr(svc.arenas, "_write", rival_first)
    with pytest.raises(LiveError) as e:
        await svc.arenas.join(arena.id, 1, "U1", 1000)
    assert e.value.code == "cooldown"
    after = await svc.arenas.get(arena.id)
    assert after.player(1) is None
    assert after.player(2) is not None
