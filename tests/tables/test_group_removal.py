"""The bot removed from a group mid-game is a user's act (#38): a player who
kicks it to escape a rated game he is losing forfeits it -- the game recorded
as rated, him ranked last, the walk-away offence charged by its settlement --
once, however often the removal is delivered; a removal by anybody who does
not play that game (an admin, a player already out) charges nobody and voids
it, as before.  What a cheater would try, on a real Redis (one server and a
cluster)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import pytest

from tables import CANCELLED, OVER, LiveError, TableService
from tables.groups import REMOVED, UPGRADED
from tests.tables.conftest import FakeClock, human_move, new_table, play_out
from tests.tables.test_leave_cooldown import one_offence_before

CHAT = -100  # new_table's group


async def offences(svc: TableService, *users: int) -> dict[int, int]:
    return {u: (await svc.ratings.of(u)).offences for u in users}


async def test_the_player_who_kicks_the_bot_loses_the_rated_game_and_is_charged(
    svc: TableService, clock: FakeClock
) -> None:
    """Users 1-3 play a rated game; 2 (with an offence of an hour ago) kicks
    the bot.  The game ends now, rated: 2 ranks last and his rating falls, the
    others tie above him and gain; 2 is charged the walk-away offence (his
    second: a 10-minute cooldown), nobody else.  Before, the game was
    cancelled without a result: nobody lost anything."""
    await one_offence_before(svc, clock, 2)
    tid = await new_table(svc, humans=3)  # users 1, 2, 3: seats 0, 1, 2
    rng = random.Random(38)
    for _ in range(2):
        await human_move(svc, tid, rng)
    before = await svc.ratings.many([1, 2, 3], "chuvash")

    closed = await svc.groups.close(CHAT, REMOVED, by=2)

    assert [t.id for t in closed.forfeited] == [tid]
    assert closed.forfeits().keys() == {1, 2, 3}
    loaded = await svc.tables.load(tid)
    assert (loaded.table.status, loaded.table.stopped) == (OVER, REMOVED)
    res = loaded.result
    assert res is not None
    assert (res.loser, res.draw, res.rated, res.places) == (1, False, True, (1, 3, 1))
    assert (res.away, res.taken) == ((1,), (1,))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted
    assert s.offences == {2: 600.0}
    after = await svc.ratings.many([1, 2, 3], "chuvash")
    assert after[2].shown < before[2].shown
    assert after[1].shown > before[1].shown
    assert after[3].shown > before[3].shown
    assert await offences(svc, 1, 2, 3) == {1: 0, 2: 2, 3: 0}
    assert await svc.fairplay.cooldowns([1, 2, 3]) == {2: int(clock() * 1000) + 600_000}
    stats = await svc.results.user_stats(2)
    assert stats.counts["chuvash"]["losses"] == 1
    for u in (1, 2, 3):
        assert await svc.tables.where(u) is None  # free to play elsewhere
    with pytest.raises(LiveError) as e:  # the group is lost: no rematch there
        await svc.games.rematch(tid, 1)
    assert e.value.info.get("action") == "rematch"


async def one_out(svc: TableService, chat: int, first_user: int) -> tuple[str, int, list[int]]:
    """A rated game of three in ``chat`` in which one player's hand emptied and
    two still play: the table, the seat out and the seats still in."""
    for seed in range(60):
        svc.games.new_seed = lambda seed=seed: seed  # type: ignore[misc]
        tid = await new_table(svc, humans=3, chat=chat, first_user=first_user + 3 * seed)
        rng = random.Random(seed)
        while True:
            _t, state, _v = await svc.tables.get(tid)
            assert state is not None
            if state.over or state.out:
                break
            await human_move(svc, tid, rng)
        if not state.over and len(state.out) == 1:
            [out] = state.out
            return tid, out, [i for i in range(3) if i != out]
    raise AssertionError("no game with one player out")  # pragma: no cover - fixed seeds


async def test_players_out_already_keep_their_places(svc: TableService) -> None:
    """A player whose hand emptied already is placed first; the remover, still
    in, last; the other still in between.  The one out, kicking the bot
    instead, forfeits nothing -- his place is fixed, he has nothing left to
    lose -- and the game is void as for a non-player."""
    tid, out, still = await one_out(svc, -101, 100)
    table, _s, _v = await svc.tables.get(tid)
    remover = table.seats[still[1]].user
    closed = await svc.groups.close(-101, REMOVED, by=remover)
    res = (await svc.tables.load(tid)).result
    assert [t.id for t in closed.forfeited] == [tid]
    assert res is not None
    places = [0, 0, 0]
    places[out], places[still[0]], places[still[1]] = 1, 2, 3
    assert (res.places, res.loser, res.away) == (tuple(places), still[1], (still[1],))

    tid, out, _still = await one_out(svc, -102, 1000)
    table, _s, _v = await svc.tables.get(tid)
    void = await svc.groups.close(-102, REMOVED, by=table.seats[out].user)
    assert void.forfeited == []
    loaded = await svc.tables.load(tid)
    assert (loaded.table.status, loaded.result) == (CANCELLED, None)


async def test_a_non_playing_admins_removal_charges_nobody(
    svc: TableService, clock: FakeClock
) -> None:
    """An admin who does not play kicks the bot: the rated game is void -- no
    result, no rating change, no offence -- they did nothing.  A casual game's
    player kicking it voids his game as well (nothing of it counts)."""
    rated = await new_table(svc, humans=2)
    casual = await new_table(svc, humans=2, first_user=5, rated=False)
    closed = await svc.groups.close(CHAT, REMOVED, by=99)
    assert closed.forfeited == []
    assert sorted(t.id for t in closed.stopped) == sorted([rated, casual])
    for tid in (rated, casual):
        loaded = await svc.tables.load(tid)
        assert (loaded.table.status, loaded.table.stopped, loaded.result) == (
            CANCELLED,
            REMOVED,
            None,
        )
    assert await offences(svc, 1, 2, 5, 6, 99) == dict.fromkeys((1, 2, 5, 6, 99), 0)
    assert all(r.games == 0 for r in (await svc.ratings.of(1)).ratings.values())

    casual = await new_table(svc, humans=2, first_user=7, rated=False)
    closed = await svc.groups.close(CHAT, REMOVED, by=7)  # seated, but casual
    assert closed.forfeited == []
    assert (await svc.tables.load(casual)).result is None


async def test_an_upgrade_names_no_remover(svc: TableService) -> None:
    """An upgrade is no removal: nobody forfeits, whoever Telegram names."""
    tid = await new_table(svc, humans=2)
    closed = await svc.groups.close(CHAT, UPGRADED, by=1)
    assert (closed.by, closed.forfeited) == (None, [])
    assert (await svc.tables.load(tid)).result is None


async def test_the_same_removal_twice_or_in_two_processes_records_once(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """The removal delivered twice to one process, and to two processes at
    once: the game ends once, one result, one settlement, one offence, one
    loss in the stats; the second call reports nothing to tell."""
    svc, other = make_service(), make_service()
    tid = await new_table(svc, humans=2)
    first, second = await asyncio.gather(
        svc.groups.close(CHAT, REMOVED, by=1), other.groups.close(CHAT, REMOVED, by=1)
    )
    assert sorted(len(c.forfeited) for c in (first, second)) == [0, 1]
    again = await svc.groups.close(CHAT, REMOVED, by=1)
    assert (again.forfeited, again.stopped, again.anything) == ([], [], False)
    loaded = await svc.tables.load(tid)
    assert loaded.result is not None
    assert (loaded.result.game, loaded.table.game_no) == (1, 1)
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted
    assert s.offences == {1: 0.0}  # his first: a warning
    assert await offences(svc, 1, 2) == {1: 1, 2: 0}
    assert (await svc.results.user_stats(1)).counts["chuvash"]["games"] == 1
    mine = await svc.ratings.of(1)
    assert mine.ratings["chuvash"].games == 1


async def test_an_upgrade_voids_the_old_groups_games_once_and_never_the_supergroups(
    svc: TableService,
) -> None:
    """#38: an upgrade is a fault (the old messages cannot be edited): the old
    group's rated game is void, nobody charged.  It cannot be used again: a
    group is upgraded once (a supergroup never is), and every later word of
    that upgrade -- the supergroup's own service message, a 400 with
    ``migrate_to_chat_id`` -- names the old id, which holds nothing any more:
    the rated game the players then start in the supergroup plays on."""
    old, new = -200, -1_001_000_000_200
    void = await new_table(svc, humans=2, chat=old)
    first = await svc.groups.close(old, UPGRADED)
    assert [t.id for t in first.stopped] == [void]
    assert (await svc.tables.load(void)).result is None
    assert await offences(svc, 1, 2) == {1: 0, 2: 0}

    here = await new_table(svc, humans=2, chat=new)  # the same players, in the supergroup
    for _ in range(3):  # the upgrade's other updates, late or again
        again = await svc.groups.close(old, UPGRADED)
        assert (again.arena, again.stopped, again.anything) == (None, [], False)
    loaded = await svc.tables.load(here)
    assert (loaded.table.status, loaded.table.chat) == ("playing", new)
    await play_out(svc, here, random.Random(2))
    s = await svc.ratings.settlement(here, 1)
    assert s is not None
    assert s.counted


async def test_a_player_who_left_and_then_kicks_the_bot_still_loses(
    svc: TableService, clock: FakeClock
) -> None:
    """He leaves his rated game (the AI plays on; his offence charged at once),
    then kicks the bot to void the loss his leave will bring: the game ends as
    his loss all the same, and its settlement confirms that one offence --
    not a second.  Before, the game was void: his rating never fell."""
    tid = await new_table(svc, humans=2)
    await svc.lobbies.leave(tid, 1)
    assert await offences(svc, 1) == {1: 1}
    before = await svc.ratings.many([1, 2], "chuvash")

    closed = await svc.groups.close(CHAT, REMOVED, by=1)

    assert [t.id for t in closed.forfeited] == [tid]
    assert 1 in closed.players()  # told, though he had left
    res = (await svc.tables.load(tid)).result
    assert res is not None
    assert (res.loser, res.away, res.taken) == (0, (0,), (0,))
    s = await svc.ratings.settlement(tid, 1)
    assert s is not None
    assert s.counted
    assert s.offences == {1: 0.0}  # the leave's, confirmed
    assert await offences(svc, 1, 2) == {1: 1, 2: 0}
    after = await svc.ratings.many([1, 2], "chuvash")
    assert after[1].shown < before[1].shown
    assert after[2].shown > before[2].shown
