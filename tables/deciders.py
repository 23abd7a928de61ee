"""Who computes an AI seat's move (issue 15): inline, or in a process pool.

The AI chain (:func:`tables.games.run_ai`) asks a :class:`Decider` for each
AI move.  :class:`InlineDecider` computes it on the caller's thread (tests, the
admin API, the benchmarks of the service).  :class:`PoolDecider` sends the slow
kinds (:data:`engine.ai.SLOW_KINDS`: the search player, ~100 ms a decision) to a
:class:`~concurrent.futures.ProcessPoolExecutor`, so the bot's event loop keeps
answering other players meanwhile; the cheap kinds stay inline.

A decision is a pure function of (kind, seed, state, seat): the worker gets a
pickled copy of the state and its answer is the one the inline decider would
give.  While a worker thinks the table may change (another player's move, a
timer): the write that follows is a compare-and-set at the version the state
was loaded at, so a decision made on an old state is never saved -- the write is
re-planned (``Tables.retry``) or refused as :class:`~tables.model.StaleVersion`.

A worker that dies (killed, out of memory) breaks the pool
(:class:`~concurrent.futures.process.BrokenProcessPool`): that decision falls
back to :data:`FALLBACK_KIND` inline, and the pool is built anew for the next.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Protocol

from engine.actions import Action
from engine.ai import SLOW_KINDS, make_player
from engine.state import GameState

FALLBACK_KIND = "heuristic"
"""What plays a slow kind's decision when the pool failed."""
WORKER_NICENESS = 10
"""The workers run at a lower CPU priority than the bot: on a busy machine the
event loop (presses, renders) goes first, the AI's thinking waits."""


def _lower_priority() -> None:  # pragma: no cover - runs in the worker process
    os.nice(WORKER_NICENESS)


def choose(kind: str, seed: str, state: GameState, seat: int) -> Action | None:
    """The move of an AI of ``kind`` seeded ``seed`` for ``seat`` (pure)."""
    return make_player(kind, seed).choose(state, seat)


def choose_in_worker(
    kind: str, seed: str, state: GameState, seat: int
) -> tuple[Action | None, int]:
    """:func:`choose` in a pool's worker, with the worker's process id."""
    return choose(kind, seed, state, seat), os.getpid()


class Decider(Protocol):
    """Computes AI moves for the table service."""

    async def decide(self, kind: str, seed: str, state: GameState, seat: int) -> Action | None:
        """What :func:`choose` answers (``state`` is not changed)."""
        ...

    def close(self) -> None:
        """Free what it holds (worker processes)."""
        ...


class InlineDecider:
    """Every decision on the caller's thread."""

    async def decide(self, kind: str, seed: str, state: GameState, seat: int) -> Action | None:
        return choose(kind, seed, state, seat)

    def close(self) -> None:
        return None


class PoolDecider:
    """Slow kinds in a process pool of ``workers`` processes (started on first
    use, ``spawn``: no copy of the bot's sockets and threads); the rest inline."""

    def __init__(self, workers: int, slow: frozenset[str] = SLOW_KINDS) -> None:
        if workers < 1:
            raise ValueError("a pool needs at least one worker")
        self.workers = workers
        self.slow = slow
        self._pool: ProcessPoolExecutor | None = None
        self.last_pid: int | None = None
        """The worker process that made the last pooled decision (tests read it)."""
        self.closed = False  # after close(): every decision inline
        self.pooled = 0  # decisions made in the pool
        self.fallbacks = 0  # decisions made by FALLBACK_KIND after a pool failure

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_lower_priority,
            )
        return self._pool

    async def decide(self, kind: str, seed: str, state: GameState, seat: int) -> Action | None:
        if kind not in self.slow or self.closed:
            return choose(kind, seed, state, seat)
        pool = self._executor()
        loop = asyncio.get_running_loop()
        try:
            action, pid = await loop.run_in_executor(
                pool, choose_in_worker, kind, seed, state, seat
            )
        except BrokenProcessPool:
            self._discard(pool)
            self.fallbacks += 1
            return choose(FALLBACK_KIND, seed, state, seat)
        self.last_pid = pid
        self.pooled += 1
        return action

    def _discard(self, pool: ProcessPoolExecutor) -> None:
        """Drop a broken pool (once, though several decisions saw it break)."""
        if self._pool is pool:
            self._pool = None
            pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        self.closed = True
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
