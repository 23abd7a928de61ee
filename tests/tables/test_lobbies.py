"""Lobby rules (tables/lobbies.py docstring)."""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from tables import CANCELLED, OPEN, PLAYING, LiveError, TableService, WriteResult
from tables.model import RATED_TIMER
from tables.tables import Plan
from tests.tables.conftest import FakeClock, human_move, new_table, play_out


async def test_invite_code_is_a_short_url_safe_token(svc: TableService) -> None:
    codes = set()
    for user in range(1, 21):
        r = await svc.lobbies.create_lobby(user, f"U{user}")
        assert re.fullmatch(r"[A-Za-z0-9_-]{11}", r.table_id)  # 64 random bits, <= 64 chars
        assert (await svc.lobbies.lobby(r.table_id)).seats[0].user == user
        codes.add(r.table_id)
    assert len(codes) == 20


async def test_a_lobby_keeps_the_thread_it_was_opened_in(svc: TableService) -> None:
    """A forum group's topic: the thread is kept beside the chat, as given, read
    back with the table and through its writes; a private lobby has none."""
    r = await svc.lobbies.create_lobby(1, "Ann", chat=-5, thread=42)
    assert r.table.thread == 42
    await svc.lobbies.join(r.table_id, 2, "Bob")
    assert (await svc.tables.load(r.table_id)).table.thread == 42
    plain = await svc.lobbies.create_lobby(3, "Cid", chat=-6)
    assert (await svc.tables.load(plain.table_id)).table.thread is None
    alone = await svc.lobbies.create_lobby(4, "Dan", thread=42)
    assert alone.table.thread is None


async def test_join_leave_add_remove_ai(svc: TableService) -> None:
    r = await svc.lobbies.create_lobby(1, "Ann", chat=-5, variant="shchelkovsky", max_seats=3)
    tid = r.table_id
    assert r.table.private is False
    assert r.table.options == {"decks": 2, "remove_joker": True}
    r = await svc.lobbies.join(tid, 2, "Bob")
    again = await svc.lobbies.join(tid, 2, "Bob")  # a second tap: nothing changes
    assert again.version == r.version
    assert len(again.table.seats) == 2
    r = await svc.lobbies.add_ai(tid, 1)
    assert [s.user for s in r.table.seats] == [1, 2, None]
    with pytest.raises(LiveError) as e:
        await svc.lobbies.join(tid, 3, "Cid")
    assert e.value.code == "lobby_full"
    r = await svc.lobbies.remove_ai(tid, 1, 2)
    with pytest.raises(LiveError) as e:
        await svc.lobbies.remove_ai(tid, 1, 0)
    assert e.value.code == "bad_seat"
    r = await svc.lobbies.join(tid, 3, "Cid")
    assert [s.name for s in r.table.seats] == ["Ann", "Bob", "Cid"]
    r = await svc.lobbies.leave(tid, 1)  # the creator leaves: the next human is the creator
    assert r.table.creator == 2
    assert [s.user for s in r.table.seats] == [2, 3]
    assert await svc.tables.where(1) is None
    await svc.lobbies.leave(tid, 2)
    r = await svc.lobbies.leave(tid, 3)  # the last human leaves: the lobby is cancelled
    assert r.table.status == CANCELLED


async def test_one_active_table_per_user(svc: TableService) -> None:
    a = (await svc.lobbies.create_lobby(1, "Ann", chat=-1)).table_id
    with pytest.raises(LiveError) as e:
        await svc.lobbies.create_lobby(1, "Ann", chat=-2)
    assert e.value.code == "seated_elsewhere"
    assert e.value.info["table"] == a
    b = (await svc.lobbies.create_lobby(2, "Bob", chat=-2)).table_id
    with pytest.raises(LiveError) as e:
        await svc.lobbies.join(b, 1, "Ann")
    assert e.value.code == "seated_elsewhere"
    assert e.value.info["status"] == OPEN
    assert "leave it first" in e.value.message
    await svc.lobbies.join(a, 3, "Cid")
    await svc.games.start(a, 1)
    with pytest.raises(LiveError) as e:  # a game in progress counts too
        await svc.lobbies.join(b, 3, "Cid")
    assert e.value.info["status"] == PLAYING
    await play_out(svc, a, random.Random(1))
    await svc.lobbies.join(b, 1, "Ann")  # a finished game does not count
    assert (await svc.tables.where(1)) is not None
    assert (await svc.tables.where(3)) is None


async def test_one_user_racing_into_two_lobbies_gets_one_seat(svc: TableService) -> None:
    lobbies = [(await svc.lobbies.create_lobby(u, f"U{u}")).table_id for u in (1, 2, 3, 4)]
    results = await asyncio.gather(
        *(svc.lobbies.join(t, 9, "Zed") for t in lobbies), return_exceptions=True
    )
    ok = [r for r in results if not isinstance(r, BaseException)]
    errors = [r for r in results if isinstance(r, LiveError)]
    assert len(ok) == 1
    assert len(errors) == 3
    assert {e.code for e in errors} == {"seated_elsewhere"}
    seated = [t for t in lobbies if (await svc.lobbies.lobby(t)).seat_of(9) is not None]
    assert seated == [ok[0].table_id]


async def test_racing_joins_never_overfill(svc: TableService) -> None:
    tid = (await svc.lobbies.create_lobby(1, "Ann", max_seats=4)).table_id
    results = await asyncio.gather(
        *(svc.lobbies.join(tid, u, f"U{u}") for u in range(2, 12)), return_exceptions=True
    )
    table = await svc.lobbies.lobby(tid)
    assert len(table.seats) == 4
    assert sum(not isinstance(r, BaseException) for r in results) == 3
    losers = [u for u in range(2, 12) if table.seat_of(u) is None]
    for u in losers:  # a refused join leaves the user free
        assert await svc.tables.where(u) is None


async def test_settings_are_validated(svc: TableService) -> None:
    tid = (await svc.lobbies.create_lobby(1, "Ann")).table_id
    await svc.lobbies.join(tid, 2, "Bob")
    bad = [
        {"variant": "poker"},
        {"options": {"decks": 2}},  # chuvash: one deck (C1)
        {"variant": "shchelkovsky", "options": {"decks": 3}},  # S1: 2 or 4
        {"variant": "shchelkovsky", "options": {"jokers": 1}},
        {"max_seats": 7},  # chuvash: 2-6 (C2)
        {"max_seats": 1},
        {"timer": 45},
    ]
    for change in bad:
        with pytest.raises(LiveError) as e:
            await svc.lobbies.configure(tid, 1, **change)  # type: ignore[arg-type]
        assert e.value.code == "bad_settings", change
    with pytest.raises(LiveError) as e:
        await svc.lobbies.configure(tid, 2, timer=30)
    assert e.value.code == "not_owner"  # only the creator
    r = await svc.lobbies.configure(tid, 1, variant="shchelkovsky", max_seats=10, timer=120)
    t = r.table
    assert (t.variant, t.options, t.max_seats, t.timer) == (
        "shchelkovsky",
        {"decks": 2, "remove_joker": True},
        10,
        120,
    )
    r = await svc.lobbies.configure(tid, 1, options={"decks": 4, "remove_joker": False})
    assert r.table.options == {"decks": 4, "remove_joker": False}
    await svc.lobbies.add_ai(tid, 1)
    with pytest.raises(LiveError) as e:
        await svc.lobbies.configure(tid, 1, max_seats=2)
    assert e.value.code == "bad_settings"
    r = await svc.lobbies.configure(tid, 1, variant="chuvash")  # max seats clipped to 6
    assert (r.table.options, r.table.max_seats) == ({"decks": 1, "remove_joker": False}, 6)


async def test_a_rated_game_always_has_a_turn_timer(svc: TableService) -> None:
    """#38: a rated lobby asked for no timer (created so, set so, or turned rated
    without one) gets RATED_TIMER; only a casual lobby plays without one.  Its
    game waits for a move with a deadline, so the loser cannot stall it."""
    r = await svc.lobbies.create_lobby(1, "Ann", timer=0)
    tid = r.table_id
    assert (r.table.rated, r.table.timer) == (True, RATED_TIMER)
    await svc.lobbies.join(tid, 2, "Bob")
    r = await svc.lobbies.configure(tid, 1, timer=30)
    assert r.table.timer == 30
    r = await svc.lobbies.configure(tid, 1, timer=0)
    assert r.table.timer == RATED_TIMER
    r = await svc.lobbies.configure(tid, 1, rated=False)
    r = await svc.lobbies.configure(tid, 1, timer=0)
    assert (r.table.rated, r.table.timer) == (False, 0)  # casual: no timer is allowed
    r = await svc.lobbies.configure(tid, 1, rated=True)
    assert (r.table.rated, r.table.timer) == (True, RATED_TIMER)
    started = await svc.games.start(tid, 1)
    assert started.table.timer == RATED_TIMER
    assert started.deadline is not None
    assert (await svc.tables.load(tid)).deadline == started.deadline
    casual = await svc.lobbies.create_lobby(3, "Cy", timer=0, rated=False)
    assert (casual.table.rated, casual.table.timer) == (False, 0)


async def test_a_rated_lobby_without_a_timer_is_caught_inside_the_write(
    make_service: Callable[..., TableService],
) -> None:
    """#38: the rule is decided on the table the compare-and-set writes over: a
    press of "no timer" planned on a casual lobby that turned rated before it
    was written gets the timer; and a rated lobby stored without one (before
    the rule) starts its game with one."""
    a, b = make_service(), make_service()  # two processes, one Redis
    tid = (await a.lobbies.create_lobby(1, "Ann")).table_id
    await a.lobbies.join(tid, 2, "Bob")
    await a.lobbies.configure(tid, 1, rated=False)
    write = b.tables.write
    raced = False

    async def rival_first(*args: Any, **kw: Any) -> WriteResult:
        nonlocal raced
        if not raced:  # between b's read and its write: a turns the lobby rated
            raced = True
            await a.lobbies.configure(tid, 1, rated=True)
        return await write(*args, **kw)

    b.tables.write = rival_first  # type: ignore[method-assign]
    r = await b.lobbies.configure(tid, 1, timer=0)
    assert raced
    assert (r.table.rated, r.table.timer) == (True, RATED_TIMER)
    # a rated lobby stored with no timer before the rule: its game gets one
    legacy = await a.tables.retry(
        tid, lambda lo: Plan(replace(lo.table, timer=0), None, events=[("settings", -1, "")])
    )
    assert (legacy.table.rated, legacy.table.timer) == (True, 0)
    started = await a.games.start(tid, 1)
    assert started.table.timer == RATED_TIMER
    assert started.deadline is not None


async def test_a_rated_game_waits_for_every_move_with_a_deadline(
    svc: TableService, clock: FakeClock
) -> None:
    """#38: a rated game asked for no timer waits for each human move with a
    deadline, from its start to its end, and its rematch too -- even when its
    table was stored without a timer (before the rule): the start's
    compare-and-set gives it the rated timer."""
    tid = (await svc.lobbies.create_lobby(1, "Ann", timer=0, chat=-100)).table_id
    await svc.lobbies.join(tid, 2, "Bob")
    await svc.games.start(tid, 1)
    rng = random.Random(38)
    for game in range(2):
        moves = 0
        while True:
            loaded = await svc.tables.load(tid)
            assert loaded.table.rated_now
            assert loaded.state is not None
            if loaded.state.over:
                assert loaded.deadline is None
                break
            assert loaded.deadline == int((clock.now + RATED_TIMER) * 1000), (game, moves)
            clock.advance(1)  # each move's write sets its deadline anew
            assert await human_move(svc, tid, rng)
            moves += 1
        assert moves
        if game:
            break
        # a finished rated table stored with no timer (before the rule): its rematch
        await svc.tables.retry(
            tid,
            lambda lo: Plan(replace(lo.table, timer=0), lo.state, events=[("settings", -1, "")]),
        )
        assert (await svc.tables.load(tid)).table.timer == 0
        await svc.games.rematch(tid, 1)  # a ready check (#38): both say yes
        r = await svc.games.rematch(tid, 2)
        assert (r.table.rated_now, r.table.timer) == (True, RATED_TIMER)


async def test_start_and_cancel_rules(svc: TableService) -> None:
    tid = (await svc.lobbies.create_lobby(1, "Ann")).table_id
    with pytest.raises(LiveError) as e:
        await svc.games.start(tid, 1)
    assert e.value.code == "too_few_players"
    await svc.lobbies.join(tid, 2, "Bob")
    with pytest.raises(LiveError) as e:
        await svc.games.start(tid, 3)
    assert e.value.code == "not_seated"
    with pytest.raises(LiveError) as e:
        await svc.lobbies.cancel(tid, 2)
    assert e.value.code == "not_owner"
    with pytest.raises(LiveError) as e:
        await svc.games.start(tid, 2)
    assert e.value.code == "not_owner"
    r = await svc.games.start(tid, 1)
    assert r.table.status == PLAYING
    assert r.table.game_no == 1
    for call in (
        svc.games.start(tid, 1),
        svc.lobbies.join(tid, 3, "Cid"),
        svc.lobbies.cancel(tid, 1),
    ):
        with pytest.raises(LiveError) as e:
            await call
        assert e.value.code == "not_open"
    other = await new_table(svc, 2, first_user=10, start=False)
    r = await svc.lobbies.cancel(other, 10)
    assert r.table.status == CANCELLED
    assert await svc.tables.where(10) is None
    assert await svc.tables.where(11) is None
    with pytest.raises(LiveError) as e:
        await svc.lobbies.lobby("no-such-code")
    assert e.value.code == "no_table"
