"""The blocking facade of the admin API (SyncTableService) on the real Redis:
every typed method reaches the service and returns its typed result."""

from __future__ import annotations

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
    assert sync.ping() is True
    tid = sync.create_lobby(1, "Ann", chat=-5).table_id
    assert sync.join(tid, 2, "Bob").table.seat_of(2) == 1
    assert sync.add_ai(tid, 1).table.seats[2].ai is not None
    assert sync.lobby(tid).status == OPEN
    assert sync.start(tid, 1).table.status == PLAYING
    table, state, version = sync.get(tid)
    assert state is not None
    assert version == table.game_no + 3
    assert sync.where(2) == table
    [row] = sync.list_tables(status=PLAYING)
    assert isinstance(row, TableSummary)
    assert row.id == tid
    assert row.version == version
    info = sync.table_info(tid)
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
    kinds = [e.kind for e in sync.event_page(tid)]
    assert kinds[:4] == ["create", "join", "add_ai", "start"]
    player = sync.player(2)
    assert isinstance(player, PlayerInfo)
    assert player.table is not None
    assert player.table.id == tid
    stats = sync.global_stats()
    assert isinstance(stats, GlobalStats)
    assert (stats.live_games, stats.active_players) == (1, 2)
    assert sync.now_ms() > 0
    assert sync.keys.prefix == sync.service.config.prefix


def test_admin_writes_and_audit(sync: SyncTableService) -> None:
    tid = sync.create_lobby(1, "Ann", chat=-5).table_id
    sync.join(tid, 2, "Bob")
    version = sync.start(tid, 1).version
    with pytest.raises(LiveError) as e:
        sync.admin_hand_to_ai(tid, 0, by="ops", expected=version - 1)
    assert e.value.code == "stale_version"
    r = sync.admin_hand_to_ai(tid, 0, by="ops", expected=version)
    assert r.table.seats[0].ai_controlled
    assert sync.admin_reset(tid, to="lobby", by="ops").table.status == OPEN
    assert sync.admin_cancel(tid, by="ops").table.status == "cancelled"
    assert sync.admin_delete(tid, by="ops").table.status == "cancelled"
    with pytest.raises(LiveError) as e:
        sync.table_info(tid)
    assert e.value.code == "no_table"
    first = sync.audit({"actor": "ops", "action": "a1"})
    second = sync.audit({"actor": "ops", "action": "a2", "status": 200})
    page = sync.audit_page(count=1)
    assert isinstance(page, AuditPage)
    assert page.total == 2
    [newest] = page.entries
    assert newest.id == second
    assert newest.get("action") == "a2"
    assert newest.get("status") == "200"
    [older] = sync.audit_page(before=second).entries
    assert older.id == first
    assert older.get("missing", "-") == "-"


def test_only_declared_methods_exist() -> None:
    assert not hasattr(SyncTableService, "__getattr__")
    assert not hasattr(SyncTableService, "no_such_method")
