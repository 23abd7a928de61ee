"""Every error is JSON ``{"error": {"code", "message"}}`` with a stable code:
404, 405, 415, malformed JSON, validation (422), 500 (no stack trace), and a
dead Redis (503, also from /healthz)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any, NoReturn

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from admin_api import create_app
from admin_api.service import close_service
from tables import SyncTableService
from tests.admin.conftest import auth, new_table


def error(r: TestResponse, status: int, code: str) -> dict[str, Any]:
    assert r.status_code == status, r.get_data(as_text=True)
    assert r.mimetype == "application/json"
    body = r.get_json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str)
    assert body["error"]["message"]
    assert "Traceback" not in r.get_data(as_text=True)
    return body["error"]  # type: ignore[no-any-return]


def test_404(client: FlaskClient) -> None:
    error(client.get("/nope"), 404, "not_found")
    error(client.get("/api/v1/nope", headers=auth()), 404, "not_found")
    error(client.get("/api/v2/games", headers=auth()), 404, "not_found")


def test_405_names_the_allowed_methods(client: FlaskClient) -> None:
    r = client.put("/api/v1/games", headers=auth())
    error(r, 405, "method_not_allowed")
    assert set(r.headers["Allow"].split(", ")) >= {"GET", "HEAD"}
    error(client.get("/api/v1/games/abc/reset", headers=auth()), 405, "method_not_allowed")
    error(client.post("/healthz"), 405, "method_not_allowed")


def test_415_for_a_body_that_is_not_json(client: FlaskClient, svc: SyncTableService) -> None:
    tid = new_table(svc)
    url = f"/api/v1/games/{tid}/reset"
    error(client.post(url, data="to=lobby", headers=auth()), 415, "unsupported_media_type")
    error(
        client.post(url, data='{"to": "lobby"}', content_type="text/plain", headers=auth()),
        415,
        "unsupported_media_type",
    )
    error(client.post(f"/api/v1/games/{tid}/end", data="x", headers=auth()), 415,
          "unsupported_media_type")  # fmt: skip
    assert svc.call(svc.service.tables.get, tid)[0].status == "playing"


def test_malformed_json(client: FlaskClient, svc: SyncTableService) -> None:
    tid = new_table(svc)
    for raw in ('{"to": ', "nope", '{"to": "lobby"', "\xff"):
        r = client.post(
            f"/api/v1/games/{tid}/reset", data=raw, content_type="application/json", headers=auth()
        )
        error(r, 400, "malformed_json")
    assert svc.call(svc.service.tables.get, tid)[0].status == "playing"


def test_validation_errors_are_422_in_our_format(client: FlaskClient) -> None:
    e = error(
        client.post("/api/v1/games/abc/reset", json={"to": "nowhere"}, headers=auth()),
        422,
        "validation_error",
    )
    assert e["details"][0]["loc"] == ["to"]
    e = error(client.post("/api/v1/games/abc/reset", headers=auth()), 422, "validation_error")
    e = error(client.post("/api/v1/games/abc/reset", json=[1], headers=auth()), 422,
              "validation_error")  # fmt: skip
    e = error(client.get("/api/v1/players/ann", headers=auth()), 422, "validation_error")
    assert e["details"][0]["loc"] == ["user_id"]
    error(client.get("/api/v1/games/a%20b", headers=auth()), 422, "validation_error")
    error(client.get("/api/v1/games?limit=100000", headers=auth()), 422, "validation_error")
    error(client.get("/api/v1/audit?before=x", headers=auth()), 422, "validation_error")
    error(client.get(f"/api/v1/audit?before={2**64}-0", headers=auth()), 422, "validation_error")


def test_a_query_parameter_given_twice_is_422(client: FlaskClient) -> None:
    """Found by schemathesis (seed 59638274626946179501362448249034271684): the first
    of two ``user`` values was taken and the rest ignored, with a 200."""
    e = error(client.get("/api/v1/games?user=1&user=2", headers=auth()), 422, "validation_error")
    assert e["details"] == [
        {"loc": ["query", "user"], "msg": "given more than once", "type": "repeated"}
    ]
    e = error(client.get("/api/v1/lobbies?limit=5&chat=1&limit=6", headers=auth()), 422,
              "validation_error")  # fmt: skip
    assert [d["loc"] for d in e["details"]] == [["query", "limit"]]
    assert client.get("/api/v1/games?user=1&limit=5", headers=auth()).status_code == 200


def test_500_is_json_without_a_stack_trace(app_config: dict[str, Any]) -> None:
    app = create_app({**app_config, "TESTING": False})

    @app.get("/api/v1/_boom")
    def boom() -> NoReturn:
        raise RuntimeError("secret internals")

    try:
        r = app.test_client().get("/api/v1/_boom", headers=auth())
        e = error(r, 500, "internal_error")
        assert "secret internals" not in r.get_data(as_text=True)
        assert e["message"] == "internal error; it has been logged"
    finally:
        close_service(app)


def test_500_in_testing_mode_too(app: Flask, client: FlaskClient) -> None:
    @app.get("/api/v1/_boom2")
    def boom() -> NoReturn:
        raise KeyError("x")

    error(client.get("/api/v1/_boom2", headers=auth()), 500, "internal_error")


def test_refusals_of_the_service_keep_their_codes(
    client: FlaskClient, svc: SyncTableService
) -> None:
    lobby = new_table(svc, start=False)
    e = error(client.post(f"/api/v1/games/{lobby}/seats/0/ai", headers=auth()), 409, "no_game")
    assert "no game" in e["message"]


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port: int = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(params=["redis", "redis+cluster"])
def dead_app(app_config: dict[str, Any], request: pytest.FixtureRequest) -> Iterator[Flask]:
    """The app on a Redis (or a Redis Cluster: redis-py raises its
    RedisClusterException, not a RedisError) that does not answer."""
    url = f"{request.param}://127.0.0.1:{closed_port()}/0"
    app = create_app({**app_config, "REDIS_URL": url})
    yield app
    close_service(app)


def test_dead_redis_is_503_json(dead_app: Flask) -> None:
    c = dead_app.test_client()
    error(c.get("/healthz"), 503, "redis_unavailable")
    for url in ["/api/v1/games", "/api/v1/games/abc", "/api/v1/stats", "/api/v1/players/1"]:
        error(c.get(url, headers=auth()), 503, "redis_unavailable")
    error(c.post("/api/v1/games/abc/end", headers=auth()), 503, "redis_unavailable")
    m = c.get("/metrics")
    assert m.status_code == 200
    assert "durak_redis_up 0.0" in m.get_data(as_text=True)


def test_healthz_ok(client: FlaskClient) -> None:
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.get_json() == {"status": "ok", "redis": "ok"}
