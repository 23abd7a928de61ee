"""Issue #17: made-up methods and paths do not grow ``/metrics``; scrapes do
not scan the tables each time."""

from __future__ import annotations

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tables import GlobalStats, SyncTableService
from tests.admin.conftest import auth, new_table


def test_made_up_methods_and_paths_do_not_grow_metrics(client: FlaskClient) -> None:
    client.get("/api/v1/games", headers=auth())
    client.get("/nope")
    client.open("/healthz", method="FOO")
    before = len(client.get("/metrics").get_data())
    for i in range(300):
        client.open(f"/made/up/{i}", method=f"M{i}X")
        client.open(f"/api/v1/games/{i}/x{i}", method=f"Q{i}", headers=auth())
        client.get(f"/nothing-{i}")
    after = client.get("/metrics").get_data(as_text=True)
    assert len(after) - before < 4000, len(after) - before
    assert 'method="other"' in after
    assert "M1X" not in after
    assert "made/up" not in after


def test_metrics_does_not_scan_the_tables_on_every_scrape(
    app: Flask, client: FlaskClient, svc: SyncTableService, monkeypatch: pytest.MonkeyPatch
) -> None:
    new_table(svc)
    calls = []
    real = svc.service.admin.global_stats

    async def counted() -> GlobalStats:
        calls.append(1)
        return await real()

    monkeypatch.setattr(svc.service.admin, "global_stats", counted)
    for _ in range(50):
        text = client.get("/metrics").get_data(as_text=True)
    assert 'durak_live_games{variant="chuvash"} 1.0' in text
    assert len(calls) <= 1


def test_live_gauges_refresh_after_their_ttl(app_config: dict[str, object]) -> None:
    from admin_api import create_app
    from admin_api.service import close_service, get_service

    app = create_app({**app_config, "METRICS_LIVE_TTL": 0})
    try:
        c = app.test_client()
        assert "durak_live_games{" not in c.get("/metrics").get_data(as_text=True)
        with app.app_context():
            new_table(get_service())
        assert 'durak_live_games{variant="chuvash"} 1.0' in c.get("/metrics").get_data(as_text=True)
    finally:
        close_service(app)
