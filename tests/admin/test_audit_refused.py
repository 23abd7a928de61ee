"""Issue #17: refused attempts cannot push operator writes out of the audit log."""

from __future__ import annotations

import time

import pytest
from flask.testing import FlaskClient

from tables import SyncTableService
from tests.admin.conftest import ADMIN, READER, auth, new_table


@pytest.mark.slow
def test_refused_attempts_do_not_flush_the_audit_log(
    client: FlaskClient, svc: SyncTableService
) -> None:
    tid = new_table(svc)
    lobby = new_table(svc, first_user=20, start=False)
    assert client.post(f"/api/v1/lobbies/{lobby}/cancel", headers=auth()).status_code == 200
    for _ in range(20_000):
        r = client.post(f"/api/v1/games/{tid}/end", headers=auth(READER))
        assert r.status_code == 403
    entries = []
    before = None
    while True:
        page = client.get(
            "/api/v1/audit",
            query_string={"limit": 200, **({"before": before} if before else {})},
            headers=auth(),
        ).get_json()
        entries += page["items"]
        if not page["items"] or page.get("next_before") is None:
            break
        before = page["next_before"]
    assert any(e["action"].endswith("cancel_lobby") and e["actor"] == "admin" for e in entries)


def test_refused_attempts_are_kept_apart_and_read_in_order(
    client: FlaskClient, svc: SyncTableService
) -> None:
    tid = new_table(svc)
    lobby = new_table(svc, first_user=20, start=False)
    for url, token in [
        (f"/api/v1/games/{tid}/end", READER),
        (f"/api/v1/lobbies/{lobby}/cancel", ADMIN),
        (f"/api/v1/games/{tid}/end", READER),
        (f"/api/v1/games/{tid}/end", ADMIN),
    ]:
        client.post(url, headers=auth(token))
        time.sleep(0.003)  # across the two streams, order is by millisecond only
    seen = []
    before = None
    while True:
        q = {"limit": 1, **({"before": before} if before else {})}
        page = client.get("/api/v1/audit", query_string=q, headers=auth()).get_json()
        assert page["total"] == 4
        seen += [(e["actor"], e["status"]) for e in page["items"]]
        if page["next_before"] is None:
            break
        before = page["next_before"]
    assert seen == [("admin", 200), ("reader", 403), ("admin", 200), ("reader", 403)]
