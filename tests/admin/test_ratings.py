"""The ratings endpoints (#25): a player's ratings and history, the global
leaderboard, lifting a cooldown (audited; refused to a read-only token)."""

from __future__ import annotations

import time

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


def test_the_offences_shown_are_those_of_the_last_72_hours(
    client: FlaskClient, svc: SyncTableService
) -> None:
    """#38: offences 80 and 32 hours ago -- the key lives 72 h after the newer
    one and keeps both -- show as one: the older is out of the window (the
    app's clock is the real one)."""
    now = int(time.time() * 1000)
    for game, hours in ((1, 80), (2, 32)):
        r = GameResult(
            table="old", game=game, variant="chuvash", chat=-1, places=(2, 1), loser=0,
            draw=False, seats=((7, "U7"), (8, "U8")), at=now - hours * 3_600_000, rated=True,
            away=(0,), taken=(0,),
        )  # fmt: skip
        svc.call(svc.service.ratings.settle, r)
    body = client.get("/api/v1/players/7/ratings", headers=auth(READER)).get_json()
    assert body["offences"] == 1
