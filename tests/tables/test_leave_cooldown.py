"""A voluntary leave of a rated game is an offence at once (#38, point 2): the
cooldown it sets keeps him from his next rated game while the AI still plays
out the one he left -- once, however the leave is retried or the process dies
after it; the game's settlement confirms it (no second offence) or undoes it
(he came back, everyone walked away); an operator's takeover and a casual
game's leave charge nothing.  On a real Redis (one server and a cluster)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tables import GameResult, LiveError, ServiceUnavailable, TableService
from tests.tables.conftest import FakeClock, human_move, new_table, play_out


def walked_away(user: int, at: int, table: str = "before") -> GameResult:
    """A rated game ``user`` walked away from (settled: his offence then)."""
    return GameResult(
        table=table,
        game=1,
        variant="chuvash",
        chat=-100,
        places=(2, 1),
        loser=0,
        draw=False,
        seats=((user, f"U{user}"), (99, "U99")),
        at=at,
        rated=True,
        away=(0,),
        taken=(0,),
    )


async def one_offence_before(svc: TableService, clock: FakeClock, user: int) -> None:
    """An offence of ``user`` an hour ago: his next one means 10 minutes."""
    s = await svc.ratings.settle(
        walked_away(user, int(clock() * 1000) - 3_600_000, table=f"before{user}")
    )
    assert s is not None
    assert s.offences == {user: 0.0}


async def down(*_a: Any, **_k: Any) -> Any:
    raise ServiceUnavailable("Redis is unavailable: no answer from its master")


async def test_a_leave_cools_him_down_before_his_next_rated_game(
    svc: TableService, clock: FakeClock
) -> None:
    """He leaves a rated game, at once joins a rated lobby, sits at a casual one
    turned rated and is started: refused, the cooldown naming its end, while
    the AI still plays the game he left.  Its settlement later confirms the
    offence: not a second one, the cooldown not moved.  Before #38 nothing
    stopped him until that game's end."""
    await one_offence_before(svc, clock, 1)
    left = await new_table(svc, humans=2)  # users 1 and 2, rated
    await svc.lobbies.leave(left, 1)
    now = int(clock() * 1000)
    until = now + 600_000
    assert (await svc.tables.load(left)).table.status == "playing"  # the AI plays his seat
    me = await svc.ratings.of(1)
    assert (me.offences, me.cooldown_until) == (2, until)
    rated = await new_table(svc, humans=1, start=False, first_user=10)
    with pytest.raises(LiveError) as e:
        await svc.lobbies.join(rated, 1, "U1")
    assert e.value.code == "cooldown"
    assert (e.value.info["until"], e.value.info["left"]) == (until, 600)
    casual = await new_table(svc, humans=1, start=False, first_user=20)
    await svc.lobbies.configure(casual, 20, rated=False)
    await svc.lobbies.join(casual, 1, "U1")  # casual: never blocked
    await svc.lobbies.configure(casual, 20, rated=True)
    with pytest.raises(LiveError) as e:
        await svc.games.start(casual, 20)
    assert e.value.code == "cooldown"
    assert (e.value.info["name"], e.value.info["until"]) == ("U1", until)
    assert await svc.fairplay.cooldowns([1]) == {1: until}  # the arena's join asks this
    # the game he left ends later: confirmed, once, with the cooldown it set
    clock.advance(120)
    await play_out(svc, left, random.Random(4))
    s = await svc.ratings.settlement(left, 1)
    assert s is not None
    assert s.counted
    assert s.offences == {1: 600.0}
    me = await svc.ratings.of(1)
    assert (me.offences, me.cooldown_until) == (2, until)
    clock.advance(600 - 120)
    await svc.lobbies.leave(casual, 1)
    await svc.lobbies.join(rated, 1, "U1")  # over: rated games are his again


async def test_a_retried_leave_charges_once(svc: TableService, clock: FakeClock) -> None:
    """The same leave delivered twice (its request id), and asked again by the
    timer and by a check: one offence, one cooldown."""
    await one_offence_before(svc, clock, 1)
    tid = await new_table(svc, humans=2)
    first = await svc.lobbies.leave(tid, 1, request_id="leave-1")
    again = await svc.lobbies.leave(tid, 1, request_id="leave-1")
    assert again.duplicate
    assert again.version == first.version
    until = int(clock() * 1000) + 600_000
    clock.advance(svc.config.settle_check + 1)
    await svc.timers.tick()
    assert await svc.fairplay.cooldowns([1]) == {1: until}
    assert (await svc.ratings.of(1)).offences == 2
    await play_out(svc, tid, random.Random(6))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.offences == {1: 600.0}
    assert (await svc.ratings.of(1)).offences == 2
    assert await svc.ratings.cooldown(1) == until


@pytest.mark.parametrize("after", ["timer", "check", "retry"])
async def test_a_fault_after_the_leave_loses_no_offence(
    svc: TableService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, after: str
) -> None:
    """The leave's write goes through, its charge does not (the ratings' slot
    failed, or the process died between the two): the leave is not refused,
    and the offence is charged once -- by the table's timer, set in the
    leave's write; by the check before his next rated game, which finds the
    table through his pointer; or by the leave retried."""
    await one_offence_before(svc, clock, 1)
    tid = await new_table(svc, humans=2)
    with monkeypatch.context() as m:
        m.setattr(svc.ratings, "charge_leave", down)
        await svc.lobbies.leave(tid, 1, request_id="leave-1")
        clock.advance(svc.config.settle_check + 1)
        await svc.timers.tick()  # still down: tried again soon
    assert (await svc.tables.load(tid)).owed == [1]
    assert (await svc.ratings.of(1)).offences == 1
    if after == "timer":
        clock.advance(5)
        await svc.timers.tick()
        assert (await svc.tables.load(tid)).owed == []
    elif after == "retry":
        assert (await svc.lobbies.leave(tid, 1, request_id="leave-1")).duplicate
        assert await svc.tables.where(1) is None
    rated = await new_table(svc, humans=1, start=False, first_user=10)
    with pytest.raises(LiveError) as e:
        await svc.lobbies.join(rated, 1, "U1")
    assert e.value.code == "cooldown"
    now = int(clock() * 1000)
    assert e.value.info["until"] - now <= 600_000
    assert (await svc.ratings.of(1)).offences == 2
    clock.advance(svc.config.settle_check + 1)
    await svc.timers.tick()
    await play_out(svc, tid, random.Random(6))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.offences == {1: 600.0}
    assert (await svc.ratings.of(1)).offences == 2


async def test_an_operators_takeover_or_a_casual_leave_charges_nothing(
    svc: TableService, clock: FakeClock
) -> None:
    await one_offence_before(svc, clock, 1)
    tid = await new_table(svc, humans=2)
    await svc.admin.admin_hand_to_ai(tid, 0, by="ops")
    assert await svc.fairplay.cooldowns([1]) == {}
    assert (await svc.tables.load(tid)).owed == []
    casual = await new_table(svc, humans=2, start=False, first_user=3)
    await svc.lobbies.configure(casual, 3, rated=False)
    await svc.games.start(casual, 3)
    await svc.lobbies.leave(casual, 3)
    await one_offence_before(svc, clock, 3)  # so a second would mean a cooldown
    solo = await new_table(svc, humans=1, ais=1, first_user=5)  # an AI seat: casual
    await one_offence_before(svc, clock, 5)
    await svc.lobbies.leave(solo, 5)
    for user in (1, 3, 5):
        assert await svc.fairplay.cooldowns([user]) == {}
        assert (await svc.ratings.of(user)).offences == 1
    await play_out(svc, tid, random.Random(2))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.offences == {}
    assert await svc.fairplay.cooldowns([1]) == {}


async def test_a_leave_the_game_does_not_confirm_is_undone(
    svc: TableService, clock: FakeClock
) -> None:
    """Charged at the leave, but the game's end says no offence: he took his
    seat back and played to the end -- or everyone walked away.  The
    settlement undoes it, and his cooldown is what his other offences set."""
    await one_offence_before(svc, clock, 1)
    tid = await new_table(svc, humans=2)
    await svc.lobbies.leave(tid, 1)
    assert await svc.fairplay.cooldowns([1]) != {}
    await svc.games.take_seat_back(tid, 1)
    await play_out(svc, tid, random.Random(3))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.offences == {}
    assert await svc.fairplay.cooldowns([1]) == {}
    assert (await svc.ratings.of(1)).offences == 1
    # everyone walked away: he first, then his opponent
    await one_offence_before(svc, clock, 3)
    both = await new_table(svc, humans=2, first_user=3)
    await svc.lobbies.leave(both, 3)
    assert await svc.fairplay.cooldowns([3]) != {}
    await svc.lobbies.leave(both, 4)  # the AI plays it out at once
    s = await svc.ratings.settlement(both, 1)
    assert s is not None
    assert s.why == "abandoned"
    assert s.offences == {}
    assert await svc.fairplay.cooldowns([3]) == {}
    assert (await svc.ratings.of(3)).offences == 1


async def test_a_lifted_cooldown_stays_lifted(svc: TableService, clock: FakeClock) -> None:
    """An operator lifts the cooldown a leave set: neither the game's
    settlement nor a retried leave brings the offence back."""
    await one_offence_before(svc, clock, 1)
    tid = await new_table(svc, humans=2)
    await svc.lobbies.leave(tid, 1, request_id="leave-1")
    assert await svc.ratings.lift_cooldown(1) is True
    await svc.lobbies.leave(tid, 1, request_id="leave-1")
    assert await svc.fairplay.cooldowns([1]) == {}
    await play_out(svc, tid, random.Random(5))
    assert await svc.fairplay.cooldowns([1]) == {}
    assert (await svc.ratings.of(1)).offences == 0


async def _someone_out(svc: TableService) -> tuple[str, int, random.Random]:
    """A rated 3-player game under way with its first player out (RULES: no
    cards once the stock is gone); his seat."""
    for attempt in range(20):
        tid = await new_table(svc, humans=3, first_user=10 * attempt + 1)
        rng = random.Random(attempt)
        for _ in range(5000):
            _t, state, _v = await svc.tables.get(tid)
            assert state is not None
            if state.over:
                break
            if state.out:
                return tid, state.out[0], rng
            await human_move(svc, tid, rng)
    raise AssertionError("no game with a player out before its end")


async def test_leaving_once_out_keeps_his_place_and_charges_nothing(svc: TableService) -> None:
    """The first one out of a rated game leaves it (/leave: the one-table rule
    asks it of him before he sits elsewhere): no AI takes the out seat, he
    is not 'away' (ranked last), nothing is charged, and he is free at once
    (review2: he ranked last and took an offence)."""
    tid, out_seat, rng = await _someone_out(svc)
    table, _state, _v = await svc.tables.get(tid)
    assert table.rated_game
    winner = table.seats[out_seat].user
    assert winner is not None
    left = await svc.lobbies.leave(tid, winner)
    seat = left.table.seats[out_seat]
    assert seat.left
    assert seat.ai is None
    assert not seat.away
    assert await svc.tables.where(winner) is None  # free to sit elsewhere
    assert winner not in left.table.present()  # a rematch does not wait for him
    await play_out(svc, tid, rng)
    loaded = await svc.tables.load(tid)
    res = loaded.result
    assert res is not None
    await svc.tables.follow_up(loaded.table, res, loaded.result_previous_loser)
    assert res.places[out_seat] == 1
    assert out_seat not in res.away
    mine = await svc.ratings.of(winner)
    assert mine.offences == 0
    assert mine.ratings  # his win counted


async def test_an_operator_cannot_hand_an_out_seat_to_the_ai(svc: TableService) -> None:
    """Nothing is left to play there: an AI would only cost him his place."""
    tid, out_seat, _rng = await _someone_out(svc)
    before = await svc.tables.load(tid)
    with pytest.raises(LiveError) as e:
        await svc.admin.admin_hand_to_ai(tid, out_seat, by="ops")
    assert e.value.code == "not_allowed"
    assert (await svc.tables.load(tid)).version == before.version


async def test_his_own_leave_after_an_operators_takeover_is_his(svc: TableService) -> None:
    """An operator hands his seat to the AI; he takes it back, then -- losing --
    leaves: that is his walking away, ranked last and an offence kept
    (review3: the operator's excuse outlived the take-back and voided it)."""
    tid = await new_table(svc, humans=2)
    await svc.admin.admin_hand_to_ai(tid, 0, by="ops")
    await svc.games.take_seat_back(tid, 1)
    await svc.lobbies.leave(tid, 1)
    assert (await svc.ratings.of(1)).offences == 1
    await play_out(svc, tid, random.Random(5))
    res = (await svc.tables.load(tid)).result
    assert res is not None
    assert res.away == (0,)
    assert res.excused == ()
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted, s.why
    mine = s.change_of(1)
    assert mine is not None
    assert mine.after < mine.before
    assert (await svc.ratings.of(1)).offences == 1  # confirmed, not undone


async def test_a_leave_while_the_operators_ai_plays_is_his(svc: TableService) -> None:
    """The operator's AI plays his seat and he sends /leave meanwhile: his own
    act from then on, not excused."""
    tid = await new_table(svc, humans=2)
    await svc.admin.admin_hand_to_ai(tid, 0, by="ops")
    left = await svc.lobbies.leave(tid, 1)
    assert not left.table.seats[0].excused
    assert left.table.seats[0].taken


async def test_the_ais_help_after_a_block_counts_once_he_takes_the_seat_back(
    svc: TableService,
) -> None:
    """He blocks the bot (the AI plays his seat, no mark of his), unblocks and
    takes the seat back for the finish: the AI's help counts against his
    reliability, as for any seat taken back (review3: rated as his own play
    with no mark, cheaper than a timeout)."""
    tid = await new_table(svc, humans=2)
    await svc.admin.admin_hand_to_ai(tid, 0, by="bot:forbidden:blocked")
    await svc.games.take_seat_back(tid, 1)
    await play_out(svc, tid, random.Random(5))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted
    reliability = (await svc.ratings.of(1)).reliability
    assert reliability is not None
    assert reliability < 1.0


async def test_a_block_he_never_takes_back_costs_no_reliability(svc: TableService) -> None:
    """docs/RATINGS.md: the AI that took his seat because he blocked the bot is
    not held against his reliability while he leaves it be."""
    tid = await new_table(svc, humans=2)
    await svc.admin.admin_hand_to_ai(tid, 0, by="bot:forbidden:blocked")
    await play_out(svc, tid, random.Random(5))
    await svc.ratings.settlement(tid, 1)
    assert (await svc.ratings.of(1)).reliability == 1.0
