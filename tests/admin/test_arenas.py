"""The arenas endpoints (#27): the list, one arena's standings and tables, its
games, cancelling one (audited; refused to a read-only token)."""

from __future__ import annotations

from flask.testing import FlaskClient

from tables import GameResult, SyncTableService
from tests.admin.conftest import READER, auth


def arena_with_a_game(svc: SyncTableService) -> str:
    s = svc.service
    a = svc.call(s.arenas.create, -42, 1, "chuvash", seats=2, minutes=30)
    for u in (1, 2, 3):
        svc.call(s.arenas.join, a.id, u, f"U{u}")
    ticked = svc.call(s.arenas.tick, a.id)
    (table, users), = ticked.seated  # fmt: skip
    r = GameResult(
        table=table,
        game=1,
        variant="chuvash",
        chat=-42,
        places=(1, 2),
        loser=1,
        draw=False,
        seats=tuple((u, f"U{u}") for u in users),
        at=1,
        rated=True,
    )
    assert svc.call(s.arenas.record, a.id, r) is not None
    return a.id


def test_list_detail_and_games(client: FlaskClient, svc: SyncTableService) -> None:
    arena = arena_with_a_game(svc)
    listed = client.get("/api/v1/arenas", headers=auth(READER))
    assert listed.status_code == 200
    [row] = listed.get_json()["items"]
    assert (row["id"], row["chat"], row["players"], row["games"], row["status"]) == (
        arena, -42, 3, 1, "running",
    )  # fmt: skip
    one = client.get(f"/api/v1/arenas/{arena}", headers=auth(READER)).get_json()
    assert [s["rank"] for s in one["standings"]] == [1, 2, 3]
    assert one["standings"][0]["score"] == 2
    assert one["standings"][0]["recent"] == [2]
    assert one["tables"] == []
    games = client.get(f"/api/v1/arenas/{arena}/games", headers=auth(READER)).get_json()
    assert len(games["items"]) == 1
    assert games["items"][0]["points"] == [2, 0]
    assert client.get("/api/v1/arenas/nope", headers=auth()).status_code == 404
    assert client.get("/api/v1/arenas/nope/games", headers=auth()).status_code == 404
    assert client.get("/api/v1/arenas/%3Cx%3E", headers=auth()).status_code == 422


def test_cancelling_is_audited_and_refused_to_a_reader(
    client: FlaskClient, svc: SyncTableService
) -> None:
    arena = arena_with_a_game(svc)
    refused = client.delete(f"/api/v1/arenas/{arena}", headers=auth(READER))
    assert refused.status_code == 403
    r = client.delete(f"/api/v1/arenas/{arena}", headers=auth())
    assert r.status_code == 200
    body = r.get_json()
    assert body["status"] == "cancelled"
    assert body["why"].startswith("operator ")
    assert body["standings"][0]["score"] == 2  # the standings stay
    again = client.delete(f"/api/v1/arenas/{arena}", headers=auth())
    assert again.get_json()["status"] == "cancelled"
    audit = client.get("/api/v1/audit", headers=auth()).get_json()["items"]
    mine = [a for a in audit if a["action"] == "arenas.cancel_arena"]
    assert sorted(a["status"] for a in mine) == [200, 200, 403]
    assert all(a["target"] == arena for a in mine)
