"""Typed results of the table service's reads: table summaries and details,
game results, players, stats, the leaderboard, audit pages and seat views.
Each is a frozen dataclass; those the admin API answers have ``to_json()``,
giving the JSON body it has always sent (same keys, same order)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tables.model import Table


@dataclass(frozen=True)
class GameResult:
    """A finished game (RULES §0), stored in the table (``res``): the place of
    each seat (1 = out first; a draw's last players share one, #38), the
    loser's seat (None: a draw), the seats'
    users and names, the finish time (ms); for the ratings (#25): whether its
    lobby chose rated games (it was rated if, besides, no seat is an AI's), the
    seats whose human walked away (left, or the AI played his seat at the end)
    and those the AI took over at some point (he left or timed out)."""

    table: str
    game: int
    variant: str
    chat: int | None
    places: tuple[int, ...]
    loser: int | None
    draw: bool
    seats: tuple[tuple[int | None, str], ...]
    at: int
    rated: bool = False
    away: tuple[int, ...] = ()
    taken: tuple[int, ...] = ()
    excused: tuple[int, ...] = ()
    """Seats an operator handed to the AI that it still played at the end (#38):
    not the player's doing -- his rating does not move."""
    fresh: tuple[int, ...] = ()
    """#38: the users whose account was new at the start: the game was casual
    for them (docs/RATINGS.md)."""
    capped: tuple[tuple[int, int], ...] = ()
    """#38: the pairs of users (lower first) past the farming guard at the
    start: their result against each other does not count."""
    narrow: tuple[tuple[int, int], ...] = ()
    """#38: the pairs of users (lower first) that failed the opponent-diversity
    guard at the start (one of them had too few other recent opponents):
    their result against each other does not count, as a capped pair's."""

    def to_json(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"rated": self.rated} if self.rated else {}
        extra |= {"fresh": list(self.fresh)} if self.fresh else {}
        extra |= {"capped": [list(p) for p in self.capped]} if self.capped else {}
        extra |= {"narrow": [list(p) for p in self.narrow]} if self.narrow else {}
        extra |= {"away": list(self.away)} if self.away else {}
        extra |= {"taken": list(self.taken)} if self.taken else {}
        extra |= {"excused": list(self.excused)} if self.excused else {}
        return {
            "table": self.table,
            "game": self.game,
            "variant": self.variant,
            "chat": self.chat,
            "places": list(self.places),
            "loser": self.loser,
            "draw": self.draw,
            "seats": [[u, n] for u, n in self.seats],
            "at": self.at,
            **extra,
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> GameResult:
        return cls(
            table=d["table"],
            game=d["game"],
            variant=d["variant"],
            chat=d["chat"],
            places=tuple(d["places"]),
            loser=d["loser"],
            draw=d["draw"],
            seats=tuple((u, n) for u, n in d["seats"]),
            at=d["at"],
            rated=bool(d.get("rated", False)),
            away=tuple(d.get("away", ())),
            taken=tuple(d.get("taken", ())),
            excused=tuple(d.get("excused", ())),
            fresh=tuple(d.get("fresh", ())),
            capped=tuple((int(a), int(b)) for a, b in d.get("capped", ())),
            narrow=tuple((int(a), int(b)) for a, b in d.get("narrow", ())),
        )


@dataclass(frozen=True)
class SeatInfo:
    user: int | None
    name: str
    ai: str | None
    timeouts: int
    left: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "name": self.name,
            "ai": self.ai,
            "timeouts": self.timeouts,
            "left": self.left,
        }


@dataclass(frozen=True)
class TableSummary:
    """A table as the admin list shows it."""

    id: str
    status: str
    variant: str
    options: Mapping[str, Any]
    chat: int | None
    creator: int
    private: bool
    max_seats: int
    timer: int
    game_no: int
    version: int
    deadline: int | None
    created: int
    updated: int
    seats: tuple[SeatInfo, ...]

    @classmethod
    def of(cls, t: Table, version: int, deadline: int | None) -> TableSummary:
        return cls(
            id=t.id,
            status=t.status,
            variant=t.variant,
            options=t.options,
            chat=t.chat,
            creator=t.creator,
            private=t.private,
            max_seats=t.max_seats,
            timer=t.timer,
            game_no=t.game_no,
            version=version,
            deadline=deadline,
            created=t.created,
            updated=t.updated,
            seats=tuple(SeatInfo(s.user, s.name, s.ai, s.timeouts, s.left) for s in t.seats),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "variant": self.variant,
            "options": dict(self.options),
            "chat": self.chat,
            "creator": self.creator,
            "private": self.private,
            "max_seats": self.max_seats,
            "timer": self.timer,
            "game_no": self.game_no,
            "version": self.version,
            "deadline": self.deadline,
            "created": self.created,
            "updated": self.updated,
            "seats": [s.to_json() for s in self.seats],
        }


@dataclass(frozen=True)
class TableInfo:
    """Everything about one table: its summary, the full game state (every hand;
    None before the first game), the seats the game waits for, the last result."""

    summary: TableSummary
    state: Mapping[str, Any] | None
    to_act: tuple[int, ...]
    result: GameResult | None

    @property
    def version(self) -> int:
        return self.summary.version

    @property
    def deadline(self) -> int | None:
        return self.summary.deadline

    def to_json(self) -> dict[str, Any]:
        return {
            **self.summary.to_json(),
            "state": None if self.state is None else dict(self.state),
            "to_act": list(self.to_act),
            "result": None if self.result is None else self.result.to_json(),
        }


@dataclass(frozen=True)
class UserStats:
    """A user's counts per variant: ``games``, ``losses``, ``draws``, ``p<place>``."""

    counts: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, dict[str, int]]:
        return {v: dict(c) for v, c in self.counts.items()}


@dataclass(frozen=True)
class PlayerInfo:
    """Where a user sits now (None: nowhere) and his stats."""

    user: int
    table: TableSummary | None
    stats: UserStats

    def to_json(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "table": None if self.table is None else self.table.to_json(),
            "stats": self.stats.to_json(),
        }


@dataclass(frozen=True)
class LeaderboardEntry:
    """One player of a chat's leaderboard."""

    user: int
    name: str
    games: int
    losses: int
    draws: int

    @property
    def wins(self) -> int:
        return self.games - self.losses - self.draws


@dataclass(frozen=True)
class GlobalStats:
    """Live games, open lobbies (also by variant), players seated at them, tables
    finished or cancelled, games finished in the last 24 hours by variant."""

    live_games: int
    open_lobbies: int
    live_by_variant: Mapping[str, int]
    lobbies_by_variant: Mapping[str, int]
    finished_tables: int
    active_players: int
    finished_24h: Mapping[str, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "live_games": self.live_games,
            "open_lobbies": self.open_lobbies,
            "live_by_variant": dict(self.live_by_variant),
            "lobbies_by_variant": dict(self.lobbies_by_variant),
            "finished_tables": self.finished_tables,
            "active_players": self.active_players,
            "finished_24h": dict(self.finished_24h),
        }


@dataclass(frozen=True)
class AuditEntry:
    """One operator action: its stream id and its flat string fields (``at``,
    ``actor``, ``role``, ``action``, ``target``, ``status``, ``result``, ...)."""

    id: str
    fields: Mapping[str, str]

    def get(self, name: str, default: str = "") -> str:
        return self.fields.get(name, default)


@dataclass(frozen=True)
class AuditPage:
    """Audit entries, newest first, and the stream's length."""

    entries: tuple[AuditEntry, ...]
    total: int


@dataclass(frozen=True)
class SeatView:
    """``engine.view`` of a user's seat (the public view if he has none) and the
    table version it was read at."""

    view: Mapping[str, object]
    version: int


__all__ = [
    "AuditEntry",
    "AuditPage",
    "GameResult",
    "GlobalStats",
    "LeaderboardEntry",
    "PlayerInfo",
    "SeatInfo",
    "SeatView",
    "TableInfo",
    "TableSummary",
    "UserStats",
]
