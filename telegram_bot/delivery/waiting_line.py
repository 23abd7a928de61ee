"""The overall line: the calls of this process that wait for the OVERALL flood
bucket queue here, so only its head asks Redis again, not every waiter."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import time
from collections import deque
from collections.abc import Callable

from engine.clock import Clock


class Priority(enum.Enum):
    """Where a call queues for the overall bucket."""

    URGENT = "urgent"  # a player's own message (his press, a command)
    DEFERRED = "deferred"  # a coalesced update of someone who did not just act


class _Line:
    """What both lines share: the holder (``_busy``) and a queued call's wait,
    handed on should it be cancelled as its turn came."""

    _busy = False

    def release(self) -> None:
        raise NotImplementedError

    async def _wait(self, fut: asyncio.Future[None], forget: Callable[[], None]) -> None:
        try:
            await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():
                self.release()  # it was passed to us as we were cancelled
            else:
                with contextlib.suppress(ValueError):
                    forget()
            raise


class WaitingLine(_Line):
    """A FIFO line with two classes: urgent calls before deferred ones, unless
    the oldest deferred one has waited ``max_defer`` seconds (no starvation)."""

    def __init__(self, max_defer: float = 4.0, clock: Clock = time.monotonic) -> None:
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
            await self._wait(fut, lambda: queue.remove(fut))
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


# What a write to a group is worth (#24, item 2), the order its calls wait in
# for the group's own windows: the presser's own view, then the seat that must
# act now, then the other players' views, then the public table message.
OWN_VIEW, ACTOR, OTHERS, TABLE = 0, 1, 2, 3


class RankedLine(_Line):
    """The calls waiting for ONE chat's windows: the head alone asks Redis and
    sleeps out the wait; the others queue by rank, FIFO within one.  Each
    ``age`` seconds waited count one rank better: the table message is late,
    never starved."""

    def __init__(self, age: float = 8.0, clock: Clock = time.monotonic) -> None:
        self.age = age
        self.clock = clock
        self._waiting: list[tuple[int, float, int, asyncio.Future[None]]] = []
        self._seq = 0

    @property
    def idle(self) -> bool:
        return not self._busy and not self._waiting

    @property
    def waiting(self) -> int:
        """Calls queued behind the head."""
        return sum(1 for e in self._waiting if not e[3].done())

    def _score(self, entry: tuple[int, float, int, asyncio.Future[None]]) -> tuple[float, int]:
        rank, since, seq, _fut = entry
        return rank - (self.clock() - since) / self.age, seq

    def outranked(self, rank: int) -> bool:
        """A call better than ``rank`` (a head that waited so) waits behind the head."""
        return any(self._score(e)[0] < rank for e in self._waiting if not e[3].done())

    async def acquire(self, rank: int) -> None:
        if not self._busy:
            self._busy = True
            return
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._seq += 1
        entry = (rank, self.clock(), self._seq, fut)
        self._waiting.append(entry)
        await self._wait(fut, lambda: self._waiting.remove(entry))

    def release(self) -> None:
        while self._waiting:
            entry = min(self._waiting, key=self._score)
            self._waiting.remove(entry)
            if not entry[3].done():
                entry[3].set_result(None)  # ownership passes on: still busy
                return
        self._busy = False


class ChatLines:
    """One :class:`RankedLine` per chat that has calls waiting (dropped when idle)."""

    def __init__(self, age: float = 8.0, clock: Clock = time.monotonic) -> None:
        self.age, self.clock = age, clock
        self._lines: dict[int, RankedLine] = {}

    def line(self, chat_id: int) -> RankedLine:
        got = self._lines.get(chat_id)
        if got is None:
            got = self._lines[chat_id] = RankedLine(self.age, self.clock)
        return got

    def release(self, chat_id: int) -> None:
        got = self._lines.get(chat_id)
        if got is None:
            return
        got.release()
        if got.idle:
            del self._lines[chat_id]

    def __len__(self) -> int:
        return len(self._lines)

    @property
    def waiting(self) -> int:
        """Calls queued behind a head, in every chat."""
        return sum(line.waiting for line in self._lines.values())
