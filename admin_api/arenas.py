"""``/api/v1/arenas``: a group's tournaments (#27) -- the list, one arena with its
standings and the tables being played, its games, and cancelling one (audited)."""

from __future__ import annotations

from typing import Any

from flask import g
from flask_openapi3.blueprint import APIBlueprint

from admin_api.common import READ_ERRORS, SECURITY, WRITE_ERRORS, operation_id, tag
from admin_api.schemas import (
    ArenaGamesOut,
    ArenaGamesQuery,
    ArenaList,
    ArenaListQuery,
    ArenaOut,
    ArenaPath,
    ArenaSummaryOut,
    ErrorResponse,
)
from admin_api.service import get_service
from tables.arena_rules import Arena

api = APIBlueprint(
    "arenas",
    __name__,
    operation_id_callback=operation_id,
    url_prefix="/api/v1",
    abp_tags=tag("arenas", "Tournaments in groups: standings, games, cancelling"),
    abp_security=SECURITY,
)


def summary(a: Arena) -> dict[str, Any]:
    return {
        "id": a.id,
        "chat": a.chat,
        "creator": a.creator,
        "variant": a.variant,
        "seats": a.seats,
        "timer": a.timer,
        "status": a.status,
        "starts": a.starts,
        "ends": a.ends,
        "players": len(a.players),
        "games": a.games,
        "playing": len(a.playing),
        "ended": a.ended,
        "why": a.why,
    }


def detail(a: Arena) -> dict[str, Any]:
    standings = [
        {
            "rank": i,
            "user": p.user,
            "name": p.name,
            "score": p.score,
            "games": p.games,
            "wins": p.wins,
            "streak": p.streak,
            "rating": p.rating,
            "withdrawn": p.withdrawn,
            "table": p.table,
            "recent": list(p.recent),
        }
        for i, p in enumerate(a.standings(), start=1)
    ]
    tables = [{"table": t.table, "users": list(t.users), "at": t.at} for t in a.playing]
    body = {**summary(a), "standings": standings, "tables": tables}
    return ArenaOut.model_validate(body).model_dump(mode="json")


@api.get("/arenas", responses={200: ArenaList, **READ_ERRORS})
def list_arenas(query: ArenaListQuery) -> dict[str, Any]:
    """The arenas kept (a week after their end), newest first."""
    svc = get_service()
    got = svc.call(svc.service.arenas.listing, query.limit)
    return ArenaList(items=[ArenaSummaryOut(**summary(a)) for a in got]).model_dump(mode="json")


@api.get("/arenas/<arena_id>", responses={200: ArenaOut, 404: ErrorResponse, **READ_ERRORS})
def get_arena(path: ArenaPath) -> dict[str, Any]:
    """One arena: its settings, its standings (best first) and the tables being
    played now."""
    svc = get_service()
    return detail(svc.call(svc.service.arenas.get, path.arena_id))


@api.get(
    "/arenas/<arena_id>/games", responses={200: ArenaGamesOut, 404: ErrorResponse, **READ_ERRORS}
)
def get_arena_games(path: ArenaPath, query: ArenaGamesQuery) -> dict[str, Any]:
    """The games it scored, oldest first: each player's points."""
    svc = get_service()
    rows = svc.call(svc.service.arenas.games, path.arena_id, query.offset, query.limit)
    return ArenaGamesOut.model_validate(
        {"arena": path.arena_id, "offset": query.offset, "items": rows}
    ).model_dump(mode="json")


@api.delete("/arenas/<arena_id>", responses={200: ArenaOut, **WRITE_ERRORS})
def cancel_arena(path: ArenaPath) -> dict[str, Any]:
    """Cancel an arena now (audited): nobody is seated any more; the games being
    played finish as ordinary games; its standings stay.  An arena over
    already is answered as it is."""
    svc = get_service()
    g.audit_detail = f"arena {path.arena_id}"
    by = g.get("principal").name if g.get("principal") is not None else "admin"
    arena = svc.call(svc.service.arenas.cancel, path.arena_id, f"operator {by}")
    return detail(arena)
