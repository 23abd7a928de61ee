"""#38 (points 1 and 17): a rematch seats only those who said yes.  The first
*Rematch* offers it for ``rematch_offer`` seconds (a ready check stored in
the table record); the next game starts once every present player of the
last game agreed, or when the offer ends with those who did -- the seats of
the others are AI seats, so that game is casual, and nothing of it (stats,
reliability, rating, offence) is theirs."""

from __future__ import annotations

import random

import pytest

from tables import OVER, PLAYING, LiveError, TableService
from tables.ratings import PlayerRatings
from tests.tables.conftest import FakeClock, new_table, play_out

ALICE, BOB, CAROL = 1, 2, 3


async def bob_walks_out_of_game_one(svc: TableService) -> str:
    """A rated game of Alice and Bob: Bob leaves mid-game, the AI plays his
    seat to the end (his offence, his last place: settled)."""
    tid = await new_table(svc, humans=2)
    await svc.lobbies.leave(tid, BOB)
    await play_out(svc, tid, random.Random(1))
    table, _s, _v = await svc.tables.get(tid)
    assert table.status == OVER
    first = await svc.ratings.settlement(tid, 1)
    assert first is not None
    assert first.counted  # he walked out of a rated game: that one counts, against him
    return tid


async def his_record(svc: TableService, user: int) -> tuple[object, PlayerRatings]:
    return (await svc.results.user_stats(user)).counts, await svc.ratings.of(user)


async def test_a_player_who_left_is_not_dealt_into_the_rematch(svc: TableService) -> None:
    """Bob left game 1; Alice presses *Rematch*: the game starts at once (the
    only present player said yes) without Bob -- his seat is an AI seat, the
    game is not rated, and when it is over Bob's stats, reliability, rating
    and offences are what game 1 left them."""
    tid = await bob_walks_out_of_game_one(svc)
    bob_before = await his_record(svc, BOB)
    alice_before = (await svc.ratings.of(ALICE)).ratings
    started = await svc.games.rematch(tid, ALICE)
    t = started.table
    assert t.status == PLAYING
    assert t.game_no == 2
    assert [s.user for s in t.seats] == [ALICE, None]  # Bob is not seated
    assert t.seats[1].ai is not None
    assert not t.rated_now
    assert await svc.tables.where(BOB) is None  # free to sit elsewhere
    await play_out(svc, tid, random.Random(2))
    # Alice alone against the AI: a solo game writes no rating data (#38, 21)
    assert await svc.ratings.settlement(tid, 2) is None
    assert await his_record(svc, BOB) == bob_before
    assert (await svc.ratings.of(ALICE)).ratings == alice_before


async def test_a_player_who_left_is_dealt_in_when_he_says_yes(svc: TableService) -> None:
    """Bob left game 1 but presses *Rematch* himself: the offer waits for
    Alice (present), her yes starts a rated game with both -- he is back."""
    tid = await bob_walks_out_of_game_one(svc)
    offered = await svc.games.rematch(tid, BOB)
    assert offered.table.status == OVER
    assert offered.table.rematch is not None
    assert offered.table.rematch.agreed == (BOB,)
    started = await svc.games.rematch(tid, ALICE)
    t = started.table
    assert t.status == PLAYING
    assert [s.user for s in t.seats] == [ALICE, BOB]
    assert not any(s.away for s in t.seats)
    assert t.rated_now


async def test_two_players_who_both_agree_start_a_rated_rematch_at_once(
    svc: TableService, clock: FakeClock
) -> None:
    """Alice's yes offers the rematch (nothing starts, nobody is dealt in);
    Bob's yes starts it at once, rated, under the loser (C5)."""
    tid = await new_table(svc, humans=2)
    await play_out(svc, tid, random.Random(3))
    loser = (await svc.tables.get(tid))[0].previous_loser
    offered = await svc.games.rematch(tid, ALICE)
    t = offered.table
    assert t.status == OVER
    assert t.game_no == 1
    assert t.rematch is not None
    assert t.rematch.agreed == (ALICE,)
    assert t.rematch.until == int(clock() * 1000) + 60_000
    again = await svc.games.rematch(tid, ALICE)  # his yes stands: nothing written
    assert again.version == offered.version
    assert not again.events
    with pytest.raises(LiveError) as e:  # a stranger
        await svc.games.rematch(tid, 99)
    assert (e.value.code, e.value.info.get("action")) == ("not_seated", "rematch")
    clock.advance(30)
    started = await svc.games.rematch(tid, BOB, game=1)
    t = started.table
    assert t.status == PLAYING
    assert t.game_no == 2
    assert t.previous_loser == loser
    assert t.rematch is None
    assert [s.user for s in t.seats] == [ALICE, BOB]
    assert t.rated_now
    with pytest.raises(LiveError) as e:  # game 1's Rematch pressed again: stale
        await svc.games.rematch(tid, ALICE, game=1)
    assert (e.value.code, e.value.info.get("action")) == ("not_allowed", "rematch_stale")
    await play_out(svc, tid, random.Random(4))
    second = await svc.ratings.settlement(tid, 2)
    assert second is not None
    assert second.counted


async def test_one_yes_and_the_offer_ends_starts_a_casual_game_without_the_others(
    svc: TableService, clock: FakeClock
) -> None:
    """Alice says yes, Bob walked away without a word: nothing starts until the
    offer ends; then the timers start the game with Alice alone, an AI in
    Bob's seat, not rated; Bob is charged nothing for it (stats, reliability,
    rating, offence) and was free all along."""
    tid = await new_table(svc, humans=2, timer=30)
    await play_out(svc, tid, random.Random(5))
    await svc.timers.tick()  # the first game's follow-ups (its settle check)
    bob_before = await his_record(svc, BOB)
    await svc.games.rematch(tid, ALICE)
    clock.advance(59)
    assert not await svc.timers.tick()  # the offer still stands
    assert (await svc.tables.get(tid))[0].status == OVER
    assert await svc.tables.where(BOB) is None
    clock.advance(2)
    written = await svc.timers.tick()
    assert [r.table_id for r in written] == [tid]
    t, _s, _v = await svc.tables.get(tid)
    assert t.status == PLAYING
    assert t.game_no == 2
    assert [s.user for s in t.seats] == [ALICE, None]
    assert t.creator == ALICE
    assert not t.rated_now
    with pytest.raises(LiveError) as e:  # Bob's late press on game 1's result
        await svc.games.rematch(tid, BOB, game=1)
    assert e.value.info.get("action") == "rematch_stale"
    await play_out(svc, tid, random.Random(6))
    assert await svc.ratings.settlement(tid, 2) is None  # a solo game (#38, 21)
    assert await his_record(svc, BOB) == bob_before


async def test_a_yes_lapses_when_he_sits_elsewhere_at_the_deadline(
    svc: TableService, clock: FakeClock
) -> None:
    """A player who said yes and then sat at another table is left out when
    the offer ends; nobody left to seat: the offer lapses, no game."""
    tid = await new_table(svc, humans=2)
    await play_out(svc, tid, random.Random(7))
    await svc.games.rematch(tid, ALICE)
    await svc.lobbies.create_lobby(ALICE, "U1")  # she opens a lobby elsewhere meanwhile
    await svc.lobbies.create_lobby(BOB, "U2")
    with pytest.raises(LiveError) as e:  # and Bob, at a lobby of his, cannot say yes
        await svc.games.rematch(tid, BOB)
    assert e.value.code == "seated_elsewhere"
    clock.advance(61)
    await svc.timers.tick()
    t, _s, _v = await svc.tables.get(tid)
    assert t.status == OVER
    assert t.game_no == 1
    assert t.rematch is None
    assert (await svc.tables.where(ALICE)) is not None  # still at her lobby
    assert (await svc.tables.where(ALICE)).id != tid  # type: ignore[union-attr]


async def test_three_players_two_agree_the_third_is_replaced_at_the_deadline(
    svc: TableService, clock: FakeClock
) -> None:
    """With three, two yeses wait for the third; at the deadline the two
    play, an AI in the third's seat (the lobby's level)."""
    tid = await new_table(svc, humans=3)
    await play_out(svc, tid, random.Random(8))
    await svc.games.rematch(tid, CAROL)
    offered = await svc.games.rematch(tid, ALICE)
    assert offered.table.rematch is not None
    assert offered.table.rematch.agreed == (CAROL, ALICE)
    clock.advance(61)
    await svc.timers.tick()
    t, _s, _v = await svc.tables.get(tid)
    assert t.status == PLAYING
    assert [s.user for s in t.seats] == [ALICE, None, CAROL]
    assert t.seats[1].ai == t.ai_kind
