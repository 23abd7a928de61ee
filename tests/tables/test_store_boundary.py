"""The service's own edges on the real Redis: its generic key-value API, the
notify channel, and ServiceUnavailable for a Redis that does not answer."""

from __future__ import annotations

import pytest

from sandbox.local_redis import free_loopback_port
from tables import LiveConfig, Notification, ServiceUnavailable, TableService
from tests.tables.conftest import new_table


async def test_kv_hashes_strings_batches_and_scripts(svc: TableService) -> None:
    kv = svc.kv
    p = svc.config.prefix
    assert kv.key("x:1") == f"{p}x:1"
    assert kv.table_key("abc", "ui") == f"{p}{{t:abc}}:ui"
    h = kv.key("h")
    before = svc.store.round_trips
    await kv.hupdate(h, set={"a": "1", "b": "2"}, ttl_ms=60_000)
    await kv.hupdate(h, set={"c": "3"}, delete=["a"], ttl_ms=60_000)
    assert svc.store.round_trips == before + 2  # one transaction each
    assert await kv.hgetall(h) == {"b": "2", "c": "3"}
    assert 0 < await kv.pttl(h) <= 60_000
    # fields deleted alone: one HDEL, the key's TTL as it was (#39)
    await kv.script("return redis.call('PEXPIRE', KEYS[1], 5000)")([h], [])
    before = svc.store.round_trips
    await kv.hupdate(h, delete=["c"], ttl_ms=60_000)
    assert svc.store.round_trips == before + 1
    assert await kv.hgetall(h) == {"b": "2"}
    assert 0 < await kv.pttl(h) <= 5_000
    assert await kv.hmget_many([h, kv.key("none")], ["b", "a"]) == [["2", None], [None, None]]
    s = kv.key("s")
    await kv.set(s, "v", ttl_ms=5_000)
    assert await kv.get(s) == "v"
    assert 0 < await kv.pttl(s) <= 5_000
    assert await kv.delete(s, h) == 2
    assert await kv.get(s) is None
    assert await kv.pttl(h) == -2
    script = kv.script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
    assert await script([kv.key("n")], [5]) == 5
    assert await script([kv.key("n")], [2]) == 7
    await kv.delete(kv.key("n"))


async def test_notifications_of_other_writers(svc: TableService) -> None:
    tid = await new_table(svc, 2)
    async with svc.notifications() as notes:
        assert await notes.get(timeout=0.05) is None
        r = await svc.admin.admin_hand_to_ai(tid, 0, by="ops")
        note = await notes.get(timeout=2)
        while note is None:  # pragma: no cover - a slow machine
            note = await notes.get(timeout=2)
        assert note == Notification(tid, r.version, "takeover")
        reset = await svc.admin.admin_reset(tid, to="lobby", by="ops")
        async for later in notes:  # the iterator form
            assert later == Notification(tid, reset.version, "reset")
            break


async def test_redis_failures_are_service_unavailable(redis_prefix: str) -> None:
    url = f"redis://127.0.0.1:{free_loopback_port()}/0"
    svc = TableService.from_url(url, LiveConfig(prefix=redis_prefix), max_connections=2)
    try:
        for call in (
            svc.admin.ping(),
            svc.tables.load("nope"),
            svc.kv.get(svc.kv.key("x")),
            svc.tables.where(1),
        ):
            with pytest.raises(ServiceUnavailable) as e:
                await call
            assert e.value.code == "unavailable"
        with pytest.raises(ServiceUnavailable):
            async with svc.notifications():
                pass  # pragma: no cover
    finally:
        await svc.aclose()
