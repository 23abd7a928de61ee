"""``/api/v1/games``: list, inspect, event log, reset/abort, end, delete and
hand a seat to the AI.  A game is addressed by its table id (the invite code);
the list shows tables that have started at least one game."""

from __future__ import annotations

from typing import Any

from flask import Response, jsonify
from flask_openapi3.blueprint import APIBlueprint

from admin_api.common import (
    READ_ERRORS,
    SECURITY,
    WRITE_ERRORS,
    actor,
    event_out,
    operation_id,
    table_out,
    table_page,
    tag,
    write,
)
from admin_api.schemas import (
    ErrorResponse,
    EventPage,
    EventQuery,
    GameListQuery,
    GameOut,
    GamePath,
    HandToAiQuery,
    ResetBody,
    SeatPath,
    TablePage,
    WriteHeader,
    WriteOut,
)
from admin_api.service import get_service

api = APIBlueprint(
    "games",
    __name__,
    operation_id_callback=operation_id,
    url_prefix="/api/v1",
    abp_tags=tag("games", "Live games: inspect, reset, end, delete, hand a seat to the AI"),
    abp_security=SECURITY,
)


@api.get("/games", responses={200: TablePage, **READ_ERRORS})
def list_games(query: GameListQuery) -> dict[str, Any]:
    """List games (tables that started a game), newest change first."""
    return table_page(
        query,
        lambda t: t["game_no"] > 0 and (query.status is None or t["status"] == query.status),
        status=query.status,
        started=True,
    )


@api.get("/games/<game_id>", responses={200: GameOut, 404: ErrorResponse, **READ_ERRORS})
def get_game(path: GamePath) -> Response:
    """Everything about one game: settings, seats (Telegram ids and names), the
    version, the turn timer and the full state with every hand.  The ``ETag`` is
    the version (send it back as ``If-Match`` on a write)."""
    svc = get_service()
    info = svc.call(svc.service.admin.table_info, path.game_id).to_json()
    out = table_out(info)
    deadline = info["deadline"]
    out["seconds_left"] = (
        None if deadline is None else max(0.0, (deadline - svc.service.tables.now_ms()) / 1000)
    )
    resp = jsonify(GameOut(**out).model_dump(mode="json"))
    resp.headers["ETag"] = f'"{info["version"]}"'
    return resp


@api.get("/games/<game_id>/events", responses={200: EventPage, 404: ErrorResponse, **READ_ERRORS})
def game_events(path: GamePath, query: EventQuery) -> dict[str, Any]:
    """The game's event log, oldest first, from version ``after`` on (all events
    of one version stay on one page)."""
    svc = get_service()
    svc.call(svc.service.lobbies.lobby, path.game_id)  # 404 when there is no such table
    page = svc.call(svc.service.admin.event_page, path.game_id, query.after, query.limit)
    return {
        "items": [event_out(e) for e in page],
        "next_after": page[-1].version if len(page) >= query.limit else None,
    }


@api.post("/games/<game_id>/reset", responses={200: WriteOut, **WRITE_ERRORS})
def reset_game(path: GamePath, header: WriteHeader, body: ResetBody) -> dict[str, Any]:
    """Reset a game: ``to=lobby`` drops the game and reopens its lobby with the
    same seats; ``to=abort`` ends the table (kept a while for inspection).  The
    players are told by the bot."""
    svc = get_service()
    return write(
        f"reset:{body.to}",
        header.if_match,
        lambda v: svc.call(
            svc.service.admin.admin_reset, path.game_id, to=body.to, by=actor(), expected=v
        ),
        detail=f"to={body.to}",
    )


@api.post("/games/<game_id>/end", responses={200: WriteOut, **WRITE_ERRORS})
def end_game(path: GamePath, header: WriteHeader) -> dict[str, Any]:
    """End a game now (the same as reset ``to=abort``)."""
    svc = get_service()
    return write(
        "end",
        header.if_match,
        lambda v: svc.call(
            svc.service.admin.admin_reset, path.game_id, to="abort", by=actor(), expected=v
        ),
    )


@api.delete("/games/<game_id>", responses={200: WriteOut, **WRITE_ERRORS})
def delete_game(path: GamePath, header: WriteHeader) -> dict[str, Any]:
    """Delete a table and its event log now (the players are told)."""
    svc = get_service()
    return write(
        "delete",
        header.if_match,
        lambda v: svc.call(svc.service.admin.admin_delete, path.game_id, by=actor(), expected=v),
    )


@api.post("/games/<game_id>/seats/<seat>/ai", responses={200: WriteOut, **WRITE_ERRORS})
def hand_seat_to_ai(path: SeatPath, header: WriteHeader, query: HandToAiQuery) -> dict[str, Any]:
    """Let the AI play a seat (the player can take it back in Telegram)."""
    kind = query.kind or ""
    svc = get_service()
    return write(
        "hand_to_ai",
        header.if_match,
        lambda v: svc.call(
            svc.service.admin.admin_hand_to_ai,
            path.game_id,
            path.seat,
            kind=kind,
            by=actor(),
            expected=v,
        ),
        detail=f"seat={path.seat} kind={kind or 'default'}",
    )
