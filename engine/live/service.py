"""The facade: :class:`TableService` (async, for the bot) and
:class:`SyncTableService` (for the Flask admin API under gunicorn)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from engine.live.admin import AdminOps
from engine.live.core import Clock
from engine.live.model import LiveConfig

T = TypeVar("T")


class TableService(AdminOps):
    """Lobbies, games, timers, stats and admin operations over one Redis.

    ``TableService(redis_client, config, clock=time.time)`` or
    ``TableService.from_url(url, config)`` (owns its client; ``await svc.aclose()``).
    Every write goes through one compare-and-set; see :mod:`engine.live`.
    """


class SyncTableService:
    """Blocking calls into a :class:`TableService` running on a private event-loop
    thread (one per instance; create it once per gunicorn worker).

    >>> svc = SyncTableService("redis://127.0.0.1:6379/0")        # doctest: +SKIP
    >>> svc.list_tables(status="playing")                          # doctest: +SKIP
    >>> svc.close()                                                # doctest: +SKIP

    Any coroutine method of :class:`TableService` is available under the same
    name, with the same arguments, returning its result.
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
                svc: TableService = TableService.from_url(url, config)
            else:
                svc = TableService.from_url(url, config, clock=clock)
            return svc

        self.service = self.run(make())

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run one coroutine on the service's loop and wait for its result."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self.service, name)
        if not asyncio.iscoroutinefunction(method):
            return method  # type: ignore[no-any-return]

        def call(*args: Any, **kwargs: Any) -> Any:
            return self.run(method(*args, **kwargs))

        return call

    def close(self) -> None:
        """Close the Redis client and stop the loop thread."""
        if self._loop.is_closed():
            return
        self.run(self.service.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
