"""The table service: lobbies, seats, games (load -> apply -> save with
compare-and-set), turn timers, the event log, AI seats, results and stats, on
Redis.  It is the only product code that imports redis (the bot and the admin
API reach Redis only through it -- the bot's own state through its generic
key-value API ``svc.kv`` -- and catch :class:`ServiceUnavailable`), and it knows
nothing of Telegram.

Data flow: a request -> a part of :class:`TableService` (``svc.games.apply``)
loads the table (one round trip), applies the move with the pure engine, lets
AI seats answer, and saves with compare-and-set (one round trip: a Lua script,
checking the version and the request id).  Small parts composed over one store;
:class:`TableService` builds them and callers reach each operation through its
part (``svc.lobbies.join``, ``svc.tables.load``, ``svc.admin.table_page``), so
the facade holds only what is the whole service's: construction and closing,
the AI decider, the notify channel, ``config``, ``keys``, ``kv`` and the parts.
The modules:

``store`` (the client: round trips counted, Redis errors -> :class:`ServiceUnavailable`),
``scripts`` (Lua), ``keys`` (schema), ``codec`` (state blob), ``eventlog``,
``model`` (records, errors), ``records`` (typed read results), ``tables``
(load / plan / CAS write, user pointers, index), ``games``, ``lobbies``,
``timers``, ``results``, ``replays``, ``admin``, ``groups`` (a group the bot
lost, #38), ``audit`` (the part
``svc.audit_log``), ``kv`` (generic key-value API), ``notifications`` (the
notify channel), ``service`` (the facade), ``sync`` (blocking access for the
admin API: ``call`` runs any operation on the service's own loop thread).
"""

from tables.deciders import Decider, InlineDecider, PoolDecider
from tables.faults import expected_fault, log_failure, survived
from tables.games import run_ai, timeout_move
from tables.keys import Keys
from tables.kv import KeyValueStore
from tables.live import LiveFeed, LiveNote
from tables.lobbies import new_code
from tables.model import (
    CANCELLED,
    MOVE_KINDS,
    OPEN,
    OVER,
    PLAYING,
    LiveConfig,
    LiveError,
    LiveEvent,
    RematchOffer,
    Seat,
    ServiceUnavailable,
    StaleVersion,
    Table,
    WriteResult,
    require_owner,
)
from tables.notifications import Notification, Notifications
from tables.records import (
    AuditEntry,
    AuditPage,
    GameResult,
    GlobalStats,
    LeaderboardEntry,
    PlayerInfo,
    SeatInfo,
    SeatView,
    TableInfo,
    TableSummary,
    UserStats,
)
from tables.service import TableService
from tables.sync import SyncTableService
from tables.tables import Loaded, Plan, RenderClaim, RenderWindow

__all__ = [
    "CANCELLED",
    "MOVE_KINDS",
    "OPEN",
    "OVER",
    "PLAYING",
    "AuditEntry",
    "AuditPage",
    "Decider",
    "GameResult",
    "GlobalStats",
    "InlineDecider",
    "KeyValueStore",
    "Keys",
    "LeaderboardEntry",
    "LiveConfig",
    "LiveError",
    "LiveEvent",
    "LiveFeed",
    "LiveNote",
    "Loaded",
    "Notification",
    "Notifications",
    "Plan",
    "PlayerInfo",
    "PoolDecider",
    "RematchOffer",
    "RenderClaim",
    "RenderWindow",
    "Seat",
    "SeatInfo",
    "SeatView",
    "ServiceUnavailable",
    "StaleVersion",
    "SyncTableService",
    "Table",
    "TableInfo",
    "TableService",
    "TableSummary",
    "UserStats",
    "WriteResult",
    "expected_fault",
    "log_failure",
    "new_code",
    "require_owner",
    "run_ai",
    "survived",
    "timeout_move",
]
