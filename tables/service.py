"""The facade: :class:`TableService` builds the parts of the table service over
one store and exposes their operations under the names the bot and the admin
API have always used (``svc.join(...)`` is ``svc.lobbies.join(...)``)."""

from __future__ import annotations

import time
from collections.abc import Callable

from engine import GameState
from engine.clock import Clock
from tables.admin import Admin
from tables.audit import Audit
from tables.client import Client, make_client
from tables.deciders import Decider
from tables.games import Games
from tables.keys import Keys
from tables.kv import KeyValueStore
from tables.lobbies import Lobbies
from tables.model import LiveConfig, Table
from tables.notifications import Notifications
from tables.results import Results
from tables.store import Store
from tables.tables import Loaded, Tables
from tables.timers import Timers


class TableService:
    """Lobbies, games, timers, stats and admin operations over one Redis.

    ``TableService(redis_client, config, clock=time.time)`` or
    ``TableService.from_url(url, config, max_connections=64)`` (owns its client;
    ``await svc.aclose()``).  Every write goes through one compare-and-set; see
    :mod:`tables`.  The parts: ``tables``, ``lobbies``, ``games``,
    ``timers``, ``results``, ``admin``, ``audit_log``, and ``kv`` (generic
    key-value access for the chat adapters' own state).
    """

    def __init__(
        self,
        client: Client,
        config: LiveConfig | None = None,
        *,
        clock: Clock = time.time,
        owns_client: bool = False,
        decider: Decider | None = None,
    ) -> None:
        self.config = config = config or LiveConfig()
        self.keys = Keys(config.prefix, config.timer_shards)
        self.redis = client
        self.store = store = Store(client, self.keys, probe_timeout=config.redis_probe_timeout)
        self.clock = clock
        self._owns_client = owns_client
        self.kv = KeyValueStore(store, config.prefix)
        self.results = results = Results(store, config)
        self.tables = tables = Tables(store, results, config, clock)
        self.games = games = Games(tables, config, decider)
        self.lobbies = lobbies = Lobbies(tables, games)
        self.timers = timers = Timers(tables, games, config, clock)
        self.admin = admin = Admin(tables, games, results)
        self.audit_log = audit = Audit(store, config, clock)
        # the operations, by their long-standing names
        self.now_ms = tables.now_ms
        self.load = tables.load
        self.where = tables.where
        self.prune_index = tables.index.prune
        self.create_lobby = lobbies.create_lobby
        self.lobby = lobbies.lobby
        self.join = lobbies.join
        self.leave = lobbies.leave
        self.add_ai = lobbies.add_ai
        self.remove_ai = lobbies.remove_ai
        self.configure = lobbies.configure
        self.cancel = lobbies.cancel
        self.start = games.start
        self.rematch = games.rematch
        self.apply = games.apply
        self.take_seat_back = games.take_seat_back
        self.seat_view = games.seat_view
        self.tick = timers.tick
        self.next_deadline = timers.next_deadline
        self.run_timers = timers.run_timers
        self.user_stats = results.user_stats
        self.leaderboard = results.leaderboard
        self.replay_record = tables.replays.record
        self.recent_replays = tables.replays.recent
        self.list_tables = admin.list_tables
        self.table_page = admin.table_page
        self.table_info = admin.table_info
        self.event_page = admin.event_page
        self.admin_reset = admin.admin_reset
        self.admin_cancel = admin.admin_cancel
        self.admin_delete = admin.admin_delete
        self.admin_hand_to_ai = admin.admin_hand_to_ai
        self.player = admin.player
        self.global_stats = admin.global_stats
        self.ping = admin.ping
        self.audit = audit.audit
        self.audit_page = audit.audit_page

    @classmethod
    def from_url(
        cls,
        url: str,
        config: LiveConfig | None = None,
        *,
        clock: Clock = time.time,
        max_connections: int | None = None,
    ) -> TableService:
        """A service with its own client (closed by :meth:`aclose`), built by
        :func:`tables.store.make_client`: retries with backoff on connection
        errors, health checks and socket timeouts from ``config``
        (``redis_*``).  With ``max_connections`` the client's pool is a blocking
        one of that size: a request waits (up to 20 s) for a free connection
        instead of failing."""
        config = config or LiveConfig()
        client = make_client(url, config, max_connections)
        return cls(client, config, clock=clock, owns_client=True)

    async def aclose(self) -> None:
        if self._owns_client:
            await self.store.aclose()

    async def __aenter__(self) -> TableService:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def use_decider(self, decider: Decider) -> None:
        """Compute the AI moves with ``decider`` from now on (the bot's process
        pool, :class:`~tables.deciders.PoolDecider`)."""
        self.games.decider = decider

    @property
    def round_trips(self) -> int:
        """Redis round trips made so far by this instance."""
        return self.store.round_trips

    @property
    def new_seed(self) -> Callable[[], int]:
        """The shuffle seed of each new game (tests replace it)."""
        return self.games.new_seed

    @new_seed.setter
    def new_seed(self, make: Callable[[], int]) -> None:
        self.games.new_seed = make

    async def get(self, table_id: str) -> tuple[Table, GameState | None, int]:
        """The table, its game state (None before the first game) and version."""
        loaded: Loaded = await self.tables.load(table_id)
        return loaded.table, loaded.state, loaded.version

    def notifications(self) -> Notifications:
        """Notes of tables written elsewhere (timers, operators, players leaving):
        ``async with svc.notifications() as notes: note = await notes.get(0.5)``."""
        return Notifications(self.store)
