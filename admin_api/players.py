"""``/api/v1/players``, ``/api/v1/stats`` and ``/api/v1/audit``."""

from __future__ import annotations

from typing import Any

from flask_openapi3.blueprint import APIBlueprint

from admin_api import budgets
from admin_api.common import READ_ERRORS, SECURITY, operation_id, table_out, tag
from admin_api.schemas import (
    AuditPageOut,
    AuditQuery,
    GroupBudgetOut,
    GroupBudgetsOut,
    PlayerOut,
    StatsOut,
    UserPath,
)
from admin_api.service import get_service

api = APIBlueprint(
    "players",
    __name__,
    operation_id_callback=operation_id,
    url_prefix="/api/v1",
    abp_tags=tag("players", "Players, stats and the audit log"),
    abp_security=SECURITY,
)


@api.get("/players/<user_id>", responses={200: PlayerOut, **READ_ERRORS})
def get_player(path: UserPath) -> dict[str, Any]:
    """A player by Telegram user id: the lobby or game where he sits now (or
    null) and his stats per variant."""
    svc = get_service()
    p = svc.call(svc.service.admin.player, path.user_id).to_json()
    if p["table"] is not None:  # with its current version and deadline
        p["table"] = table_out(svc.call(svc.service.admin.table_info, p["table"]["id"]).to_json())
    return PlayerOut(**p).model_dump(mode="json")


@api.get("/stats", responses={200: StatsOut, **READ_ERRORS})
def stats() -> dict[str, Any]:
    """Live games and open lobbies (total and by variant), players seated at them,
    games finished in the last 24 h by variant."""
    svc = get_service()
    return StatsOut(**svc.call(svc.service.admin.global_stats).to_json()).model_dump(mode="json")


@api.get("/flood/budgets", responses={200: GroupBudgetsOut, **READ_ERRORS})
def flood_budgets() -> dict[str, Any]:
    """The groups whose message budget the bot learned from Telegram's 429
    answers (#24), the latest change first (at most 100): messages a minute it
    allows itself now, whether ephemeral messages (hands shown in the group)
    count with the public ones, the refusals so far and why it last changed.
    A group not listed has the documented 20 a minute.  An app built without
    the bot's budgets reader (a bare `admin_api:create_app()`, not `durak
    admin` nor `durak run`) lists none: the list is then empty."""
    items = [GroupBudgetOut.model_validate(b) for b in budgets.current()]
    return GroupBudgetsOut(items=items).model_dump(mode="json")


@api.get("/audit", responses={200: AuditPageOut, **READ_ERRORS})
def audit(query: AuditQuery) -> dict[str, Any]:
    """Operators' write attempts, newest first: who (token name and role), what,
    target, HTTP status, result and when."""
    svc = get_service()
    page = svc.call(svc.service.audit_log.audit_page, before=query.before, count=query.limit)
    items = [
        {
            "id": r.id,
            **{k: r.get(k, "") for k in ("actor", "role", "action", "method", "path")},
            "target": r.get("target", ""),
            "detail": r.get("detail", ""),
            "result": r.get("result", ""),
            "at": int(r.get("at", "0")),
            "status": int(r.get("status", "0")),
            "version": int(r.get("version")) if r.get("version") else None,
        }
        for r in page.entries
    ]
    return {
        "items": items,
        "total": page.total,
        "next_before": items[-1]["id"] if len(items) >= query.limit else None,
    }
