"""``GET /api/v1/games/<id>/records/<game>`` (issue #16): a finished game's
record (200, any token), 404 before the end, for another game and once expired,
401 without a token; documented in the OpenAPI; the engine replays the body."""

from __future__ import annotations

from flask.testing import FlaskClient

from engine.fairness import commitment
from engine.verify import replay_record
from tables import SyncTableService
from tests.admin.conftest import READER, auth, new_table


def finished(svc: SyncTableService) -> str:
    """A game of one human and one AI, played out by the AI (an operator's write)."""
    tid = new_table(svc, humans=1, ais=1)
    svc.call(svc.service.admin.admin_hand_to_ai, tid, 0, kind="random")
    _, state, _ = svc.call(svc.service.tables.get, tid)
    assert state is not None
    assert state.over
    return tid


def test_record_of_a_finished_game(client: FlaskClient, svc: SyncTableService) -> None:
    tid = finished(svc)
    table, state, _ = svc.call(svc.service.tables.get, tid)
    assert state is not None
    for token in (auth(), auth(READER)):
        r = client.get(f"/api/v1/games/{tid}/records/1", headers=token)
        assert r.status_code == 200, r.get_json()
    rec = r.get_json()
    assert rec["table"] == tid
    assert rec["game"] == 1
    assert rec["seed"] == str(table.seed)
    assert rec["commitment"] == commitment(table.seed, "chuvash", 2, table.options)
    assert rec["seats"][0] == [1, "U1"]
    assert rec["result"]["loser"] == state.loser
    replayed = replay_record(rec)
    assert replayed["ok"] is True
    assert replayed["applied"] == len(rec["actions"]) > 0
    assert replayed["result"]["loser"] == state.loser


def test_record_404_and_401(client: FlaskClient, svc: SyncTableService) -> None:
    playing = new_table(svc, first_user=10)
    r = client.get(f"/api/v1/games/{playing}/records/1", headers=auth())
    assert r.status_code == 404
    assert r.get_json()["error"]["code"] == "no_record"
    tid = finished(svc)
    assert client.get(f"/api/v1/games/{tid}/records/2", headers=auth()).status_code == 404
    assert client.get(f"/api/v1/games/{tid}/records/1").status_code == 401
    assert client.get(f"/api/v1/games/{tid}/records/0", headers=auth()).status_code == 422
    key = svc.service.keys.record(tid, 1)
    ttl = svc.run(svc.service.store.one(lambda p: p.pttl(key)))
    assert 0 < ttl <= svc.service.config.replay_ttl * 1000  # kept for the configured time
    svc.run(svc.service.store.one(lambda p: p.delete(key)))  # what its expiry does
    r = client.get(f"/api/v1/games/{tid}/records/1", headers=auth())
    assert r.status_code == 404
    assert r.get_json()["error"]["code"] == "no_record"


def test_record_endpoint_is_documented(client: FlaskClient) -> None:
    doc = client.get("/openapi/openapi.json").get_json()
    op = doc["paths"]["/api/v1/games/{game_id}/records/{game_no}"]["get"]
    assert {"200", "401", "404"} <= set(op["responses"])
    assert "RecordOut" in doc["components"]["schemas"]
