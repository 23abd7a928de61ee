"""Moves through the table service: CAS, idempotency, AI seats, restart,
results, stats, rematch (C5/S5)."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from engine import ActionFormatError, IllegalAction
from tables import OVER, LiveError, Plan, StaleVersion, TableService
from tests.tables.conftest import new_table, play_out, replay_current_game, same_state


async def raw_table(svc: TableService, tid: str) -> tuple[dict[bytes | str, bytes | str], int]:
    r = svc.redis
    return await r.hgetall(svc.keys.table(tid)), await r.xlen(svc.keys.events(tid))


async def test_stale_version_and_illegal_moves_change_nothing(svc: TableService) -> None:
    tid = await new_table(svc, 2)
    table, state, version = await svc.tables.get(tid)
    assert state is not None
    seat = state.to_act()[0]
    user = table.seats[seat].user
    assert user is not None
    action = state.legal_actions(seat)[0]
    before = await raw_table(svc, tid)
    with pytest.raises(StaleVersion) as e:
        await svc.games.apply(tid, user, action.text(), version - 1)
    assert e.value.code == "stale_version"
    assert e.value.info["current"] == version
    with pytest.raises(IllegalAction) as ie:
        await svc.games.apply(tid, user, "K", version)  # take: nothing to take in the lead
    assert ie.value.code == "wrong_phase"
    other = table.seats[1 - seat].user
    assert other is not None
    with pytest.raises(IllegalAction) as ie:  # the other player's button
        await svc.games.apply(tid, other, action.text(), version)
    assert ie.value.code in ("card_not_in_hand", "not_your_turn")
    with pytest.raises(ActionFormatError):  # forged callback data
        await svc.games.apply(tid, user, "Zzz", version)
    with pytest.raises(LiveError) as le:
        await svc.games.apply(tid, 99, action.text(), version)
    assert le.value.code == "not_seated"
    assert await raw_table(svc, tid) == before
    r = await svc.games.apply(tid, user, action.text(), version)
    assert r.version == version + 1
    assert r.events[0].kind == "act"
    with pytest.raises(StaleVersion):  # a stale button from the old message
        await svc.games.apply(tid, user, action.text(), version)


async def test_same_request_is_applied_once(svc: TableService) -> None:
    tid = await new_table(svc, 2)
    table, state, version = await svc.tables.get(tid)
    assert state is not None
    seat = state.to_act()[0]
    user = table.seats[seat].user
    assert user is not None
    text = state.legal_actions(seat)[0].text()
    first = await svc.games.apply(tid, user, text, version, request_id="cb:123")
    again = await svc.games.apply(tid, user, text, version, request_id="cb:123")
    assert not first.duplicate
    assert again.duplicate
    assert again.version == first.version
    page = await svc.admin.event_page(tid)
    assert [e.kind for e in page].count("act") == 1
    # the duplicate is also recognised inside the CAS script (a racing copy)
    loaded = await svc.tables.load(tid)
    out = await svc.tables.write(loaded, Plan(loaded.table, loaded.state), request_id="cb:123")
    assert out.duplicate
    assert out.version == first.version
    with pytest.raises(LiveError) as e:
        await svc.games.apply(tid, user, text, first.version, request_id="bad id;=")
    assert e.value.code == "bad_request_id"


async def test_ai_seats_move_until_a_human_must_act(svc: TableService) -> None:
    for game in range(6):
        tid = await new_table(svc, 1, 3, variant="shchelkovsky", first_user=100 * game + 1)
        rng = random.Random(game)
        while True:
            table, state, _ = await svc.tables.get(tid)
            assert state is not None
            if state.over:
                break
            assert state.to_act()
            assert all(not table.seats[s].ai_controlled for s in state.to_act())
            seat = state.to_act()[0]
            _, _, v = await svc.tables.get(tid)
            user = table.seats[seat].user
            assert user is not None
            r = await svc.games.apply(tid, user, rng.choice(state.legal_actions(seat)).text(), v)
            assert r.changed_seats in ([], [0])
        assert same_state(state, await replay_current_game(svc, tid))


async def test_a_game_of_only_ai_after_the_human_leaves_plays_out(svc: TableService) -> None:
    tid = await new_table(svc, 1, 2)
    r = await svc.lobbies.leave(tid, 1)
    assert r.game_over
    assert r.table.status == OVER
    assert [e.kind for e in r.events][:2] == ["left", "takeover"]
    assert r.table.seats[0].left
    assert await svc.tables.where(1) is None
    _, state, _ = await svc.tables.get(tid)
    assert state is not None
    assert same_state(state, await replay_current_game(svc, tid))


async def test_a_second_instance_continues_the_game(
    make_service: Callable[..., TableService],
) -> None:
    first = make_service()
    tid = await new_table(first, 3, variant="shchelkovsky")
    rng = random.Random(7)
    for _ in range(15):
        from tests.tables.conftest import human_move

        await human_move(first, tid, rng)
    await first.aclose()
    second = make_service()
    await play_out(second, tid, rng)
    _, state, _ = await second.tables.get(tid)
    assert state is not None
    assert state.over
    assert same_state(state, await replay_current_game(second, tid))


async def test_result_stats_leaderboard_and_rematch(svc: TableService) -> None:
    tid = await new_table(svc, 3, chat=-42)
    await play_out(svc, tid, random.Random(3))
    table, state, _ = await svc.tables.get(tid)
    assert state is not None
    assert state.over
    assert table.status == OVER
    info = await svc.admin.table_info(tid)
    res = info.result
    assert res is not None
    assert res.game == 1
    assert res.loser == state.loser
    assert res.draw == state.draw
    places = res.places
    assert sorted(places) == [1, 2, 3] or state.draw
    for seat, s in enumerate(table.seats):
        assert s.user is not None
        st = (await svc.results.user_stats(s.user)).counts["chuvash"]
        assert st["games"] == 1
        assert st[f"p{places[seat]}"] == 1
        assert st.get("losses", 0) == int(seat == state.loser)
    board = await svc.results.leaderboard(-42)
    assert len(board) == 3
    assert sum(r.losses for r in board) == int(not state.draw)
    assert board[-1].losses == int(not state.draw)
    assert await svc.results.leaderboard(-42, "shchelkovsky") == []
    gstats = await svc.admin.global_stats()
    assert gstats.finished_24h == {"chuvash": 1}

    with pytest.raises(LiveError) as e:
        await svc.games.rematch(tid, 99)
    assert e.value.code == "not_seated"
    loser = state.loser
    for seat in (2, 1):  # #38: the others' yes first -- nothing starts before all agreed
        offered = await svc.games.rematch(tid, table.seats[seat].user or 0)
        assert offered.table.status == OVER
    r = await svc.games.rematch(tid, table.seats[0].user or 0)
    assert r.table.game_no == 2
    assert r.table.previous_loser == loser
    _, state2, _ = await svc.tables.get(tid)
    assert state2 is not None
    replay = await replay_current_game(svc, tid, previous_loser=loser)
    assert same_state(state2, replay)
    if loser is not None and state2.ply == 0:  # C5: the seat before the loser leads
        assert state2.attacker == (loser - 1) % 3
        assert state2.defender == loser
    await play_out(svc, tid, random.Random(4))
    assert (await svc.results.user_stats(table.seats[0].user or 0)).counts["chuvash"]["games"] == 2


async def test_rematch_needs_every_player_free(svc: TableService) -> None:
    """#38: a player who sits at another table cannot say yes to a rematch."""
    tid = await new_table(svc, 2)
    await play_out(svc, tid, random.Random(5))
    await svc.lobbies.create_lobby(2, "U2")  # seat 1's player is in a new lobby now
    assert (await svc.games.rematch(tid, 1)).table.status == OVER  # an offer, no game
    with pytest.raises(LiveError) as e:
        await svc.games.rematch(tid, 2)
    assert e.value.code == "seated_elsewhere"


async def test_seat_view(svc: TableService) -> None:
    tid = await new_table(svc, 2)
    mine = await svc.games.seat_view(tid, 1)
    hand = mine.view["hand"]
    assert mine.view["seat"] == 0
    assert isinstance(hand, list)
    assert len(hand) == 6
    assert mine.version >= 1
    public = await svc.games.seat_view(tid, 77)
    assert "hand" not in public.view


async def test_taking_a_seat_back_after_the_game_says_it_is_over(svc: TableService) -> None:
    """#41: *Take my seat back* pressed after the game ended was refused as
    ``not_seated`` («You do not play at this table.») -- he did play there."""
    tid = await new_table(svc, 2)
    table, _state, _ = await svc.tables.get(tid)
    await play_out(svc, tid, random.Random(4))
    user = table.seats[0].user
    assert user is not None
    with pytest.raises(LiveError) as e:
        await svc.games.take_seat_back(tid, user)
    assert (e.value.code, e.value.info.get("arena")) == ("game_over", False)
