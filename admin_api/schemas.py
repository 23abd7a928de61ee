"""Pydantic models of the API: query, path, header and body models of the
requests and the response bodies (they make the OpenAPI document)."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engine.ai import KINDS as AI_KINDS
from engine.variants import VARIANTS
from tables.model import STATUSES

TABLE_ID = r"^[A-Za-z0-9_-]{1,64}$"
Status = Literal["open", "playing", "over", "cancelled"]
Variant = Literal["chuvash", "shchelkovsky"]
AiKind = Literal["random", "easy", "heuristic", "search", "expert"]
assert set(get_args(Status)) == set(STATUSES), "keep Status in step with tables"
assert set(get_args(Variant)) == set(VARIANTS), "keep Variant in step with engine.variants"
assert set(get_args(AiKind)) == set(AI_KINDS), "keep AiKind in step with engine.ai"


# ------------------------------------------------------------------ errors
class ErrorDetail(BaseModel):
    code: str = Field(description="stable machine-readable code, e.g. not_found")
    message: str = Field(description="what went wrong, for people")
    details: list[dict[str, Any]] | None = Field(None, description="failing fields (422)")
    current: int | None = Field(None, description="the table's version now (409 stale_version)")
    expected: int | None = Field(None, description="the version the request expected")

    model_config = {"extra": "allow"}


class ErrorResponse(BaseModel):
    """Every error: ``{"error": {"code": ..., "message": ...}}``."""

    error: ErrorDetail


# ------------------------------------------------------------------ requests
def _no_null(schema: dict[str, Any]) -> None:
    """Optional parameters are absent, never null: document them as plain types."""
    for prop in schema.get("properties", {}).values():
        options = prop.get("anyOf")
        if options and {"type": "null"} in options and len(options) == 2:
            prop.pop("anyOf")
            prop.update(next(o for o in options if o != {"type": "null"}))
        if prop.get("default", 0) is None:
            prop.pop("default")


class Params(BaseModel):
    """Query, path and header parameters."""

    model_config = ConfigDict(json_schema_extra=_no_null)


class ListQuery(Params):
    variant: Variant | None = Field(None, description="only this game variant")
    chat: int | None = Field(None, ge=-(2**63), le=2**63 - 1, description="Telegram chat id")
    user: int | None = Field(
        None, ge=-(2**63), le=2**63 - 1, description="only tables where this user sits"
    )
    limit: int = Field(50, ge=1, le=500)
    offset: int = Field(0, ge=0, le=10**9)
    cursor: str | None = Field(
        None,
        pattern=r"^(\d{1,16}:[A-Za-z0-9_-]{1,64})?$",
        max_length=81,
        description="page by cursor: empty for the first page, then the previous "
        "page's next_cursor (reads the index from there on; no total)",
    )


class GameListQuery(ListQuery):
    status: Status | None = Field(None, description="only tables in this status")


class GamePath(Params):
    game_id: str = Field(pattern=TABLE_ID, description="table id (= invite code)")


class LobbyPath(Params):
    lobby_id: str = Field(pattern=TABLE_ID, description="table id (= invite code)")


class SeatPath(GamePath):
    seat: int = Field(ge=0, le=63, description="seat index (0-based)")


class UserPath(Params):
    user_id: int = Field(ge=-(2**63), le=2**63 - 1, description="Telegram user id")


class EventQuery(Params):
    after: int = Field(0, ge=0, le=2**53, description="versions above this (paging cursor)")
    limit: int = Field(100, ge=1, le=1000)


class AuditQuery(Params):
    before: str | None = Field(
        None,
        pattern=r"^[0-9]{1,19}-[0-9]{1,19}$",
        description="entries older than this id (a page's next_before)",
    )
    limit: int = Field(50, ge=1, le=500)

    @field_validator("before")
    @classmethod
    def _stream_id(cls, v: str | None) -> str | None:
        if v is not None and any(int(part) >= 2**64 for part in v.split("-")):
            raise ValueError("not a stream id")
        return v


class WriteHeader(Params):
    if_match: str | None = Field(
        None,
        alias="If-Match",
        pattern=r'^(W/)?"?[0-9]{1,15}"?$',
        description="the table version the write expects (409 stale_version otherwise)",
    )


class ResetBody(BaseModel):
    to: Literal["lobby", "abort"] = Field(
        description="lobby: back to the lobby with the same seats; abort: end the table"
    )


class HandToAiQuery(Params):
    kind: AiKind | None = Field(None, description="AI kind (default: the service's)")


# ------------------------------------------------------------------ responses
class SeatOut(BaseModel):
    seat: int
    user: int | None = Field(description="Telegram user id; null for an AI seat")
    name: str
    ai: str | None = Field(description="AI kind playing the seat now, if any")
    timeouts: int
    left: bool


class TableOut(BaseModel):
    id: str
    status: str
    variant: str
    options: dict[str, Any]
    chat: int | None
    creator: int
    private: bool
    max_seats: int
    timer: int = Field(description="turn timer in seconds (0: off)")
    game_no: int
    version: int
    deadline: int | None = Field(description="turn deadline, epoch ms")
    created: int
    updated: int
    seats: list[SeatOut]


class GameOut(TableOut):
    state: dict[str, Any] | None = Field(description="full engine state, every hand included")
    to_act: list[int]
    seconds_left: float | None = Field(description="until the turn deadline")
    result: dict[str, Any] | None = Field(description="result of the match's last game")


class TablePage(BaseModel):
    items: list[TableOut]
    total: int | None = Field(description="tables matching (null when paging by cursor)")
    limit: int
    offset: int
    next_offset: int | None
    next_cursor: str | None = Field(description="the next page's cursor (null: no more)")


class EventOut(BaseModel):
    version: int
    kind: str
    seat: int
    text: str


class EventPage(BaseModel):
    items: list[EventOut]
    next_after: int | None = Field(description="pass as ?after= for the next page")


class WriteOut(BaseModel):
    table: str
    action: str
    version: int = Field(description="the table's version after the write")
    status: str = Field(description="the table's status after the write")
    events: list[EventOut]


class PlayerOut(BaseModel):
    user: int
    table: TableOut | None = Field(description="the open lobby or game where he sits")
    stats: dict[str, dict[str, int]]


class StatsOut(BaseModel):
    live_games: int
    open_lobbies: int
    finished_tables: int
    active_players: int
    finished_24h: dict[str, int] = Field(description="games finished in 24 h, by variant")
    live_by_variant: dict[str, int]
    lobbies_by_variant: dict[str, int]


class GroupBudgetOut(BaseModel):
    chat: int = Field(description="the group's Telegram chat id")
    public: int = Field(description="messages a minute the bot allows itself in the group now")
    ephemeral: int = Field(
        description="ephemeral messages a minute while they are not counted with the public ones"
    )
    counted: bool = Field(description="ephemeral messages count against the public minute")
    refused_public: int = Field(description="429 answers to public writes so far")
    refused_ephemeral: int = Field(description="429 answers to ephemeral writes so far")
    changed_at: int = Field(description="epoch ms of the last change")
    why: str = Field(description="the last change, in words")


class GroupBudgetsOut(BaseModel):
    items: list[GroupBudgetOut]


class AuditEntryOut(BaseModel):
    id: str
    at: int = Field(description="epoch ms")
    actor: str = Field(description="token name (admin, reader)")
    role: str
    action: str
    method: str
    path: str
    target: str
    status: int
    result: str = Field(description="ok or the error code")
    version: int | None
    detail: str


class AuditPageOut(BaseModel):
    items: list[AuditEntryOut]
    total: int
    next_before: str | None


class HealthOut(BaseModel):
    status: Literal["ok"]
    redis: Literal["ok"]


# ------------------------------------------------------------------ ratings (#25)
class VariantPath(Params):
    variant: Variant = Field(description="the game")


class BoardQuery(Params):
    limit: int = Field(20, ge=1, le=500)
    provisional: bool = Field(
        False, description="the provisional players (too few games yet) instead"
    )


class HistoryQuery(Params):
    limit: int = Field(50, ge=1, le=100)


class RatingOut(BaseModel):
    rating: int = Field(description="the rating shown: 1000 + 30 (mu - 3 sigma), at least 0")
    provisional: bool = Field(description="sigma still at or above the provisional threshold")
    games: int = Field(description="rated games counted")
    mu: float
    sigma: float


class PlayerRatingsOut(BaseModel):
    user: int
    name: str
    ratings: dict[str, RatingOut] = Field(description="by variant")
    reliability: float | None = Field(
        description="share of his last games the AI never took his seat in (null: none yet)"
    )
    recent_games: int = Field(description="games the reliability counts (at most 20)")
    cooldown_until: int | None = Field(description="end of his cooldown from rated games (ms)")
    offences: int = Field(description="rated games he walked away from in the last 72 h")


class BoardRowOut(BaseModel):
    user: int
    name: str
    rating: int
    provisional: bool
    games: int


class BoardOut(BaseModel):
    variant: str
    items: list[BoardRowOut]


class HistoryEntryOut(BaseModel):
    at: int = Field(description="when the game ended (ms)")
    variant: str
    table: str
    game: int
    rating: int = Field(description="his rating after the game")
    change: int
    provisional: bool
    rank: int = Field(description="his rank in the game (1 best; ties share one)")


class HistoryOut(BaseModel):
    user: int
    items: list[HistoryEntryOut]


# ------------------------------------------------------------------ arenas (#27)
ARENA_ID = r"^[A-Za-z0-9_-]{1,64}$"
ArenaStatus = Literal["scheduled", "running", "finished", "cancelled"]


class ArenaPath(Params):
    arena_id: str = Field(pattern=ARENA_ID, description="arena id")


class ArenaListQuery(Params):
    limit: int = Field(50, ge=1, le=500)


class ArenaGamesQuery(Params):
    offset: int = Field(0, ge=0, le=10**9)
    limit: int = Field(100, ge=1, le=1000)


class ArenaSummaryOut(BaseModel):
    id: str
    chat: int = Field(description="the group it runs in")
    creator: int
    variant: str
    seats: int = Field(description="players per table")
    timer: int = Field(description="the turn timer of its games (s)")
    status: ArenaStatus
    starts: int = Field(description="start (ms)")
    ends: int = Field(description="end (ms): no pairing after it; running games finish")
    players: int
    games: int = Field(description="games scored")
    playing: int = Field(description="tables being played now")
    ended: int = Field(description="when it finished or was cancelled (ms; 0: not yet)")
    why: str = Field(description="a cancelled arena: by whom")


class ArenaList(BaseModel):
    items: list[ArenaSummaryOut]


class StandingOut(BaseModel):
    rank: int
    user: int
    name: str
    score: int
    games: int
    wins: int = Field(description="games he finished first out")
    streak: int = Field(description="games in a row first out (2 or more: on fire)")
    rating: int
    withdrawn: bool
    table: str = Field(description="the table he plays at now ('' = none)")
    recent: list[int] = Field(description="points of his last games, newest last")


class PairingOut(BaseModel):
    table: str
    users: list[int]
    at: int = Field(description="when it was seated (ms)")


class ArenaOut(ArenaSummaryOut):
    standings: list[StandingOut]
    tables: list[PairingOut] = Field(description="the tables being played now")


class ArenaGameOut(BaseModel):
    table: str
    game: int
    at: int = Field(description="when it ended (ms)")
    users: list[int]
    points: list[int] = Field(description="each player's points, as users")
    doubled: list[bool] = Field(description="his points were doubled (on fire)")
    loser: int | None
    draw: bool


class ArenaGamesOut(BaseModel):
    arena: str
    offset: int
    items: list[ArenaGameOut]


class CooldownOut(BaseModel):
    user: int
    lifted: bool = Field(description="whether there was a cooldown or an offence to forget")
