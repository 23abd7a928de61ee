"""The table service: lobbies, games, timers, event log, AI seats and stats in
Redis -- the only code that knows Redis keys (:mod:`engine.live.keys`).

Data flow: a request -> :class:`TableService` loads the table (one round trip),
applies the move with the pure engine, lets AI seats answer, and saves with
compare-and-set (one round trip: a Lua script, checking the version and the
request id).  Modules: ``keys`` (schema), ``codec`` (state blob), ``store``
(Redis scripts), ``core`` (load/plan/write), ``games``, ``lobbies``,
``results``, ``timers``, ``admin``, ``service`` (facades).
"""

from engine.live.games import run_ai, timeout_move
from engine.live.keys import Keys
from engine.live.lobbies import new_code
from engine.live.model import (
    CANCELLED,
    OPEN,
    OVER,
    PLAYING,
    LiveConfig,
    LiveError,
    LiveEvent,
    Seat,
    StaleVersion,
    Table,
    WriteResult,
)
from engine.live.service import SyncTableService, TableService

__all__ = [
    "CANCELLED",
    "OPEN",
    "OVER",
    "PLAYING",
    "Keys",
    "LiveConfig",
    "LiveError",
    "LiveEvent",
    "Seat",
    "StaleVersion",
    "SyncTableService",
    "Table",
    "TableService",
    "WriteResult",
    "new_code",
    "run_ai",
    "timeout_move",
]
