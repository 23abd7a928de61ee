"""The ratings endpoints (#25): a player's ratings and history, the global
leaderboard, lifting a cooldown (audited; refused to a read-only token)."""

from __future__ import annotations

from flask.testing import FlaskClient

from tables import GameResult, SyncTableService
from tests.admin.conftest import READER, auth

T0 = 1_700_000_000_000


def settle(svc: SyncTableService, game: int, users: list[int], **kw: object) -> None:
    r = GameResult(
        table="adm",
        game=game,
        variant="chuvash",
        chat=-1,
        places=tuple(range(1, len(users) + 1)),
        loser=len(users) - 1,
        draw=False,
        seats=tuple((u, f"U{u}") for u in users),
        at=T0 + game * 3_600_000,
        rated=True,
        **kw,  # type: ignore[arg-type]
    )
    svc.call(svc.service.ratings.settle, r)


def test_ratings_leaderboard_and_history(client: FlaskClient, svc: SyncTableService) -> None:
    for g in range(4):
        settle(svc, g, [1, 2, 3])
    me = client.get("/api/v1/players/1/ratings", headers=auth(READER))
    assert me.status_code == 200
    body = me.get_json()
    assert body["ratings"]["chuvash"]["games"] == 4
    assert body["ratings"]["chuvash"]["provisional"] is True
    assert body["ratings"]["shchelkovsky"]["games"] == 0
    assert body["reliability"] == 1.0
    assert body["cooldown_until"] is None
    hist = client.get("/api/v1/players/1/ratings/history?limit=2", headers=auth()).get_json()
    assert len(hist["items"]) == 2
    assert hist["items"][0]["game"] == 3  # newest first
    assert hist["items"][0]["rank"] == 1
    board = client.get("/api/v1/ratings/chuvash?provisional=true", headers=auth()).get_json()
    assert [r["user"] for r in board["items"]] == [1, 2, 3]  # always out first, best
    assert client.get("/api/v1/ratings/chuvash", headers=auth()).get_json()["items"] == []
    assert client.get("/api/v1/ratings/poker", headers=auth()).status_code == 422


def test_lifting_a_cooldown_is_audited(client: FlaskClient, svc: SyncTableService) -> None:
    for g in range(2):  # he walked away twice: a cooldown
        settle(svc, g, [5, 6], away=(0,), taken=(0,))
    assert client.get("/api/v1/players/5/ratings", headers=auth()).get_json()["cooldown_until"]
    refused = client.delete("/api/v1/players/5/cooldown", headers=auth(READER))
    assert refused.status_code == 403
    r = client.delete("/api/v1/players/5/cooldown", headers=auth())
    assert r.status_code == 200
    assert r.get_json() == {"user": 5, "lifted": True}
    after = client.get("/api/v1/players/5/ratings", headers=auth()).get_json()
    assert after["cooldown_until"] is None
    assert after["offences"] == 0
    again = client.delete("/api/v1/players/5/cooldown", headers=auth()).get_json()
    assert again["lifted"] is False
    audit = client.get("/api/v1/audit", headers=auth()).get_json()["items"]
    mine = [a for a in audit if a["action"] == "ratings.lift_cooldown"]
    assert sorted(a["status"] for a in mine) == [200, 200, 403]  # the refused one too
    assert all(a["target"] == "5" for a in mine)
