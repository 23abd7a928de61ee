"""The world's change feed: a version, the recent events, and ways to wait.

Everything here is synchronous and runs on one event loop; waiting (long polls,
test helpers, a page streaming changes) goes through ``asyncio.Event`` objects
that are replaced on each change, so any code may change the world without
holding a lock.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable
from typing import Any, TypeVar

from sandbox.fake_api.models import FeedEvent

T = TypeVar("T")


class ChangeFeed:
    """Every change as a :class:`FeedEvent` (``seq`` = ``version``): kept for
    ``events_since``, pushed to subscribers, and waking the waiters."""

    def __init__(self, event_history: int = 10_000) -> None:
        self.version = 0
        self.events: deque[FeedEvent] = deque(maxlen=event_history)
        self._subscribers: set[asyncio.Queue[FeedEvent]] = set()
        self._changed = asyncio.Event()
        self._chat_changed: dict[int, asyncio.Event] = {}

    def touch(self, kind: str, **fields: Any) -> FeedEvent:
        """Record one change and wake everyone waiting for changes."""
        self.version += 1
        event = FeedEvent(seq=self.version, kind=kind, **fields)
        self.events.append(event)
        for queue in self._subscribers:
            queue.put_nowait(event)
        self._changed.set()
        self._changed = asyncio.Event()
        chat_id = fields.get("chat_id")
        if chat_id is not None and (waiting := self._chat_changed.pop(chat_id, None)):
            waiting.set()
        return event

    def events_since(self, seq: int) -> list[FeedEvent]:
        return [event for event in self.events if event.seq > seq]

    def subscribe(self) -> asyncio.Queue[FeedEvent]:
        """A queue that receives every later event; pass it to ``unsubscribe`` when done."""
        queue: asyncio.Queue[FeedEvent] = asyncio.Queue()
        self._subscribers.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[FeedEvent]) -> None:
        self._subscribers.discard(queue)

    async def wait_changed(self, timeout: float) -> bool:
        """Wait for the next change; False on timeout."""
        changed = self._changed
        try:
            await asyncio.wait_for(changed.wait(), timeout)
        except TimeoutError:
            return False
        return True

    async def wait_for(
        self, predicate: Callable[[], T | None], timeout: float = 10.0, what: str = "condition"
    ) -> T:
        """Return ``predicate()`` as soon as it is truthy, re-checking after each change.

        The timeout is a safety net against a hung test, not a timed assertion.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            changed = self._changed
            result = predicate()
            if result:
                return result
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), remaining)

    async def wait_chat(
        self, chat_id: int, predicate: Callable[[], T | None], timeout: float = 10.0
    ) -> T | None:
        """Like :meth:`wait_for` but re-checked only after changes in one chat (cheap
        with thousands of waiters: a load generator); None on timeout."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            result = predicate()
            if result:
                return result
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            changed = self._chat_changed.setdefault(chat_id, asyncio.Event())
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(changed.wait(), remaining)
