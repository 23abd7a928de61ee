"""Lobbies (list, detail, cancel), players, stats, the audit log, metrics and
the docs pages (served from the package: no CDN)."""

from __future__ import annotations

import os
import random
import re
from typing import Any

import pytest
from flask.testing import FlaskClient

from admin_api import budgets as budgets_mod
from admin_api import create_app
from admin_api.service import close_service
from durak import cli
from durak.wiring import ADMIN_APP, admin_app
from tables import SyncTableService
from telegram_bot.state.budgets import EPHEMERAL, PUBLIC, Budgets
from tests.admin.conftest import READER, auth, new_table


def test_lobbies_list_detail_and_cancel(client: FlaskClient, svc: SyncTableService) -> None:
    a = new_table(svc, start=False, chat=-1)
    b = new_table(svc, start=False, variant="shchelkovsky", chat=-2, first_user=10)
    game = new_table(svc, first_user=20)
    page = client.get("/api/v1/lobbies", headers=auth()).get_json()
    assert [t["id"] for t in page["items"]] == [b, a]
    assert page["total"] == 2
    assert game not in [t["id"] for t in page["items"]]
    one = client.get("/api/v1/lobbies?variant=shchelkovsky", headers=auth()).get_json()
    assert [t["id"] for t in one["items"]] == [b]
    assert client.get("/api/v1/lobbies?user=1", headers=auth()).get_json()["items"][0]["id"] == a
    p = client.get("/api/v1/lobbies?limit=1&offset=1", headers=auth()).get_json()
    assert [t["id"] for t in p["items"]] == [a]
    assert p["next_offset"] is None

    d = client.get(f"/api/v1/lobbies/{a}", headers=auth()).get_json()
    assert d["status"] == "open"
    assert [s["user"] for s in d["seats"]] == [1, 2, None]
    assert client.get("/api/v1/lobbies/none", headers=auth()).status_code == 404

    r = client.post(f"/api/v1/lobbies/{a}/cancel", headers={**auth(), "If-Match": "1"})
    assert r.status_code == 409
    assert r.get_json()["error"]["code"] == "stale_version"
    r = client.post(f"/api/v1/lobbies/{a}/cancel", headers=auth())
    assert r.status_code == 200
    assert r.get_json()["status"] == "cancelled"
    assert svc.call(svc.service.tables.where, 1) is None  # the players are free to join elsewhere
    r = client.post(f"/api/v1/lobbies/{a}/cancel", headers=auth())
    assert r.status_code == 409
    assert r.get_json()["error"]["code"] == "not_open"
    r = client.post(f"/api/v1/lobbies/{game}/cancel", headers=auth())
    assert r.status_code == 409
    assert r.get_json()["error"]["code"] == "not_open"
    assert client.post("/api/v1/lobbies/none/cancel", headers=auth()).status_code == 404


def test_player_lookup(client: FlaskClient, svc: SyncTableService) -> None:
    tid = new_table(svc, humans=1, ais=1)
    p = client.get("/api/v1/players/1", headers=auth(READER)).get_json()
    assert p["user"] == 1
    assert p["table"]["id"] == tid
    assert p["table"]["version"] == svc.call(svc.service.tables.get, tid)[2]
    assert p["stats"] == {}
    client.post(f"/api/v1/games/{tid}/seats/0/ai", headers=auth())  # the AI plays it out
    assert svc.call(svc.service.tables.get, tid)[0].status == "over"
    p = client.get("/api/v1/players/1", headers=auth()).get_json()
    assert p["table"] is None
    assert p["stats"]["chuvash"]["games"] == 1
    nobody = client.get("/api/v1/players/-5", headers=auth()).get_json()
    assert nobody == {"user": -5, "table": None, "stats": {}}


def test_stats(client: FlaskClient, svc: SyncTableService) -> None:
    new_table(svc, humans=2, ais=1)
    new_table(svc, variant="shchelkovsky", first_user=10)
    new_table(svc, start=False, first_user=20)
    done = new_table(svc, humans=1, ais=1, first_user=30)
    client.post(f"/api/v1/games/{done}/seats/0/ai", headers=auth())
    s = client.get("/api/v1/stats", headers=auth()).get_json()
    assert s == {
        "live_games": 2,
        "open_lobbies": 1,
        "finished_tables": 1,
        "active_players": 6,
        "finished_24h": {"chuvash": 1},
        "live_by_variant": {"chuvash": 1, "shchelkovsky": 1},
        "lobbies_by_variant": {"chuvash": 1},
    }


def test_audit_records_every_write_and_pages(client: FlaskClient, svc: SyncTableService) -> None:
    tid = new_table(svc)
    client.post(f"/api/v1/games/{tid}/seats/1/ai?kind=random", headers=auth())
    client.post(
        f"/api/v1/games/{tid}/reset", json={"to": "lobby"}, headers={**auth(), "If-Match": "1"}
    )
    client.post(f"/api/v1/games/{tid}/reset", json={"to": "lobby"}, headers=auth())
    client.delete("/api/v1/games/none", headers=auth())
    client.post(f"/api/v1/games/{tid}/end", headers=auth(READER))
    client.get("/api/v1/games", headers=auth())  # reads are not audited
    version = svc.call(svc.service.tables.get, tid)[2]

    page = client.get("/api/v1/audit?limit=3", headers=auth(READER)).get_json()
    assert page["total"] == 5
    assert len(page["items"]) == 3
    assert page["next_before"]
    rest = client.get(f"/api/v1/audit?before={page['next_before']}", headers=auth()).get_json()
    assert rest["next_before"] is None
    entries = list(reversed(page["items"] + rest["items"]))  # oldest first
    assert [(e["action"], e["status"], e["result"], e["actor"]) for e in entries] == [
        ("games.hand_seat_to_ai", 200, "ok", "admin"),
        ("games.reset_game", 409, "stale_version", "admin"),
        ("games.reset_game", 200, "ok", "admin"),
        ("games.delete_game", 404, "no_table", "admin"),
        ("games.end_game", 403, "forbidden", "reader"),
    ]
    first, _, reset = entries[:3]
    assert first["detail"] == "seat=1 kind=random"
    assert first["target"] == tid
    assert reset["version"] == version
    assert reset["detail"] == "to=lobby"
    assert reset["method"] == "POST"
    assert reset["path"] == f"/api/v1/games/{tid}/reset"
    assert all(e["at"] > 1_600_000_000_000 for e in entries)
    assert entries[-1]["role"] == "read"
    assert entries[0]["role"] == "write"
    zero = client.get("/api/v1/audit?before=0-0", headers=auth()).get_json()
    assert zero["items"] == []
    assert zero["total"] == 5


def test_metrics(client: FlaskClient, svc: SyncTableService) -> None:
    tid = new_table(svc)
    client.get("/api/v1/games", headers=auth())
    client.get("/api/v1/games/none", headers=auth())
    client.post(f"/api/v1/games/{tid}/end", headers=auth())
    new_table(svc, first_user=10)
    r = client.get("/metrics")
    assert r.status_code == 200
    assert r.mimetype == "text/plain"
    text = r.get_data(as_text=True)
    for line in [
        'admin_api_requests_total{endpoint="/api/v1/games",method="GET",status="200"} 1.0',
        'admin_api_requests_total{endpoint="/api/v1/games/<game_id>",method="GET",status="404"} 1.0',
        'admin_api_writes_total{action="games.end_game",result="ok"} 1.0',
        'durak_live_games{variant="chuvash"} 1.0',
        "durak_redis_up 1.0",
        "durak_active_players 2.0",
    ]:
        assert line in text, line
    assert re.search(
        r'admin_api_request_duration_seconds_count\{endpoint="/api/v1/games",method="GET"\} 1\.0',
        text,
    )


def test_openapi_document_and_offline_docs(client: FlaskClient) -> None:
    doc = client.get("/openapi/openapi.json").get_json()
    assert doc["openapi"].startswith("3.")
    assert doc["components"]["securitySchemes"]["bearer"]
    ops = {(m.upper(), p) for p, item in doc["paths"].items() for m in item}
    assert ("POST", "/api/v1/games/{game_id}/reset") in ops
    assert ("GET", "/api/v1/flood/budgets") in ops  # #24
    assert ("DELETE", "/api/v1/players/{user_id}/cooldown") in ops  # #25
    assert ("DELETE", "/api/v1/arenas/{arena_id}") in ops  # #27
    # with GET ./records/{game_no} (issue #16), ./flood/budgets (#24), the 4 of ratings
    # (#25), the 4 of arenas (#27)
    assert len(ops) == 25
    page = client.get("/openapi/swagger")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assets = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert assets
    assert not [a for a in assets if a.startswith(("http:", "https:", "//"))]
    for asset in assets:  # every asset is served by the app itself
        with client.get(f"/openapi/{asset}") as r:  # a file response: close it
            assert r.status_code == 200, asset
            assert r.get_data(), asset
    assert "openapi.json" in html


def test_random_ids_never_crash(client: FlaskClient) -> None:
    rng = random.Random(5)
    for _ in range(30):
        tid = "".join(rng.choice("abcXYZ019_-") for _ in range(rng.randint(1, 64)))
        assert client.get(f"/api/v1/games/{tid}", headers=auth()).status_code == 404


def test_learned_group_budgets(client: FlaskClient, svc: SyncTableService) -> None:
    """#24: what the bot learned of a group's message budget from 429s, for
    operators -- the list, and low-cardinality gauges in /metrics."""
    assert client.get("/api/v1/flood/budgets", headers=auth()).get_json() == {"items": []}
    budgets = Budgets(svc.service.kv)  # the bot's own state (#39)
    svc.call(budgets.refused, -1001, PUBLIC)
    svc.call(budgets.refused, -1002, EPHEMERAL)
    got = client.get("/api/v1/flood/budgets", headers=auth()).get_json()["items"]
    assert [(b["chat"], b["public"], b["counted"]) for b in got] == [
        (-1002, 10, True),
        (-1001, 10, True),
    ]
    assert got[0]["refused_ephemeral"] == 1
    assert got[1]["refused_public"] == 1
    assert "refused" in got[1]["why"]
    assert client.get("/api/v1/flood/budgets").status_code == 401
    text = client.get("/metrics").get_data(as_text=True)
    for line in [
        'durak_group_budgets{learned="any"} 2.0',
        'durak_group_budgets{learned="reduced"} 2.0',
        "durak_group_budget_public_min 10.0",
    ]:
        assert line in text, line


def test_without_a_budgets_reader_nothing_is_learned(
    app_config: dict[str, Any], svc: SyncTableService
) -> None:
    """#39: the admin API does not import the bot; built without the budgets
    reader (a bare ``create_app``, not ``durak.wiring``), it lists no learned
    budget and its gauges report none, whatever the bot learned."""
    budgets = Budgets(svc.service.kv)
    svc.call(budgets.refused, -1001, PUBLIC)
    bare = create_app(app_config)
    try:
        client = bare.test_client()
        assert client.get("/api/v1/flood/budgets", headers=auth()).get_json() == {"items": []}
        text = client.get("/metrics").get_data(as_text=True)
        for line in [
            'durak_group_budgets{learned="any"} 0.0',
            "durak_group_budget_public_min 20.0",
            "durak_redis_up 1.0",
        ]:
            assert line in text, line
    finally:
        close_service(bare)


def test_durak_admin_serves_the_wired_app(monkeypatch: pytest.MonkeyPatch) -> None:
    """``durak admin`` (the Procfile's ``web``) has gunicorn serve the product's
    factory, the bot's budgets reader wired in (#39)."""
    served: list[list[str]] = []

    class Exec(Exception):
        pass

    def execvp(file: str, args: list[str]) -> None:
        served.append(args)
        raise Exec

    monkeypatch.setenv("ADMIN_TOKEN", "t")
    monkeypatch.setattr(os, "execvp", execvp)
    with pytest.raises(Exec):
        cli.main(["admin"])
    assert served[0][:2] == ["gunicorn", ADMIN_APP]
    assert ADMIN_APP == "durak.wiring:admin_app()"
    assert budgets_mod.source_of(admin_app({"ADMIN_TOKEN": "t"})) is Budgets
