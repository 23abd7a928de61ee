"""The timers part: turn timers.  The authoritative deadline of a game is the ``d`` field of its
table hash, written by the same compare-and-set as the state.  The global sorted
set ``timers`` holds a *hint* per table (``ZADD LT``: a hint may be early, never
late).  A scheduler tick claims the due hints in one atomic script that pushes
them ``timer_lease`` into the future, so of several processes only one handles
each; it reloads the table and, if the deadline really passed, applies the
timeout moves through the usual CAS (a player who moved meanwhile wins, and the
timeout is dropped).  Then it releases its claim: the new deadline, or nothing.
A crashed claimer's lease simply runs out and another process takes over, so
timers survive restarts.

Timeout move (PRODUCT; the moves of RULES §0): the defender takes, the leader plays his lowest legal
lead, a thrower passes.  Every seat the game waited for at the deadline gets
one.  After ``timeouts_to_ai`` consecutive timeouts the AI takes the seat until
the player takes it back (:meth:`take_seat_back`); a move of his own resets the
count.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import replace

from engine.clock import Clock
from engine.live.games import Games, timeout_move
from engine.live.model import PLAYING, LiveConfig, LiveError, StaleVersion, WriteResult
from engine.live.tables import Loaded, Plan, Tables


class Timers:
    """The timers part: the scheduler's tick over the timer hints."""

    def __init__(self, tables: Tables, games: Games, config: LiveConfig, clock: Clock) -> None:
        self.tables = tables
        self.store = tables.store
        self.games = games
        self.config = config
        self.clock = clock

    def _timeout_plan(self, loaded: Loaded) -> Plan:
        t = loaded.table
        state = loaded.state
        assert state is not None
        plan = Plan(t, state, notify="timeout")
        waiting = [s for s in state.to_act() if not t.seats[s].ai_controlled]
        for s in waiting:
            if state.over or s not in state.to_act():
                continue
            action = timeout_move(state, s)
            plan.engine_events += state.apply(action)
            seat = t.seats[s]
            n = seat.timeouts + 1
            plan.events += [("timeout", s, str(n)), ("auto", s, action.text())]
            if n >= self.config.timeouts_to_ai:
                seat = replace(seat, ai=self.config.ai_kind, timeouts=n)
                plan.events.append(("takeover", s, "timeouts"))
            else:
                seat = replace(seat, timeouts=n)
            t = t.with_seat(s, seat)
        plan.table = t
        self.games.after_moves(plan)
        return plan

    async def tick(self, limit: int = 100) -> list[WriteResult]:
        """Handle every timer due now (at most ``limit``); return the writes made."""
        now = self.tables.now_ms()
        lease = int(self.config.timer_lease * 1000)
        claimed = await self.store.claim_timers(now, limit, lease)
        results = []
        for tid in claimed:
            result = await self._handle_timer(tid, now, now + lease)
            if result is not None:
                results.append(result)
        return results

    async def _handle_timer(self, tid: str, now: int, lease: int) -> WriteResult | None:
        try:
            loaded = await self.tables.load(tid)
        except LiveError:
            await self.store.release_timer(tid, lease, None)
            return None
        if loaded.table.status != PLAYING or loaded.deadline is None or loaded.state is None:
            await self.store.release_timer(tid, lease, None)
            return None
        if loaded.deadline > now:
            await self.store.release_timer(tid, lease, loaded.deadline)
            return None
        try:
            result = await self.tables.write(
                loaded, self._timeout_plan(loaded), before=loaded.state
            )
        except StaleVersion:  # a player moved meanwhile: look again at the next tick
            await self.store.release_timer(tid, lease, now)
            return None
        await self.store.release_timer(tid, lease, result.deadline)
        return result

    async def next_deadline(self) -> int | None:
        """The earliest timer hint (epoch ms), if any."""
        timers = self.tables.keys.timers
        first = await self.store.one(lambda p: p.zrange(timers, 0, 0, withscores=True))
        return int(first[0][1]) if first else None

    async def run_timers(
        self,
        stop: asyncio.Event,
        *,
        interval: float = 0.5,
        on_result: Callable[[WriteResult], Awaitable[None]] | None = None,
    ) -> None:
        """The scheduler loop: :meth:`tick` every ``interval`` seconds until ``stop``;
        about once a minute it also prunes the table index of expired tables."""
        pruned = 0.0
        while not stop.is_set():
            if self.clock() - pruned >= 60:
                pruned = self.clock()
                await self.tables.prune_index()
            for result in await self.tick():
                if on_result is not None:
                    await on_result(result)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval)
