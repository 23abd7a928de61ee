"""Helpers shared by the blueprints: table summaries, pages, the write path
(If-Match -> the service's compare-and-set) and the audit of every write."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flask import Flask, Response, g, request
from flask_openapi3.models.tag import Tag

from admin_api.errors import WRITE_METHODS
from admin_api.schemas import ErrorResponse, EventOut, ListQuery, WriteOut
from admin_api.service import get_service
from tables import LiveEvent, ServiceUnavailable, TableSummary, WriteResult

log = logging.getLogger(__name__)

SECURITY: list[dict[str, list[str]]] = [{"bearer": []}]
READ_ERRORS: dict[Any, Any] = {
    401: ErrorResponse,
    414: ErrorResponse,
    422: ErrorResponse,
    500: ErrorResponse,
    503: ErrorResponse,
}
WRITE_ERRORS: dict[Any, Any] = {
    **READ_ERRORS,
    400: ErrorResponse,
    403: ErrorResponse,
    404: ErrorResponse,
    409: ErrorResponse,
    413: ErrorResponse,
    415: ErrorResponse,
}


def operation_id(*, bp_name: str = "", name: str = "", path: str = "", method: str = "") -> str:
    """OpenAPI operation ids: the view function's name (``list_games``)."""
    return name


def tag(name: str, description: str) -> list[Tag]:
    return [Tag(name=name, description=description)]


def table_out(summary: TableSummary | dict[str, Any]) -> dict[str, Any]:
    """A service table summary (or its JSON) with seat indexes."""
    row = summary.to_json() if isinstance(summary, TableSummary) else summary
    out = dict(row)
    out["seats"] = [{"seat": i, **s} for i, s in enumerate(row["seats"])]
    return out


def table_page(
    q: ListQuery,
    keep: Callable[[dict[str, Any]], bool],
    *,
    status: str | None = None,
    started: bool = False,
) -> dict[str, Any]:
    """One page of tables matching the query's filters and ``keep`` (which must
    mean ``status``/``started``): by ``cursor`` when the query has one (the
    index read from there on; no ``total``), else by ``offset``."""
    svc = get_service()
    if q.cursor is not None:
        found, nxt = svc.call(
            svc.service.admin.table_page,
            cursor=q.cursor,
            limit=q.limit,
            status=status,
            variant=q.variant,
            chat=q.chat,
            user=q.user,
            started=started,
        )
        return {
            "items": [table_out(r) for r in found],
            "total": None,
            "limit": q.limit,
            "offset": 0,
            "next_offset": None,
            "next_cursor": nxt or None,
        }
    found = svc.call(
        svc.service.admin.list_tables, variant=q.variant, chat=q.chat, user=q.user, limit=10**9
    )
    rows = [r for r in (s.to_json() for s in found) if keep(r)]
    end = q.offset + q.limit
    return {
        "items": [table_out(r) for r in rows[q.offset : end]],
        "total": len(rows),
        "limit": q.limit,
        "offset": q.offset,
        "next_offset": end if end < len(rows) else None,
        "next_cursor": None,
    }


def event_out(e: LiveEvent) -> dict[str, Any]:
    return EventOut(version=e.version, kind=e.kind, seat=e.seat, text=e.text).model_dump()


def expected_version(if_match: str | None) -> int | None:
    """The version of an ``If-Match`` header (``12``, ``"12"`` or ``W/"12"``)."""
    if not if_match:
        return None
    return int(if_match.removeprefix("W/").strip('"'))


def write(
    action: str,
    if_match: str | None,
    call: Callable[[int | None], WriteResult],
    detail: str = "",
) -> dict[str, Any]:
    """Run one admin write through the service (its compare-and-set; at the
    ``If-Match`` version when given) and describe what it did."""
    g.audit_detail = detail
    r = call(expected_version(if_match))
    g.audit_version = r.version
    return WriteOut(
        table=r.table_id,
        action=action,
        version=r.version,
        status=r.table.status,
        events=[EventOut(**event_out(e)) for e in r.events],
    ).model_dump()


def actor() -> str:
    return str(g.principal.name)


def _audit(resp: Response) -> Response:
    """``after_request``: record every authenticated write attempt that reached a
    route (success or refusal) in the audit stream."""
    principal = g.get("principal")
    if request.method not in WRITE_METHODS or request.url_rule is None or principal is None:
        return resp
    result = "ok"
    if resp.status_code >= 400:
        body = resp.get_json(silent=True) if resp.is_json else None
        result = (body or {}).get("error", {}).get("code", f"http_{resp.status_code}")
    args = request.view_args or {}
    version = g.get("audit_version")
    entry = {
        "actor": principal.name,
        "role": principal.role,
        "action": request.url_rule.endpoint,
        "method": request.method,
        "path": request.path,
        "target": str(
            args.get("game_id")
            or args.get("lobby_id")
            or args.get("user_id")
            or args.get("arena_id")
            or ""
        ),
        "status": resp.status_code,
        "result": result,
        "version": "" if version is None else version,
        "detail": g.get("audit_detail", ""),
    }
    try:
        svc = get_service()
        svc.call(svc.service.audit_log.audit, entry)
    except ServiceUnavailable as e:  # the write itself already answered (or failed) by now
        log.error("audit entry not written (%s): %s", e, entry)
    from admin_api.metrics import count_write

    count_write(entry["action"], result)
    return resp


def init_app(app: Flask) -> None:
    app.after_request(_audit)
