"""Games: list with filters and pages, detail (hands, seats, timers, version),
event log, and the writes -- reset to the lobby, abort, end, delete, hand a seat
to the AI -- through real games made by the service; If-Match; notifications."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from tables import SyncTableService
from tests.admin.conftest import auth, new_table


@pytest.fixture
def notes(admin_redis_url: str, svc: SyncTableService) -> Iterator[redis.client.PubSub]:
    """A subscription to the service's notify channel (what the bot listens to;
    on a cluster: to one node, which hears every node's PUBLISH)."""
    client = redis.Redis.from_url(admin_redis_url.replace("+cluster", "", 1))
    # redis-py leaves Redis.pubsub() unannotated: state what it returns
    new_pubsub: Callable[[], redis.client.PubSub] = client.pubsub
    sub = new_pubsub()
    sub.subscribe(svc.service.keys.notify)
    sub.get_message(timeout=1)  # the subscribe confirmation
    yield sub
    sub.close()
    client.close()


def published(sub: redis.client.PubSub) -> list[dict[str, object]]:
    out = []
    while (msg := sub.get_message(ignore_subscribe_messages=True, timeout=0.2)) is not None:
        out.append(json.loads(msg["data"]))
    return out


def test_list_filters_and_pages(client: FlaskClient, svc: SyncTableService) -> None:
    a = new_table(svc, chat=-1)
    b = new_table(svc, variant="shchelkovsky", chat=-2, first_user=10)
    c = new_table(svc, chat=-3, first_user=20)
    lobby = new_table(svc, first_user=30, start=False)
    client.post(f"/api/v1/games/{c}/end", headers=auth())

    def ids(query: str) -> list[str]:
        r = client.get(f"/api/v1/games{query}", headers=auth())
        assert r.status_code == 200
        return [t["id"] for t in r.get_json()["items"]]

    assert set(ids("")) == {a, b, c}  # the lobby never started a game
    assert lobby not in ids("")
    assert ids("?status=playing") == [b, a]  # newest change first
    assert ids("?status=cancelled") == [c]
    assert ids("?variant=shchelkovsky") == [b]
    assert ids("?chat=-1") == [a]
    assert ids("?user=11") == [b]
    assert ids("?user=999") == []
    page = client.get("/api/v1/games?limit=2", headers=auth()).get_json()
    assert (page["total"], page["limit"], page["offset"], page["next_offset"]) == (3, 2, 0, 2)
    rest = client.get("/api/v1/games?limit=2&offset=2", headers=auth()).get_json()
    assert rest["next_offset"] is None
    assert len(rest["items"]) == 1
    assert {t["id"] for t in page["items"] + rest["items"]} == {a, b, c}
    r = client.get("/api/v1/games?status=nope&limit=0", headers=auth())
    assert r.status_code == 422
    assert {tuple(d["loc"]) for d in r.get_json()["error"]["details"]} == {("status",), ("limit",)}


def test_detail_has_every_hand_seats_timers_and_version(
    client: FlaskClient, svc: SyncTableService
) -> None:
    tid = new_table(svc, humans=2, ais=1, timer=60)
    r = client.get(f"/api/v1/games/{tid}", headers=auth())
    assert r.status_code == 200
    g = r.get_json()
    _, state, version = svc.call(svc.service.tables.get, tid)
    assert state is not None
    assert g["version"] == version
    assert r.headers["ETag"] == f'"{version}"'
    assert len(g["state"]["hands"]) == 3  # every hand, the AI's too
    assert [(s["seat"], s["user"], s["name"], s["ai"]) for s in g["seats"]] == [
        (0, 1, "U1", None),
        (1, 2, "U2", None),
        (2, None, "AI 1", "heuristic"),
    ]
    assert g["timer"] == 60
    assert g["deadline"] > 0
    assert 0 < g["seconds_left"] <= 60
    assert g["variant"] == "chuvash"
    assert g["options"]
    assert g["max_seats"] >= 3
    assert g["to_act"] == state.to_act()
    assert g["status"] == "playing"
    assert g["game_no"] == 1
    assert g["chat"] == -100


def test_event_log_pages(client: FlaskClient, svc: SyncTableService) -> None:
    tid = new_table(svc)
    first = client.get(f"/api/v1/games/{tid}/events?limit=2", headers=auth()).get_json()
    assert [(e["kind"], e["seat"]) for e in first["items"]] == [("create", 0), ("join", 1)]
    assert first["next_after"] == 2
    rest = client.get(f"/api/v1/games/{tid}/events?after=2&limit=1000", headers=auth()).get_json()
    assert [e["kind"] for e in rest["items"]][:2] == ["add_ai", "start"]
    assert rest["next_after"] is None
    r = client.get("/api/v1/games/nope/events", headers=auth())
    assert r.status_code == 404
    assert r.get_json()["error"]["code"] == "no_table"


def test_unknown_game_is_404(client: FlaskClient) -> None:
    for method, url in [
        ("GET", "/api/v1/games/nope"),
        ("POST", "/api/v1/games/nope/end"),
        ("DELETE", "/api/v1/games/nope"),
        ("POST", "/api/v1/games/nope/seats/0/ai"),
    ]:
        r = client.open(url, method=method, headers=auth())
        assert r.status_code == 404, url
        assert r.get_json()["error"]["code"] == "no_table"
    r = client.post("/api/v1/games/nope/reset", json={"to": "abort"}, headers=auth())
    assert r.status_code == 404


def test_reset_to_the_lobby_keeps_the_seats_and_notifies(
    client: FlaskClient, svc: SyncTableService, notes: redis.client.PubSub
) -> None:
    tid = new_table(svc, humans=2, ais=1)
    version = svc.call(svc.service.tables.get, tid)[2]
    r = client.post(
        f"/api/v1/games/{tid}/reset",
        json={"to": "lobby"},
        headers={**auth(), "If-Match": f'"{version}"'},
    )
    assert r.status_code == 200, r.get_json()
    out = r.get_json()
    assert out == {
        "table": tid,
        "action": "reset:lobby",
        "version": version + 1,
        "status": "open",
        "events": [{"version": version + 1, "kind": "reset", "seat": -1, "text": "admin"}],
    }
    table, state, _ = svc.call(svc.service.tables.get, tid)
    assert state is None
    assert table.status == "open"
    assert [s.user for s in table.seats] == [1, 2, None]
    assert published(notes) == [{"version": version + 1, "table": tid, "kind": "reset"}]
    svc.call(svc.service.games.start, tid, 1)  # the same seats play again
    assert svc.call(svc.service.tables.get, tid)[0].status == "playing"


def test_abort_and_end(
    client: FlaskClient, svc: SyncTableService, notes: redis.client.PubSub
) -> None:
    a = new_table(svc)
    b = new_table(svc, first_user=10)
    r = client.post(f"/api/v1/games/{a}/reset", json={"to": "abort"}, headers=auth())
    assert r.status_code == 200
    assert r.get_json()["status"] == "cancelled"
    r = client.post(f"/api/v1/games/{b}/end", headers=auth())
    assert r.status_code == 200
    assert r.get_json()["action"] == "end"
    assert svc.call(svc.service.tables.where, 1) is None
    assert svc.call(svc.service.tables.where, 10) is None
    assert [n["kind"] for n in published(notes)] == ["abort", "abort"]
    r = client.post(f"/api/v1/games/{b}/end", headers=auth())  # already ended
    assert r.status_code == 409
    assert r.get_json()["error"]["code"] == "not_allowed"
    g = client.get(f"/api/v1/games/{b}", headers=auth()).get_json()
    assert g["status"] == "cancelled"  # kept for inspection


def test_delete(client: FlaskClient, svc: SyncTableService, notes: redis.client.PubSub) -> None:
    tid = new_table(svc)
    r = client.delete(f"/api/v1/games/{tid}", headers=auth())
    assert r.status_code == 200
    assert r.get_json()["action"] == "delete"
    assert client.get(f"/api/v1/games/{tid}", headers=auth()).status_code == 404
    assert tid not in [
        t["id"] for t in client.get("/api/v1/games", headers=auth()).get_json()["items"]
    ]
    assert published(notes)[-1]["kind"] == "delete"
    assert client.delete(f"/api/v1/games/{tid}", headers=auth()).status_code == 404


def test_hand_a_seat_to_the_ai(
    client: FlaskClient, svc: SyncTableService, notes: redis.client.PubSub
) -> None:
    tid = new_table(svc, humans=2, ais=1)
    r = client.post(f"/api/v1/games/{tid}/seats/1/ai?kind=random", headers=auth())
    assert r.status_code == 200, r.get_json()
    assert "takeover" in [e["kind"] for e in r.get_json()["events"]]
    table = svc.call(svc.service.tables.get, tid)[0]
    assert table.seats[1].ai == "random"
    assert table.seats[1].user == 2
    assert published(notes)[0]["kind"] == "takeover"
    r = client.post(f"/api/v1/games/{tid}/seats/1/ai", headers=auth())
    if table.status == "playing":  # the AI already plays it
        assert r.status_code == 409
        assert r.get_json()["error"]["code"] == "not_allowed"
    r = client.post(f"/api/v1/games/{tid}/seats/9/ai", headers=auth())
    assert r.status_code in (404, 409)
    lobby = new_table(svc, first_user=40, start=False)
    r = client.post(f"/api/v1/games/{lobby}/seats/0/ai", headers=auth())
    assert r.status_code == 409
    assert r.get_json()["error"]["code"] == "no_game"
    r = client.post(f"/api/v1/games/{tid}/seats/x/ai", headers=auth())
    assert r.status_code == 422
    r = client.post(f"/api/v1/games/{tid}/seats/0/ai?kind=genius", headers=auth())
    assert r.status_code == 422


def test_bad_seat_is_404(client: FlaskClient, svc: SyncTableService) -> None:
    tid = new_table(svc, humans=2, ais=0)
    r = client.post(f"/api/v1/games/{tid}/seats/5/ai", headers=auth())
    assert r.status_code == 404
    assert r.get_json()["error"]["code"] == "bad_seat"


def test_if_match_mismatch_is_409_and_changes_nothing(
    client: FlaskClient, svc: SyncTableService
) -> None:
    tid = new_table(svc)
    version = svc.call(svc.service.tables.get, tid)[2]
    for method, url, body in [
        ("POST", f"/api/v1/games/{tid}/reset", {"to": "lobby"}),
        ("POST", f"/api/v1/games/{tid}/end", None),
        ("POST", f"/api/v1/games/{tid}/seats/0/ai", None),
        ("DELETE", f"/api/v1/games/{tid}", None),
    ]:
        for stale in (str(version - 1), f'W/"{version + 5}"'):
            r = client.open(url, method=method, json=body, headers={**auth(), "If-Match": stale})
            assert r.status_code == 409, url
            err = r.get_json()["error"]
            assert err["code"] == "stale_version"
            assert err["current"] == version
    assert svc.call(svc.service.tables.get, tid)[2] == version
    r = client.post(f"/api/v1/games/{tid}/end", headers={**auth(), "If-Match": "abc"})
    assert r.status_code == 422
    r = client.post(f"/api/v1/games/{tid}/end", headers={**auth(), "If-Match": str(version)})
    assert r.status_code == 200
    assert r.get_json()["version"] == version + 1


def test_list_pages_by_cursor(client: FlaskClient, svc: SyncTableService) -> None:
    tids = [new_table(svc, chat=-5, first_user=10 * i + 1) for i in range(5)]
    new_table(svc, first_user=90, start=False)  # a lobby: never in the games list

    def page(query: str) -> dict[str, Any]:
        r = client.get(f"/api/v1/games?{query}", headers=auth())
        assert r.status_code == 200
        body: dict[str, Any] = r.get_json()
        return body

    seen: list[str] = []
    cursor = ""
    while True:
        p = page(f"limit=2&cursor={cursor}")
        assert p["total"] is None
        seen += [t["id"] for t in p["items"]]
        if p["next_cursor"] is None:
            break
        cursor = p["next_cursor"]
    assert seen == [t["id"] for t in page("limit=50")["items"]]  # newest first, as by offset
    assert sorted(seen) == sorted(tids)
    assert page("limit=50")["next_cursor"] is None
    assert [t["id"] for t in page("cursor=&status=playing&limit=1")["items"]] == [tids[-1]]
    r = client.get("/api/v1/games?cursor=not-a-cursor", headers=auth())
    assert r.status_code == 422


@pytest.mark.parametrize("kind", ["easy", "search"])
def test_the_ai_levels_are_ai_kinds(client: FlaskClient, svc: SyncTableService, kind: str) -> None:
    tid = new_table(svc, humans=3, ais=0)
    r = client.post(f"/api/v1/games/{tid}/seats/1/ai?kind={kind}", headers=auth())
    assert r.status_code == 200, r.get_json()
    assert svc.call(svc.service.tables.get, tid)[0].seats[1].ai == kind
