"""The overall line: the calls of this process that wait for the OVERALL flood
bucket queue here, so only its head asks Redis again, not every waiter."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import time
from collections import deque

from engine.clock import Clock


class Priority(enum.Enum):
    """Where a call queues for the overall bucket."""

    URGENT = "urgent"  # a player's own message (his press, a command)
    DEFERRED = "deferred"  # a coalesced update of someone who did not just act


class WaitingLine:
    """A FIFO waiting line with two classes: urgent calls are served before
    deferred ones -- unless the oldest deferred one has waited ``max_defer``
    seconds (no starvation).  Whoever holds it is the only caller of this process
    asking Redis for an overall token again; ownership passes on release."""

    def __init__(self, max_defer: float = 4.0, clock: Clock = time.monotonic) -> None:
        self._busy = False
        self._urgent: deque[asyncio.Future[None]] = deque()
        self._deferred: deque[asyncio.Future[None]] = deque()
        self._since: dict[asyncio.Future[None], float] = {}
        self.max_defer = max_defer
        self.clock = clock

    async def acquire(self, priority: Priority) -> None:
        if not self._busy:
            self._busy = True
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        urgent = priority is Priority.URGENT
        queue = self._urgent if urgent else self._deferred
        queue.append(fut)
        if not urgent:
            self._since[fut] = self.clock()
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # it was passed to us as we were cancelled
            else:
                with contextlib.suppress(ValueError):
                    queue.remove(fut)
            raise
        finally:
            self._since.pop(fut, None)

    def release(self) -> None:
        order = (self._urgent, self._deferred)
        head = self._deferred[0] if self._deferred else None
        if head is not None and self.clock() - self._since.get(head, 0.0) >= self.max_defer:
            order = (self._deferred, self._urgent)
        for queue in order:
            while queue:
                fut = queue.popleft()
                if not fut.done():
                    fut.set_result(None)  # ownership passes on: still busy
                    return
        self._busy = False
