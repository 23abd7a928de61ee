"""The auth matrix: no token / wrong token -> 401, read-only token on a write ->
403 (audited), admin token reads and writes; the app refuses to start without
ADMIN_TOKEN."""

from __future__ import annotations

from typing import Any

import pytest
from flask.testing import FlaskClient

from admin_api import ConfigError, create_app
from admin_api.auth import identify
from tables import SyncTableService
from tests.admin.conftest import ADMIN, READER, auth, new_table

READS = [
    "/api/v1/games",
    "/api/v1/games/{tid}",
    "/api/v1/games/{tid}/events",
    "/api/v1/lobbies",
    "/api/v1/lobbies/{tid}",
    "/api/v1/players/1",
    "/api/v1/stats",
    "/api/v1/audit",
]
WRITES: list[tuple[str, str, dict[str, Any] | None]] = [
    ("POST", "/api/v1/games/{tid}/reset", {"to": "lobby"}),
    ("POST", "/api/v1/games/{tid}/end", None),
    ("POST", "/api/v1/games/{tid}/seats/0/ai", None),
    ("DELETE", "/api/v1/games/{tid}", None),
    ("POST", "/api/v1/lobbies/{tid}/cancel", None),
]
BAD_HEADERS = [
    {},
    {"Authorization": ""},
    {"Authorization": "Bearer"},
    {"Authorization": "Bearer wrong"},
    {"Authorization": f"Basic {ADMIN}"},
    {"Authorization": f"Bearer {ADMIN}x"},
    {"Authorization": f"Bearer {ADMIN[:-1]}"},
]


def test_refuses_to_start_without_admin_token(
    monkeypatch: pytest.MonkeyPatch, app_config: dict[str, Any]
) -> None:
    monkeypatch.delenv("ADMIN_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="ADMIN_TOKEN is not set"):
        create_app({**app_config, "ADMIN_TOKEN": ""})
    with pytest.raises(ConfigError, match="ADMIN_TOKEN"):
        create_app()


def test_tokens_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, redis_url: str, redis_prefix: str
) -> None:
    monkeypatch.setenv("ADMIN_TOKEN", "from-env")
    monkeypatch.setenv("REDIS_URL", redis_url)
    monkeypatch.setenv("REDIS_PREFIX", redis_prefix)
    monkeypatch.delenv("ADMIN_READ_TOKEN", raising=False)
    app = create_app()
    assert app.config["REDIS_PREFIX"] == redis_prefix
    c = app.test_client()
    assert c.get("/api/v1/stats", headers=auth("from-env")).status_code == 200
    assert c.get("/api/v1/stats", headers=auth(READER)).status_code == 401
    from admin_api.service import close_service

    close_service(app)


@pytest.mark.parametrize("headers", BAD_HEADERS)
def test_reads_need_a_valid_token(client: FlaskClient, headers: dict[str, str]) -> None:
    for url in READS:
        r = client.get(url.format(tid="abc"), headers=headers)
        assert r.status_code == 401, url
        assert r.get_json()["error"]["code"] == "unauthorized"
        assert r.headers["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("headers", BAD_HEADERS)
def test_writes_need_a_valid_token(client: FlaskClient, headers: dict[str, str]) -> None:
    for method, url, body in WRITES:
        r = client.open(url.format(tid="abc"), method=method, json=body, headers=headers)
        assert r.status_code == 401
        assert r.get_json()["error"]["code"] == "unauthorized"


def test_both_tokens_read(client: FlaskClient, svc: SyncTableService) -> None:
    tid = new_table(svc)
    for token in (ADMIN, READER):
        for url in READS:
            r = client.get(url.format(tid=tid), headers=auth(token))
            assert r.status_code == 200, (url, r.get_json())
            assert r.is_json


def test_read_token_cannot_write_and_the_attempt_is_audited(
    client: FlaskClient, svc: SyncTableService
) -> None:
    tid = new_table(svc)
    before = svc.call(svc.service.tables.get, tid)[2]
    for method, url, body in WRITES:
        r = client.open(url.format(tid=tid), method=method, json=body, headers=auth(READER))
        assert r.status_code == 403
        assert r.get_json()["error"] == {"code": "forbidden", "message": "this token may only read"}
    assert svc.call(svc.service.tables.get, tid)[2] == before  # nothing changed
    entries = client.get("/api/v1/audit", headers=auth()).get_json()["items"]
    assert len(entries) == len(WRITES)
    assert {(e["actor"], e["role"], e["status"], e["result"]) for e in entries} == {
        ("reader", "read", 403, "forbidden")
    }
    assert all(READER not in str(e) and ADMIN not in str(e) for e in entries)


def test_admin_token_writes(client: FlaskClient, svc: SyncTableService) -> None:
    tid = new_table(svc)
    r = client.post(f"/api/v1/games/{tid}/end", headers=auth())
    assert r.status_code == 200
    assert r.get_json()["status"] == "cancelled"


def test_without_a_read_token_only_the_admin_token_works(
    app_config: dict[str, Any],
) -> None:
    app = create_app({**app_config, "ADMIN_READ_TOKEN": ""})
    c = app.test_client()
    assert c.get("/api/v1/stats", headers=auth(READER)).status_code == 401
    assert c.get("/api/v1/stats", headers=auth("")).status_code == 401
    from admin_api.service import close_service

    close_service(app)


def test_identify(app_config: dict[str, Any]) -> None:
    app = create_app(app_config)
    with app.app_context():
        assert identify(f"Bearer {ADMIN}").role == "write"  # type: ignore[union-attr]
        assert identify(f"bearer   {READER} ").role == "read"  # type: ignore[union-attr]
        assert identify(f"Token {ADMIN}") is None
        assert identify("Bearer ") is None
    from admin_api.service import close_service

    close_service(app)


def test_docs_health_and_metrics_need_no_token(client: FlaskClient) -> None:
    assert client.get("/openapi/openapi.json").status_code == 200
    assert client.get("/healthz").status_code == 200
    assert client.get("/metrics").status_code == 200
