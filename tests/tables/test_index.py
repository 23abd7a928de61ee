"""The table index and its pruning by expiry score (:mod:`tables.index`):
the pruner drops the tables that really expired, keeps (and re-scores) the ones
renewed since, and reads only the entries whose score is past."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tables import TableService
from tests.tables._wire import Wire
from tests.tables.conftest import FakeClock


async def gone(svc: TableService, *tids: str) -> None:
    """Wait until Redis expired the tables' keys on its own."""
    keys = [key for tid in tids for key in svc.keys.table_keys(tid)]
    for _ in range(200):
        if not await svc.redis.exists(*keys):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the tables {tids} did not expire")


async def scores(svc: TableService, tid: str) -> tuple[float | None, float | None]:
    """The table's score in the index and in the expiry index."""
    k, r = svc.keys, svc.redis
    return await r.zscore(k.tables, tid), await r.zscore(k.tables_exp, tid)


async def test_each_status_change_scores_the_expiry(svc: TableService, clock: FakeClock) -> None:
    c = svc.config
    tid = (await svc.lobbies.create_lobby(1, "Ann")).table_id
    now = svc.tables.now_ms()
    assert await scores(svc, tid) == (now, now + c.lobby_ttl * 1000)
    await svc.lobbies.join(tid, 2, "Bob")
    clock.advance(5)
    await svc.games.start(tid, 1)
    now = svc.tables.now_ms()
    assert await scores(svc, tid) == (now, now + c.game_ttl * 1000)
    await svc.admin.admin_delete(tid, by="ops")
    assert await scores(svc, tid) == (None, None)


async def test_the_pruner_drops_a_table_that_expired(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    brief, svc = make_service(lobby_ttl=0.2), make_service()
    expired = (await brief.lobbies.create_lobby(1, "Ann")).table_id
    kept = (await svc.lobbies.create_lobby(2, "Bob")).table_id
    clock.advance(1)
    await gone(svc, expired)
    assert await svc.tables.index.prune() == 1
    assert await scores(svc, expired) == (None, None)
    assert None not in await scores(svc, kept)
    assert [t.id for t in (await svc.admin.table_page())[0]] == [kept]


async def test_a_renewed_table_is_rescored_not_dropped(svc: TableService, clock: FakeClock) -> None:
    tid = (await svc.lobbies.create_lobby(1, "Ann")).table_id
    _, first = await scores(svc, tid)
    clock.advance(3000)
    await svc.lobbies.join(tid, 2, "Bob")  # renews the lobby's TTL, no status change
    assert (await scores(svc, tid))[1] == first
    clock.advance(700)  # past the first expiry score: the entry is due
    assert first is not None
    assert first < svc.tables.now_ms()
    assert await svc.tables.index.prune() == 0
    listed, exp = await scores(svc, tid)
    assert listed is not None
    assert exp is not None
    assert exp > svc.tables.now_ms() + 3000 * 1000  # its real expiry, an hour after the join
    assert [t.id for t in (await svc.admin.table_page())[0]] == [tid]


async def test_the_pruner_reads_only_the_entries_due(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    wire = Wire()
    svc, brief = make_service(wire=wire), make_service(lobby_ttl=0.2)
    renewed = (await svc.lobbies.create_lobby(1, "Ann")).table_id
    clock.advance(3000)
    await svc.lobbies.join(renewed, 2, "Bob")
    fresh = [(await svc.lobbies.create_lobby(10 + i, f"U{i}")).table_id for i in range(5)]
    expired = [(await brief.lobbies.create_lobby(20 + i, f"E{i}")).table_id for i in range(2)]
    # nothing due (and its one look for unscored entries)
    assert await svc.tables.index.prune() == 0
    clock.advance(700)  # due: renewed's first score and the brief lobbies'
    await gone(svc, *expired)
    wire.reset()
    assert await svc.tables.index.prune(batch=2) == 2
    k = svc.keys
    checked = [c[1] for c in wire.named("PTTL")]
    assert sorted(checked) == sorted(k.table(t) for t in [renewed, *expired])  # no fresh one
    assert {c[1] for c in wire.named("ZRANGEBYSCORE")} == {k.tables_exp}
    assert not wire.named("HMGET", "HGETALL", "ZRANGE", "ZREVRANGE", "ZSCAN", "ZCARD", "ZDIFF")
    removed = {m for c in wire.named("ZREM") for m in c[2:]}
    assert removed == set(expired)
    for t in [*fresh, renewed]:
        assert None not in await scores(svc, t)


async def test_entries_from_before_the_expiry_index_are_checked_too(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    old, brief = make_service(), make_service(lobby_ttl=0.2)
    alive = (await old.lobbies.create_lobby(1, "Ann")).table_id
    expired = (await brief.lobbies.create_lobby(2, "Bob")).table_id
    k, r = old.keys, old.redis
    await r.zrem(k.tables_exp, alive, expired)  # as an older version indexed them
    await gone(old, expired)
    svc = make_service()  # a process of this version
    assert await svc.tables.index.prune() == 1
    assert await scores(svc, expired) == (None, None)
    listed, exp = await scores(svc, alive)
    assert listed is not None
    assert exp is not None
    assert exp > svc.tables.now_ms()  # its real expiry now
