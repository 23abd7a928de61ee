"""Issue #17: deeply nested JSON is a 400, bodies over MAX_CONTENT_LENGTH a
JSON 413, over-long URLs a JSON 414."""

from __future__ import annotations

from flask.testing import FlaskClient

from tables import SyncTableService
from tests.admin.conftest import auth, new_table
from tests.admin.test_errors import error


def test_deeply_nested_json_is_a_400(client: FlaskClient, svc: SyncTableService) -> None:
    tid = new_table(svc)
    url = f"/api/v1/games/{tid}/reset"
    for depth in (1000, 300, 5000):
        body = "[" * depth + "]" * depth
        r = client.post(url, data=body, content_type="application/json", headers=auth())
        assert error(r, 400, "malformed_json")
        obj = '{"a":' * depth + "1" + "}" * depth
        r = client.post(url, data=obj, content_type="application/json", headers=auth())
        assert error(r, 400, "malformed_json")
    assert svc.call(svc.service.tables.get, tid)[0].status == "playing"


def test_a_body_over_the_limit_is_a_json_413(client: FlaskClient, svc: SyncTableService) -> None:
    tid = new_table(svc)
    url = f"/api/v1/games/{tid}/reset"
    big = '{"to": "lobby", "x": "' + "a" * (64 * 1024) + '"}'
    r = client.post(url, data=big, content_type="application/json", headers=auth())
    error(r, 413, "payload_too_large")
    assert svc.call(svc.service.tables.get, tid)[0].status == "playing"
    r = client.post(url, json={"to": "lobby"}, headers=auth())
    assert r.status_code == 200


def test_the_body_limit_is_configurable(app_config: dict[str, object]) -> None:
    from admin_api import create_app
    from admin_api.service import close_service

    app = create_app({**app_config, "MAX_CONTENT_LENGTH": 100})
    try:
        c = app.test_client()
        r = c.post("/api/v1/games/x/reset", json={"to": "lobby", "x": "a" * 200}, headers=auth())
        error(r, 413, "payload_too_large")
    finally:
        close_service(app)


def test_an_overlong_url_or_query_is_a_json_414(client: FlaskClient) -> None:
    error(client.get("/api/v1/games/" + "a" * 5000, headers=auth()), 414, "uri_too_long")
    error(client.get("/api/v1/games?variant=" + "a" * 5000, headers=auth()), 414, "uri_too_long")
    error(client.get("/" + "a" * 5000), 414, "uri_too_long")
    assert client.get("/api/v1/games?offset=" + "0" * 2000, headers=auth()).status_code == 200


def test_the_url_limit_counts_characters_not_their_encoding(client: FlaskClient) -> None:
    """1,400 characters, each percent-encoded (4,200 on the wire): under the
    4,000-character limit however a client encodes them."""
    r = client.get("/api/v1/games?chat=" + "%21" * 1400, headers=auth())
    assert r.status_code != 414
    assert r.get_json()["error"]["code"] != "uri_too_long"
