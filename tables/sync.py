"""Blocking access to the table service for the Flask admin API (under
gunicorn): :class:`SyncTableService` runs a :class:`TableService` on a private
event-loop thread and offers, one typed method each, the operations the admin
API (and its tests) use -- an unknown name is a type error, not a runtime one."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

from engine import GameState
from engine.clock import Clock
from tables.keys import Keys
from tables.model import LiveConfig, LiveEvent, Table, WriteResult
from tables.records import AuditPage, GlobalStats, PlayerInfo, TableInfo, TableSummary
from tables.service import TableService

T = TypeVar("T")


class SyncTableService:
    """Blocking calls into a :class:`TableService` on its own loop thread (one per
    instance; create it once per gunicorn worker).

    >>> svc = SyncTableService("redis://127.0.0.1:6379/0")        # doctest: +SKIP
    >>> svc.list_tables(status="playing")                          # doctest: +SKIP
    >>> svc.close()                                                # doctest: +SKIP
    """

    def __init__(
        self, url: str, config: LiveConfig | None = None, *, clock: Clock | None = None
    ) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="table-service", daemon=True
        )
        self._thread.start()

        async def make() -> TableService:
            if clock is None:
                return TableService.from_url(url, config)
            return TableService.from_url(url, config, clock=clock)

        self.service = self.run(make())

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run one coroutine on the service's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def close(self) -> None:
        """Close the Redis client and stop the loop thread."""
        if self._loop.is_closed():
            return
        self.run(self.service.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    @property
    def keys(self) -> Keys:
        return self.service.keys

    def now_ms(self) -> int:
        return self.service.tables.now_ms()

    # ------------------------------------------------------------------ reads
    def ping(self) -> bool:
        return self.run(self.service.admin.ping())

    def get(self, table_id: str) -> tuple[Table, GameState | None, int]:
        return self.run(self.service.tables.get(table_id))

    def lobby(self, code: str) -> Table:
        return self.run(self.service.lobbies.lobby(code))

    def where(self, user: int) -> Table | None:
        return self.run(self.service.tables.where(user))

    def list_tables(
        self,
        *,
        status: str | None = None,
        variant: str | None = None,
        chat: int | None = None,
        user: int | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[TableSummary]:
        return self.run(
            self.service.admin.list_tables(
                status=status, variant=variant, chat=chat, user=user, limit=limit, offset=offset
            )
        )

    def table_page(
        self,
        *,
        cursor: str = "",
        limit: int = 50,
        status: str | None = None,
        variant: str | None = None,
        chat: int | None = None,
        user: int | None = None,
        started: bool = False,
    ) -> tuple[list[TableSummary], str]:
        page = self.service.admin.table_page(
            cursor=cursor,
            limit=limit,
            status=status,
            variant=variant,
            chat=chat,
            user=user,
            started=started,
        )
        return self.run(page)

    def table_info(self, table_id: str) -> TableInfo:
        return self.run(self.service.admin.table_info(table_id))

    def replay_record(self, table_id: str, game: int) -> dict[str, Any]:
        return self.run(self.service.replays.record(table_id, game))

    def event_page(
        self, table_id: str, after_version: int = 0, count: int = 100
    ) -> list[LiveEvent]:
        return self.run(self.service.admin.event_page(table_id, after_version, count))

    def player(self, user: int) -> PlayerInfo:
        return self.run(self.service.admin.player(user))

    def global_stats(self) -> GlobalStats:
        return self.run(self.service.admin.global_stats())

    def audit_page(self, *, before: str | None = None, count: int = 50) -> AuditPage:
        return self.run(self.service.audit_log.audit_page(before=before, count=count))

    # ------------------------------------------------------------------ writes
    def audit(self, entry: Mapping[str, str | int]) -> str:
        return self.run(self.service.audit_log.audit(entry))

    def admin_reset(
        self, table_id: str, *, to: str = "lobby", by: str = "admin", expected: int | None = None
    ) -> WriteResult:
        return self.run(self.service.admin.admin_reset(table_id, to=to, by=by, expected=expected))

    def admin_cancel(
        self, table_id: str, *, by: str = "admin", expected: int | None = None
    ) -> WriteResult:
        return self.run(self.service.admin.admin_cancel(table_id, by=by, expected=expected))

    def admin_delete(
        self, table_id: str, *, by: str = "admin", expected: int | None = None
    ) -> WriteResult:
        return self.run(self.service.admin.admin_delete(table_id, by=by, expected=expected))

    def admin_hand_to_ai(
        self,
        table_id: str,
        seat: int,
        *,
        kind: str = "",
        by: str = "admin",
        expected: int | None = None,
    ) -> WriteResult:
        return self.run(
            self.service.admin.admin_hand_to_ai(table_id, seat, kind=kind, by=by, expected=expected)
        )

    # ------------------------------------------- lobby set-up (tests, scripts)
    def create_lobby(
        self,
        creator: int,
        name: str,
        *,
        chat: int | None = None,
        variant: str = "chuvash",
        options: Mapping[str, Any] | None = None,
        max_seats: int | None = None,
        timer: int = 60,
        private: bool = False,
    ) -> WriteResult:
        return self.run(
            self.service.lobbies.create_lobby(
                creator,
                name,
                chat=chat,
                variant=variant,
                options=options,
                max_seats=max_seats,
                timer=timer,
                private=private,
            )
        )

    def join(self, table_id: str, user: int, name: str) -> WriteResult:
        return self.run(self.service.lobbies.join(table_id, user, name))

    def add_ai(
        self, table_id: str, user: int, kind: str | None = None, name: str = ""
    ) -> WriteResult:
        return self.run(self.service.lobbies.add_ai(table_id, user, kind, name))

    def start(self, table_id: str, user: int) -> WriteResult:
        return self.run(self.service.games.start(table_id, user))
