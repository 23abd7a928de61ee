"""The operators' admin REST API (Flask, flask-openapi3): list and inspect live
games and lobbies, reset/abort/end/delete games, hand seats to the AI, cancel
lobbies, look up players, stats, the audit log, ``/healthz`` and ``/metrics``.

``create_app()`` is the application factory (``gunicorn 'admin_api:create_app()'``).
The groups' learned flood budgets are the bot's state, which this package does
not import: ``create_app(budgets=...)`` takes a reader of them
(:mod:`admin_api.budgets`), and the product's own factory,
``durak.wiring:admin_app()`` (``durak admin``, ``durak run``), gives it the
bot's; without one, ``/api/v1/flood/budgets`` lists none.
Configuration from the environment (or ``test_config``):

=================== =========================================================
``ADMIN_TOKEN``      bearer token that reads and writes (required)
``ADMIN_READ_TOKEN`` bearer token that only reads (optional)
``REDIS_URL``        the bot's Redis (default ``redis://127.0.0.1:6379/0``)
``REDIS_PREFIX``     key prefix of the table service (default ``durak:``)
``ADMIN_MAX_BODY``   largest request body in bytes (default 65536; more: 413)
``ADMIN_MAX_URL``    longest path + query in characters (default 4000; more: 414)
``METRICS_LIVE_TTL`` seconds a ``/metrics`` snapshot of the live tables is reused (15)
=================== =========================================================

``RATED_AFTER_GAMES``, ``RATED_AFTER_DAYS``, ``RATED_DIVERSITY_OPPONENTS``,
``RATED_DIVERSITY_DAYS`` and ``RATING_LOG_MAXLEN`` are the bot's (README,
docs/RATINGS.md; default 5, 2, 3, 7 and 100000).

The OpenAPI document is at ``/openapi/openapi.json``, Swagger UI at
``/openapi/swagger`` (assets served locally).  All state goes through
:class:`tables.SyncTableService`; see :mod:`admin_api.service`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from flask_openapi3.models.info import Info
from flask_openapi3.openapi import OpenAPI

from admin_api import (
    arenas,
    auth,
    budgets,
    common,
    errors,
    games,
    health,
    lobbies,
    metrics,
    players,
    ratings,
    records,
    security,
    service,
)
from admin_api.schemas import ErrorResponse

API_VERSION = "1.0.0"


class ConfigError(RuntimeError):
    """The app cannot start with this configuration."""


def create_app(
    test_config: Mapping[str, Any] | None = None,
    *,
    flood_budgets: budgets.BudgetsSource | None = None,
) -> OpenAPI:
    """Build the admin API app (refuses to start without ``ADMIN_TOKEN``).
    ``flood_budgets``: makes the reader of the groups' learned flood budgets
    (:mod:`admin_api.budgets`; None: the API lists none)."""
    app = OpenAPI(
        __name__,
        info=Info(
            title="durak admin API",
            version=API_VERSION,
            description=(
                "Operators' API of the durak bot. Authorization: `Bearer <ADMIN_TOKEN>` "
                "(read and write) or `Bearer <ADMIN_READ_TOKEN>` (read only). "
                'Every error is `{"error": {"code", "message"}}`.'
            ),
        ),
        security_schemes={"bearer": {"type": "http", "scheme": "bearer"}},
        validation_error_status=422,
        validation_error_model=ErrorResponse,
        validation_error_callback=errors.validation_error,
        doc_prefix="/openapi",
        doc_url="/openapi.json",
    )
    app.config.from_mapping(
        ADMIN_TOKEN=os.environ.get("ADMIN_TOKEN", ""),
        ADMIN_READ_TOKEN=os.environ.get("ADMIN_READ_TOKEN", ""),
        REDIS_URL=os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0",
        REDIS_PREFIX=os.environ.get("REDIS_PREFIX") or "durak:",
        MAX_CONTENT_LENGTH=int(os.environ.get("ADMIN_MAX_BODY") or 64 * 1024),
        MAX_URL_LENGTH=int(os.environ.get("ADMIN_MAX_URL") or 4000),
        METRICS_LIVE_TTL=float(os.environ.get("METRICS_LIVE_TTL") or 15),
        RATED_AFTER_GAMES=int(os.environ.get("RATED_AFTER_GAMES") or 5),
        RATED_AFTER_DAYS=float(os.environ.get("RATED_AFTER_DAYS") or 2),
        RATED_DIVERSITY_OPPONENTS=int(os.environ.get("RATED_DIVERSITY_OPPONENTS") or 3),
        RATED_DIVERSITY_DAYS=float(os.environ.get("RATED_DIVERSITY_DAYS") or 7),
        RATING_LOG_MAXLEN=int(os.environ.get("RATING_LOG_MAXLEN") or 100_000),
        JSON_SORT_KEYS=False,
        SWAGGER_CONFIG={"persistAuthorization": True},
    )
    if test_config is not None:
        app.config.from_mapping(test_config)
    if not app.config["ADMIN_TOKEN"]:
        raise ConfigError(
            "ADMIN_TOKEN is not set: the admin API refuses to start without it. "
            "Set ADMIN_TOKEN to a long random secret (read and write access); "
            "ADMIN_READ_TOKEN optionally gives read-only access."
        )
    app.json.sort_keys = False  # type: ignore[attr-defined]

    service.init_app(app)
    budgets.init_app(app, flood_budgets)
    security.init_app(app)
    metrics.init_app(app, app.extensions[service.EXTENSION])
    errors.init_app(app)
    app.before_request(errors.check_url_length)
    auth.init_app(app)  # who asks is answered first (401, 403), then what he sent
    app.before_request(errors.check_query_repeats)
    app.before_request(errors.check_json_body)
    common.init_app(app)

    for bp in (
        games.api,
        lobbies.api,
        players.api,
        ratings.api,
        arenas.api,
        records.api,
        health.api,
    ):
        app.register_api(bp)
    return app


__all__ = ["ConfigError", "create_app"]
