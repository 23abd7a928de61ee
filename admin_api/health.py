"""``/healthz`` (Redis answers: 200, else 503) and Prometheus ``/metrics``; both
without auth, for probes and scrapers."""

from __future__ import annotations

from typing import Any

from flask import Response
from flask_openapi3.blueprint import APIBlueprint

from admin_api import metrics
from admin_api.common import operation_id, tag
from admin_api.schemas import ErrorResponse, HealthOut
from admin_api.service import get_service

api = APIBlueprint(
    "health",
    __name__,
    operation_id_callback=operation_id,
    abp_tags=tag("health", "Probes and metrics (no auth)"),
)

METRICS_RESPONSE = {
    "description": "Prometheus text exposition format",
    "content": {"text/plain": {"schema": {"type": "string"}}},
}


@api.get("/healthz", responses={200: HealthOut, 503: ErrorResponse, 500: ErrorResponse})
def healthz() -> dict[str, Any]:
    """200 when Redis answers, 503 ``redis_unavailable`` when it does not."""
    svc = get_service()
    svc.call(svc.service.admin.ping)
    return {"status": "ok", "redis": "ok"}


@api.get("/metrics", responses={200: METRICS_RESPONSE, 500: ErrorResponse})
def prometheus_metrics() -> Response:
    """Request counts and latency per endpoint and status, admin writes, live
    games, lobbies and players (Redis down: ``durak_redis_up 0``)."""
    return metrics.exposition()
