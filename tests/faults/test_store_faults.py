"""The table service and the admin API across Redis outages (a real
redis-server killed with ``kill -9`` and restarted on the same port, or
SIGSTOPped and continued): a request during the outage fails fast as
``ServiceUnavailable`` (503 in the admin API), and the FIRST request after
Redis is back succeeds -- the pooled connections gone stale are retried on new
ones (redis-py ``Retry``)."""

from __future__ import annotations

import asyncio

import pytest

from admin_api import create_app
from admin_api.service import close_service
from engine import EngineError
from tables import (
    LiveConfig,
    LiveError,
    Notifications,
    ServiceUnavailable,
    SyncTableService,
    TableService,
)
from telegram_bot.usecases.cards import MyCards
from telegram_bot.views import texts
from tests.admin.conftest import ADMIN, auth
from tests.faults.conftest import FaultyRedis


async def _busy_pool(svc: TableService, n: int = 4) -> None:
    """Leave ``n`` connections in the pool (they go stale when Redis dies)."""
    await asyncio.gather(*(svc.store.ping() for _ in range(n)))


async def _drain(notes: Notifications) -> None:
    for _ in range(50):
        await notes.get(0.05)


@pytest.mark.parametrize("pool", [None, 8], ids=["pool", "blocking-pool"])
async def test_first_request_after_a_restart_succeeds(
    faulty_redis: FaultyRedis, pool: int | None
) -> None:
    svc = TableService.from_url(faulty_redis.url, LiveConfig(prefix="f:"), max_connections=pool)
    try:
        lobby = await svc.lobbies.create_lobby(1, "Ann", private=True)
        await _busy_pool(svc)
        faulty_redis.kill()
        with pytest.raises(ServiceUnavailable):
            await svc.lobbies.lobby(lobby.table.id)
        faulty_redis.start()
        assert (await svc.lobbies.lobby(lobby.table.id)).id == lobby.table.id  # the first one
        for _round in range(3):  # every time, not once
            await _busy_pool(svc)
            faulty_redis.restart()
            assert (await svc.lobbies.join(lobby.table.id, 2, "Bob")).table.seat_of(2) == 1
    finally:
        await svc.aclose()


async def test_a_stopped_redis_fails_the_request_then_serves_the_next(
    faulty_redis: FaultyRedis,
) -> None:
    svc = TableService.from_url(faulty_redis.url, LiveConfig(prefix="f:"), max_connections=8)
    try:
        lobby = await svc.lobbies.create_lobby(1, "Ann", private=True)
        await _busy_pool(svc)
        faulty_redis.pause()
        with pytest.raises(ServiceUnavailable):  # the socket timeout, not a hang
            await svc.lobbies.lobby(lobby.table.id)
        faulty_redis.resume()
        assert (await svc.lobbies.join(lobby.table.id, 2, "Bob")).table.seat_of(2) == 1
        # the join was applied once, however many times it was retried
        table = await svc.lobbies.lobby(lobby.table.id)
        assert [s.user for s in table.seats] == [1, 2]
    finally:
        await svc.aclose()


async def test_notifications_resubscribe_after_a_restart(faulty_redis: FaultyRedis) -> None:
    svc = TableService.from_url(faulty_redis.url, LiveConfig(prefix="f:"), max_connections=8)
    try:
        async with svc.notifications() as notes:
            assert await notes.get(0.05) is None
            faulty_redis.kill()
            with pytest.raises(ServiceUnavailable):
                await _drain(notes)
        faulty_redis.start()
        async with svc.notifications() as notes:
            await svc.redis.publish(svc.keys.notify, '{"table": "x", "version": 3}')
            note = None
            for _ in range(100):
                note = note or await notes.get(0.05)
            assert note is not None
            assert (note.table, note.version) == ("x", 3)
    finally:
        await svc.aclose()


def test_admin_api_first_request_after_a_restart_succeeds(faulty_redis: FaultyRedis) -> None:
    app = create_app(
        {
            "TESTING": True,
            "ADMIN_TOKEN": ADMIN,
            "REDIS_URL": faulty_redis.url,
            "REDIS_PREFIX": "fa:",
        }
    )
    try:
        client = app.test_client()
        assert client.get("/api/v1/stats", headers=auth()).status_code == 200
        for _round in range(3):
            faulty_redis.kill()
            down = client.get("/api/v1/stats", headers=auth())
            assert down.status_code == 503
            assert down.get_json()["error"]["code"] == "redis_unavailable"
            faulty_redis.start()
            assert client.get("/api/v1/stats", headers=auth()).status_code == 200
            faulty_redis.restart()  # stale connections, no failed request first
            assert client.get("/api/v1/stats", headers=auth()).status_code == 200
    finally:
        close_service(app)


def test_sync_service_survives_a_pause(faulty_redis: FaultyRedis) -> None:
    svc = SyncTableService(faulty_redis.url, LiveConfig(prefix="fs:"))
    try:
        assert svc.call(svc.service.admin.ping)
        faulty_redis.pause()
        with pytest.raises(ServiceUnavailable):
            svc.call(svc.service.admin.ping)
        faulty_redis.resume()
        assert svc.call(svc.service.admin.ping)
    finally:
        svc.close()


async def test_an_outage_is_no_refusal(faulty_redis: FaultyRedis) -> None:
    """An outage is not a :class:`LiveError` (#38): an ``except LiveError`` that
    means "not there" never sees one.  *My cards* pressed while Redis is down
    was answered "You do not play at this table" (its ``except EngineError``);
    now the outage reaches the bot's error handler, which answers "unavailable
    for a moment"."""
    svc = TableService.from_url(faulty_redis.url, LiveConfig(prefix="fo:"))
    try:
        lobby = await svc.lobbies.create_lobby(1, "Ann", chat=-100, variant="chuvash")
        await svc.lobbies.join(lobby.table.id, 2, "Bob")
        await svc.games.start(lobby.table.id, 1)
        cards = MyCards(svc)
        assert (await cards(lobby.table.id, 1, "q1")).said == texts.CARDS_HERE
        faulty_redis.kill()
        with pytest.raises(ServiceUnavailable) as raised:
            await cards(lobby.table.id, 1, "q2")
        assert not isinstance(raised.value, LiveError | EngineError)
        assert raised.value.to_json()["code"] == "unavailable"
        faulty_redis.start()
        assert (await cards(lobby.table.id, 1, "q3")).said == texts.CARDS_HERE
    finally:
        await svc.aclose()
