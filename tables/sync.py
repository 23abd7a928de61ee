"""Blocking access to the table service for the Flask admin API (under
gunicorn): :class:`SyncTableService` runs a :class:`TableService` on a private
event-loop thread, and :meth:`SyncTableService.call` runs any of its operations
there and waits: ``sync.call(sync.service.admin.table_info, table_id)``.  The
operation is passed as the part's own method, so mypy checks its arguments and
its result as for a direct call, and there is no list of forwarding methods to
keep in step with the parts."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

from engine.clock import Clock
from tables.model import LiveConfig
from tables.service import TableService

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")


class SyncTableService:
    """Blocking calls into a :class:`TableService` (``service``) on its own loop
    thread (one per instance; create it once per gunicorn worker).

    >>> sync = SyncTableService("redis://127.0.0.1:6379/0")                # doctest: +SKIP
    >>> sync.call(sync.service.admin.list_tables, status="playing")        # doctest: +SKIP
    >>> sync.close()                                                        # doctest: +SKIP
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

    def call(self, fn: Callable[P, Awaitable[R]], /, *args: P.args, **kwargs: P.kwargs) -> R:
        """``await fn(*args, **kwargs)`` on the service's loop, and its result:
        ``fn`` is an operation of :attr:`service`'s parts
        (``sync.call(sync.service.lobbies.join, table_id, user, name)``).  ``fn``
        itself is called on the loop thread, inside a coroutine: it may return
        any awaitable (``run_coroutine_threadsafe`` takes only a coroutine), and
        one it makes, e.g. a future, belongs to the service's loop."""

        async def on_loop() -> R:
            return await fn(*args, **kwargs)

        return self.run(on_loop())

    def close(self) -> None:
        """Close the Redis client and stop the loop thread."""
        if self._loop.is_closed():
            return
        self.run(self.service.aclose())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
