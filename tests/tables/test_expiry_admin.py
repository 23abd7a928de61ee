"""Expiry (TTLs, capped logs, trimmed indexes) and the admin operations."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import threading
from collections.abc import Callable

import pytest

from tables import CANCELLED, OPEN, PLAYING, LiveConfig, LiveError, SyncTableService, TableService
from tests.tables.conftest import FakeClock, new_table, play_out


async def pttl(svc: TableService, key: str) -> int:
    r = svc.redis
    return int(await r.pttl(key))


async def test_ttls_follow_the_table_status(make_service: Callable[..., TableService]) -> None:
    svc = make_service(log_chunk=1)  # every write flushes its events to the stream
    c = svc.config
    k = svc.keys
    tid = await new_table(svc, 2, start=False)
    assert 0 < await pttl(svc, k.table(tid)) <= c.lobby_ttl * 1000
    assert 0 < await pttl(svc, k.events(tid)) <= c.lobby_ttl * 1000
    assert 0 < await pttl(svc, k.user(1)) <= c.user_ttl * 1000
    await svc.games.start(tid, 1)
    assert c.lobby_ttl * 1000 < await pttl(svc, k.table(tid)) <= c.game_ttl * 1000
    await play_out(svc, tid, random.Random(2))
    assert 0 < await pttl(svc, k.table(tid)) <= c.finished_ttl * 1000
    assert 0 < await pttl(svc, k.events(tid)) <= c.finished_ttl * 1000
    assert 0 < await pttl(svc, k.stats(1)) <= c.stats_ttl * 1000
    assert 0 < await pttl(svc, k.top(-100)) <= c.stats_ttl * 1000


async def test_an_idle_lobby_really_expires(make_service: Callable[..., TableService]) -> None:
    svc = make_service(lobby_ttl=0.2)
    tid = (await svc.lobbies.create_lobby(1, "Ann")).table_id
    for _ in range(100):  # Redis expires the keys on its own
        if not await svc.redis.exists(*svc.keys.table_keys(tid)):
            break
        await asyncio.sleep(0.05)
    with pytest.raises(LiveError) as e:
        await svc.lobbies.lobby(tid)
    assert e.value.code == "no_table"
    assert await svc.tables.where(1) is None
    await svc.lobbies.create_lobby(1, "Ann")  # the stale pointer does not hold him
    assert await svc.admin.list_tables(status=OPEN) != []
    assert tid not in [t.id for t in await svc.admin.list_tables()]
    assert not await svc.redis.zscore(svc.keys.tables, tid)  # pruned from the index


async def test_event_log_and_finished_index_are_capped(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    svc = make_service(events_maxlen=3, log_chunk=200)
    tid = await new_table(svc, 2, variant="shchelkovsky")
    await play_out(svc, tid, random.Random(9))
    assert await svc.redis.xlen(svc.keys.events(tid)) == 3
    kept = await svc.admin.event_page(tid, 0, 100_000)
    assert kept[0].kind != "create"
    assert kept[-1].kind == "over"
    first = await svc.redis.zrange(svc.keys.finished, 0, -1)
    clock.advance(8 * 86400)
    other = await new_table(svc, 2, first_user=50)
    await play_out(svc, other, random.Random(1))
    now = await svc.redis.zrange(svc.keys.finished, 0, -1)
    assert len(first) == 1
    assert len(now) == 1
    assert first != now
    assert (await svc.admin.global_stats()).finished_24h == {"chuvash": 1}


async def test_admin_reads(svc: TableService) -> None:
    a = await new_table(svc, 2, chat=-1)
    b = await new_table(svc, 2, variant="shchelkovsky", chat=-2, first_user=10, start=False)
    assert {t.id for t in await svc.admin.list_tables()} == {a, b}
    assert [t.id for t in await svc.admin.list_tables(status=PLAYING)] == [a]
    assert [t.id for t in await svc.admin.list_tables(variant="shchelkovsky")] == [b]
    assert [t.id for t in await svc.admin.list_tables(chat=-1)] == [a]
    assert [t.id for t in await svc.admin.list_tables(user=11)] == [b]
    assert len(await svc.admin.list_tables(limit=1)) == 1
    info = await svc.admin.table_info(a)
    assert info.summary.status == PLAYING
    assert info.state
    assert len(info.state["hands"]) == 2
    assert info.version >= 3
    assert info.to_act
    page1 = await svc.admin.event_page(a, count=2)
    page2 = await svc.admin.event_page(a, after_version=page1[-1].version, count=50)
    assert [(e.kind, e.seat, e.text) for e in page1] == [("create", 0, "1"), ("join", 1, "2")]
    assert page2[0].kind == "start"
    assert page2[0].version == page1[-1].version + 1
    p = await svc.admin.player(11)
    assert p.table is not None
    assert p.table.id == b
    assert p.stats.counts == {}
    g = await svc.admin.global_stats()
    assert (g.live_games, g.open_lobbies, g.active_players) == (1, 1, 4)


async def test_admin_writes_are_logged_and_published(svc: TableService) -> None:
    # aclosing(): redis-py leaves PubSub.aclose() unannotated; the context manager is typed
    await svc.store.ready()  # a cluster client learns its slot map first
    async with contextlib.aclosing(svc.redis.pubsub()) as pubsub:
        await pubsub.subscribe(svc.keys.notify)
        try:
            tid = await new_table(svc, 2)
            r = await svc.admin.admin_hand_to_ai(tid, 0, by="ops")
            assert r.table.seats[0].ai_controlled
            _, state, _ = await svc.tables.get(tid)
            assert state is not None
            assert state.over or 0 not in state.to_act()
            with pytest.raises(LiveError):
                await svc.admin.admin_hand_to_ai(tid, 9)
            if not state.over:
                r = await svc.admin.admin_reset(tid, to="lobby", by="ops")
                assert r.table.status == OPEN
                assert r.table.seats[0].ai is None
                assert (await svc.tables.get(tid))[1] is None
                assert await svc.tables.where(1) is not None  # still seated in the lobby
                await svc.games.start(tid, 1)  # and can start again
            r = await svc.admin.admin_reset(tid, to="abort", by="ops")
            assert r.table.status == CANCELLED
            assert await svc.tables.where(1) is None
            r = await svc.admin.admin_delete(tid, by="ops")
            assert not await svc.redis.exists(*svc.keys.table_keys(tid))
            assert tid not in [t.id for t in await svc.admin.list_tables()]
            got = []
            for _ in range(200):
                msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.05)
                if msg:
                    got.append(json.loads(msg["data"]))
                if got and got[-1]["kind"] == "delete":
                    break
            assert got[0]["kind"] == "takeover"
            assert got[-1] == {"version": r.version, "table": tid, "kind": "delete"}
        finally:
            await pubsub.unsubscribe()


def test_sync_wrapper_for_flask(redis_url: str, redis_prefix: str) -> None:
    svc = SyncTableService(redis_url, LiveConfig(prefix=redis_prefix))
    try:
        r = svc.call(svc.service.lobbies.create_lobby, 1, "Ann", chat=-3)
        assert svc.call(svc.service.admin.list_tables, status=OPEN)[0].id == r.table_id
        errors: list[LiveError] = []

        def worker() -> None:  # gunicorn threads share one instance
            try:
                svc.call(svc.service.admin.table_info, r.table_id)
            except LiveError as e:  # pragma: no cover
                # a refusal or ServiceUnavailable; any other exception escapes the
                # thread, and pytest's unhandled-thread-exception warning (an error
                # here) fails the test
                errors.append(e)

        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert svc.service.keys.prefix == redis_prefix
    finally:
        svc.close()


async def test_table_page_by_cursor_reads_in_order_and_filters(
    svc: TableService, clock: FakeClock
) -> None:
    tids = []
    for i in range(7):
        tids.append(await new_table(svc, 2, chat=-1 if i % 2 else -2, first_user=10 * i + 1))
        if i != 3:  # two tables changed in the same millisecond: ids order them
            clock.advance(1)
    everything = [t.id for t in await svc.admin.list_tables()]
    for limit in (1, 2, 3, 10):
        seen: list[str] = []
        cursor = ""
        while True:
            page, cursor = await svc.admin.table_page(cursor=cursor, limit=limit)
            assert len(page) <= limit
            seen += [t.id for t in page]
            if not cursor:
                break
        assert seen == everything, limit
    odd, _ = await svc.admin.table_page(limit=10, chat=-1)
    assert [t.id for t in odd] == [t for t in everything if t in tids[1::2]]
    with pytest.raises(LiveError) as e:
        await svc.admin.table_page(cursor="x")
    assert e.value.code == "bad_cursor"


async def test_reset_to_lobby_only_of_a_game_in_progress(svc: TableService) -> None:
    """An ended table's players are free: an operator's reset to its lobby
    would seat a player who moved on at two live tables, both startable
    (review2). Refused; the table is unchanged."""
    a = await new_table(svc, humans=2)  # users 1 and 2, a game on
    await svc.admin.admin_reset(a, to="abort", by="ops")
    b = (await svc.lobbies.create_lobby(1, "U1", chat=-200)).table.id  # he moved on
    before = await svc.tables.load(a)
    with pytest.raises(LiveError) as e:
        await svc.admin.admin_reset(a, to="lobby", by="ops")
    assert e.value.code == "not_allowed"
    after = await svc.tables.load(a)
    assert after.version == before.version
    assert after.table.status == CANCELLED
    where = await svc.tables.where(1)
    assert where is not None
    assert where.id == b
