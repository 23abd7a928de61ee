"""``/api/v1/lobbies``: open lobbies -- list, detail, cancel."""

from __future__ import annotations

from typing import Any

from flask_openapi3.blueprint import APIBlueprint

from admin_api.common import (
    READ_ERRORS,
    SECURITY,
    WRITE_ERRORS,
    actor,
    operation_id,
    table_out,
    table_page,
    tag,
    write,
)
from admin_api.schemas import (
    ErrorResponse,
    ListQuery,
    LobbyPath,
    TableOut,
    TablePage,
    WriteHeader,
    WriteOut,
)
from admin_api.service import get_service
from tables import OPEN

api = APIBlueprint(
    "lobbies",
    __name__,
    operation_id_callback=operation_id,
    url_prefix="/api/v1",
    abp_tags=tag("lobbies", "Open lobbies"),
    abp_security=SECURITY,
)


@api.get("/lobbies", responses={200: TablePage, **READ_ERRORS})
def list_lobbies(query: ListQuery) -> dict[str, Any]:
    """List open lobbies (tables waiting for a start), newest change first."""
    return table_page(query, lambda t: t["status"] == OPEN, status=OPEN)


@api.get("/lobbies/<lobby_id>", responses={200: TableOut, 404: ErrorResponse, **READ_ERRORS})
def get_lobby(path: LobbyPath) -> dict[str, Any]:
    """One lobby: settings and seats (any table id works; see ``status``)."""
    svc = get_service()
    info = svc.call(svc.service.admin.table_info, path.lobby_id).to_json()
    return TableOut(**table_out(info)).model_dump(mode="json")


@api.post("/lobbies/<lobby_id>/cancel", responses={200: WriteOut, **WRITE_ERRORS})
def cancel_lobby(path: LobbyPath, header: WriteHeader) -> dict[str, Any]:
    """Cancel an open lobby (409 ``not_open`` once it started or closed)."""
    svc = get_service()
    return write(
        "cancel",
        header.if_match,
        lambda v: svc.call(svc.service.admin.admin_cancel, path.lobby_id, by=actor(), expected=v),
    )
