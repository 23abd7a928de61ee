"""The blocking access of the admin API (SyncTableService) on the real Redis:
``call`` reaches every operation the admin API uses and returns its typed
result."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from tables import (
    OPEN,
    PLAYING,
    AuditPage,
    GlobalStats,
    LiveConfig,
    LiveError,
    PlayerInfo,
    SyncTableService,
    TableInfo,
    TableSummary,
)


@pytest.fixture
def sync(redis_url: str, redis_prefix: str) -> Iterator[SyncTableService]:
    svc = SyncTableService(redis_url, LiveConfig(prefix=redis_prefix))
    yield svc
    svc.close()


def test_lobby_game_and_reads(sync: SyncTableService) -> None:
    assert sync.call(sync.service.admin.ping) is True
    tid = sync.call(sync.service.lobbies.create_lobby, 1, "Ann", chat=-5).table_id
    assert sync.call(sync.service.lobbies.join, tid, 2, "Bob").table.seat_of(2) == 1
    assert sync.call(sync.service.lobbies.add_ai, tid, 1).table.seats[2].ai is not None
    assert sync.call(sync.service.lobbies.lobby, tid).status == OPEN
    assert sync.call(sync.service.games.start, tid, 1).table.status == PLAYING
    table, state, version = sync.call(sync.service.tables.get, tid)
    assert state is not None
    assert version == table.game_no + 3
    assert sync.call(sync.service.tables.where, 2) == table
    [row] = sync.call(sync.service.admin.list_tables, status=PLAYING)
    assert isinstance(row, TableSummary)
    assert row.id == tid
    assert row.version == version
    info = sync.call(sync.service.admin.table_info, tid)
    assert isinstance(info, TableInfo)
    assert info.version == version
    assert info.state is not None
    assert info.to_json()["seats"][1] == {
        "user": 2,
        "name": "Bob",
        "ai": None,
        "timeouts": 0,
        "left": False,
    }
    kinds = [e.kind for e in sync.call(sync.service.admin.event_page, tid)]
    assert kinds[:4] == ["create", "join", "add_ai", "start"]
    player = sync.call(sync.service.admin.player, 2)
    assert isinstance(player, PlayerInfo)
    assert player.table is not None
    assert player.table.id == tid
    stats = sync.call(sync.service.admin.global_stats)
    assert isinstance(stats, GlobalStats)
    assert (stats.live_games, stats.active_players) == (1, 2)
    assert sync.service.tables.now_ms() > 0
    assert sync.service.keys.prefix == sync.service.config.prefix


def test_admin_writes_and_audit(sync: SyncTableService) -> None:
    tid = sync.call(sync.service.lobbies.create_lobby, 1, "Ann", chat=-5).table_id
    sync.call(sync.service.lobbies.join, tid, 2, "Bob")
    version = sync.call(sync.service.games.start, tid, 1).version
    with pytest.raises(LiveError) as e:
        sync.call(sync.service.admin.admin_hand_to_ai, tid, 0, by="ops", expected=version - 1)
    assert e.value.code == "stale_version"
    r = sync.call(sync.service.admin.admin_hand_to_ai, tid, 0, by="ops", expected=version)
    assert r.table.seats[0].ai_controlled
    assert sync.call(sync.service.admin.admin_reset, tid, to="lobby", by="ops").table.status == OPEN
    assert sync.call(sync.service.admin.admin_cancel, tid, by="ops").table.status == "cancelled"
    assert sync.call(sync.service.admin.admin_delete, tid, by="ops").table.status == "cancelled"
    with pytest.raises(LiveError) as e:
        sync.call(sync.service.admin.table_info, tid)
    assert e.value.code == "no_table"
    first = sync.call(sync.service.audit_log.audit, {"actor": "ops", "action": "a1"})
    second = sync.call(
        sync.service.audit_log.audit, {"actor": "ops", "action": "a2", "status": 200}
    )
    page = sync.call(sync.service.audit_log.audit_page, count=1)
    assert isinstance(page, AuditPage)
    assert page.total == 2
    [newest] = page.entries
    assert newest.id == second
    assert newest.get("action") == "a2"
    assert newest.get("status") == "200"
    [older] = sync.call(sync.service.audit_log.audit_page, before=second).entries
    assert older.id == first
    assert older.get("missing", "-") == "-"


def test_only_declared_methods_exist() -> None:
    assert not hasattr(SyncTableService, "__getattr__")
    assert not hasattr(SyncTableService, "no_such_method")


def test_call_runs_the_operation_on_the_loop_thread(sync: SyncTableService) -> None:
    async def where(tag: str, *, n: int = 0) -> tuple[str, int, str]:
        return tag, n, threading.current_thread().name

    assert sync.call(where, "x", n=2) == ("x", 2, "table-service")

    def ready(value: int) -> asyncio.Future[int]:  # an awaitable, not a coroutine
        done = asyncio.get_running_loop().create_future()  # only on the loop's thread
        done.set_result(value)
        return done

    assert sync.call(ready, 7) == 7
