"""The facade: :class:`TableService` builds the parts of the table service over
one store.  Callers reach an operation through the part that owns it
(``svc.lobbies.join(...)``, ``svc.games.apply(...)``, ``svc.tables.load(...)``);
the facade itself only builds, closes and configures the whole."""

from __future__ import annotations

import time

from engine.clock import Clock
from tables.admin import Admin
from tables.arena_runner import ArenaRunner
from tables.audit import Audit
from tables.client import Client, make_client
from tables.deciders import Decider
from tables.games import Games
from tables.groups import Groups
from tables.keys import Keys
from tables.kv import KeyValueStore
from tables.live import LiveFeed
from tables.lobbies import Lobbies
from tables.model import LiveConfig
from tables.notifications import Notifications
from tables.results import Results
from tables.store import Store
from tables.tables import Tables
from tables.timers import Timers


class TableService:
    """Lobbies, games, timers, stats and admin operations over one Redis.

    ``TableService(redis_client, config, clock=time.time)`` or
    ``TableService.from_url(url, config, max_connections=64)`` (owns its client;
    ``await svc.aclose()``).  Every write goes through one compare-and-set; see
    :mod:`tables`.  The parts: ``tables`` (load, write, user pointers, the
    index), ``lobbies``, ``games``, ``timers``, ``results`` (stats,
    leaderboards), ``ratings``, ``fairplay`` (offences, cooldowns, the one
    check before a rated game), ``replays``, ``arenas`` (#27), ``admin`` (the operators' reads and writes),
    ``audit_log``, ``store`` (the client, its round trips) and ``kv`` (generic
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
        # the parts: each operation is reached through the part that owns it
        # (``svc.lobbies.join(...)``, ``svc.games.apply(...)``), so the facade
        # does not grow with every operation
        self.results = results = Results(store, config)
        self.tables = tables = Tables(store, results, config, clock)
        self.ratings = tables.ratings  # #25: ratings, reliability, cooldowns
        self.fairplay = tables.fairplay  # offences, cooldowns: the one check before rated games
        self.replays = tables.replays
        self.games = games = Games(tables, config, decider)
        self.lobbies = lobbies = Lobbies(tables, games)
        # arenas (#27): a group's tournament; the timers wake them
        self.arenas = tables.arenas
        self.timers = Timers(tables, games, ArenaRunner(tables, lobbies, games), config, clock)
        self.admin = Admin(tables, games, results)
        self.audit_log = Audit(store, config, clock)
        # a group the bot lost: its arena and tables stop (#38)
        self.groups = Groups(tables, self.arenas, self.admin)

    @classmethod
    def from_url(
        cls,
        url: str,
        config: LiveConfig | None = None,
        *,
        clock: Clock = time.time,
        max_connections: int | None = None,
        decider: Decider | None = None,
    ) -> TableService:
        """A service with its own client (closed by :meth:`aclose`), built by
        :func:`tables.client.make_client`: retries with backoff on connection
        errors, health checks and socket timeouts from ``config``
        (``redis_*``).  With ``max_connections`` the client's pool is a blocking
        one of that size: a request waits (up to 20 s) for a free connection
        instead of failing.  ``decider``: who computes the AI moves (the bot's
        process pool, :class:`~tables.deciders.PoolDecider`; default: inline)."""
        config = config or LiveConfig()
        client = make_client(url, config, max_connections)
        return cls(client, config, clock=clock, owns_client=True, decider=decider)

    async def aclose(self) -> None:
        if self._owns_client:
            await self.store.aclose()

    async def __aenter__(self) -> TableService:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def upgrade(self) -> dict[str, int] | None:
        """Bring data of an older release up to this one, once per Redis (#38):
        the ratings of before the per-player slots moved into them
        (:func:`tables.migrate.migrate_ratings`; idempotent, so two processes
        starting together do no harm), then a mark that spares every later
        start the scan.  None when the mark says it was done."""
        from tables.migrate import migrate_ratings

        mark = self.ratings.keys.migrated
        if await self.store.one(lambda p: p.exists(mark)):
            return None
        moved = await migrate_ratings(self)
        await self.store.one(lambda p: p.set(mark, "1"))
        return moved

    def use_decider(self, decider: Decider) -> None:
        """Compute the AI moves with ``decider`` from now on (the bot's process
        pool, :class:`~tables.deciders.PoolDecider`)."""
        self.games.decider = decider

    def notifications(self) -> Notifications:
        """Notes of tables written elsewhere (timers, operators, players leaving):
        ``async with svc.notifications() as notes: note = await notes.get(0.5)``."""
        return Notifications(self.store)

    def live(self) -> LiveFeed:
        """The tables' live channels (#42): ``async with svc.live() as feed:
        await feed.watch(table_id); note = await feed.get(0.5)``."""
        return LiveFeed(self.store)
