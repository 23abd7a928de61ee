"""``/api/v1/ratings`` and a player's ratings, rating history and cooldown (#25)."""

from __future__ import annotations

from typing import Any

from flask import g
from flask_openapi3.blueprint import APIBlueprint

from admin_api.common import READ_ERRORS, SECURITY, WRITE_ERRORS, operation_id, tag
from admin_api.schemas import (
    BoardOut,
    BoardQuery,
    CooldownOut,
    HistoryOut,
    HistoryQuery,
    PlayerRatingsOut,
    UserPath,
    VariantPath,
)
from admin_api.service import get_service

api = APIBlueprint(
    "ratings",
    __name__,
    operation_id_callback=operation_id,
    url_prefix="/api/v1",
    abp_tags=tag("ratings", "Ratings, leaderboards, reliability and cooldowns"),
    abp_security=SECURITY,
)


@api.get("/players/<user_id>/ratings", responses={200: PlayerRatingsOut, **READ_ERRORS})
def get_player_ratings(path: UserPath) -> dict[str, Any]:
    """A player's rating in each game (provisional or not, games counted), his
    reliability over his last 20 games, and his cooldown from rated games."""
    svc = get_service()
    me = svc.call(svc.service.ratings.of, path.user_id)
    return PlayerRatingsOut(**me.to_json()).model_dump(mode="json")


@api.get("/players/<user_id>/ratings/history", responses={200: HistoryOut, **READ_ERRORS})
def get_rating_history(path: UserPath, query: HistoryQuery) -> dict[str, Any]:
    """His rated games, newest first: the rating after each and its change."""
    svc = get_service()
    rows = svc.call(svc.service.ratings.history, path.user_id, query.limit)
    return HistoryOut.model_validate({"user": path.user_id, "items": rows}).model_dump(mode="json")


@api.get("/ratings/<variant>", responses={200: BoardOut, **READ_ERRORS})
def get_leaderboard(path: VariantPath, query: BoardQuery) -> dict[str, Any]:
    """The global leaderboard of a game, best first: the players whose rating
    is settled (or, with ``provisional``, those whose is not yet)."""
    svc = get_service()
    rows = svc.call(svc.service.ratings.top, path.variant, query.limit, query.provisional)
    items = [r.to_json() for r in rows]
    return BoardOut.model_validate({"variant": path.variant, "items": items}).model_dump(
        mode="json"
    )


@api.delete("/players/<user_id>/cooldown", responses={200: CooldownOut, **WRITE_ERRORS})
def lift_cooldown(path: UserPath) -> dict[str, Any]:
    """End a player's cooldown from rated games and forget his offences
    (audited). ``lifted`` false: he had none."""
    svc = get_service()
    g.audit_detail = f"user {path.user_id}"
    lifted = svc.call(svc.service.ratings.lift_cooldown, path.user_id)
    return CooldownOut(user=path.user_id, lifted=lifted).model_dump(mode="json")
