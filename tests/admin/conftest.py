"""Fixtures of the admin API tests: ``app`` (the product's factory,
:func:`durak.wiring.admin_app` -- the bot's flood budgets wired in -- over the
session's real Redis, under the test's own key prefix), ``client`` (Flask's test client) and
``svc`` (the app's own table service, to set up games as the bot would)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from flask_openapi3.openapi import OpenAPI

from admin_api.service import close_service, get_service
from durak.wiring import admin_app
from tables import SyncTableService

ADMIN = "admin-secret-token"
READER = "reader-secret-token"


def auth(token: str = ADMIN) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture
def admin_redis_url(redis_url: str) -> str:
    """The app's ``REDIS_URL`` (tests/admin/test_cluster.py: a Redis Cluster)."""
    return redis_url


@pytest.fixture
def app_config(admin_redis_url: str, redis_prefix: str) -> dict[str, Any]:
    return {
        "TESTING": True,
        "ADMIN_TOKEN": ADMIN,
        "ADMIN_READ_TOKEN": READER,
        "REDIS_URL": admin_redis_url,
        "REDIS_PREFIX": redis_prefix,
        "RATED_AFTER_GAMES": 0,  # every account established (#38)
        "RATED_AFTER_DAYS": 0,
        "RATED_DIVERSITY_OPPONENTS": 0,  # nor the opponent-diversity guard
    }


@pytest.fixture
def app(app_config: dict[str, Any]) -> Iterator[OpenAPI]:
    app = admin_app(app_config)
    yield app
    close_service(app)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def svc(app: Flask) -> SyncTableService:
    with app.app_context():
        return get_service()


def new_table(
    svc: SyncTableService,
    humans: int = 2,
    ais: int = 1,
    *,
    variant: str = "chuvash",
    chat: int | None = -100,
    first_user: int = 1,
    timer: int = 0,
    start: bool = True,
) -> str:
    """A table made as the bot makes it: a lobby, players, AI seats, started."""
    r = svc.call(
        svc.service.lobbies.create_lobby,
        first_user,
        f"U{first_user}",
        chat=chat,
        variant=variant,
        timer=timer,
    )
    tid: str = r.table_id
    for u in range(first_user + 1, first_user + humans):
        svc.call(svc.service.lobbies.join, tid, u, f"U{u}")
    for _ in range(ais):
        svc.call(svc.service.lobbies.add_ai, tid, first_user)
    if start:
        svc.call(svc.service.games.start, tid, first_user)
    return tid
