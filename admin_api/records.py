"""``/api/v1/games/<id>/records/<game>``: a finished game's full record (issue
#16) -- the deal's seed and commitment, variant, options, seats, every move and
the result -- kept for ``replay_ttl`` after the game ends, then 404.  The body
is a ``durak-record/1`` file: ``python -m engine replay FILE`` replays it and
``python -m engine verify`` checks its deal (docs/FAIRNESS.md)."""

from __future__ import annotations

from typing import Any

from flask_openapi3.blueprint import APIBlueprint
from pydantic import BaseModel, ConfigDict, Field

from admin_api.common import READ_ERRORS, SECURITY, operation_id, tag
from admin_api.schemas import ErrorResponse, GamePath
from admin_api.service import get_service

api = APIBlueprint(
    "records",
    __name__,
    operation_id_callback=operation_id,
    url_prefix="/api/v1",
    abp_tags=tag("records", "Finished games' records: replay and check the deal"),
    abp_security=SECURITY,
)


class RecordPath(GamePath):
    game_no: int = Field(ge=1, le=2**53, description="the game of the table (1: its first)")


class RecordOut(BaseModel):
    model_config = ConfigDict(extra="allow")

    format: str = Field(description="durak-record/1")
    table: str
    game: int
    variant: str
    options: dict[str, Any]
    players: int
    seed: str = Field(description="the deal's secret seed, revealed now that the game is over")
    commitment: str = Field(description="SHA-256 shown at the start (docs/FAIRNESS.md)")
    previous_loser: int | None = Field(description="C5/S5: the seat before him led")
    hands: list[list[str]] = Field(description="each seat's starting hand")
    stock: list[str] = Field(description="the stock, top card first")
    trump: str | None
    trump_card: str | None
    first_attacker: int
    actions: list[dict[str, Any]] = Field(description="every move, in order (RULES §3 form)")
    seats: list[list[Any]] = Field(description="[Telegram user id or null (AI), name] by seat")
    ai: list[str | None] | None = Field(
        default=None,
        description="each AI seat's kind at the end (heuristic, search, ...; null: a human); "
        "absent in records kept before it was added",
    )
    result: dict[str, Any]


@api.get(
    "/games/<game_id>/records/<game_no>",
    responses={200: RecordOut, 404: ErrorResponse, **READ_ERRORS},
)
def get_record(path: RecordPath) -> dict[str, Any]:
    """A finished game's record; 404 (``no_record``) when it was never played
    to its end or has expired."""
    svc = get_service()
    record = svc.call(svc.service.replays.record, path.game_id, path.game_no)
    return RecordOut(**record).model_dump(mode="json")
