"""The background of one bot process (:class:`telegram_bot.app.BotApp`): four
loops, and the renders they spawn.

* the turn-timer loop (:meth:`tables.timers.Timers.run_timers`), which
  re-renders the tables its timeout moves changed;
* a subscriber of the service's notify channel, which re-renders tables changed
  by other processes (timers, operators, players leaving) -- at most once per
  version in this process;
* the sweep of pending renders (:mod:`telegram_bot.state.pending_renders`): a table whose
  render outlived the process that marked it is rendered again; with it, the
  Mini App's pages whose process died (:mod:`telegram_bot.state.pages`): their
  players' hands are drawn again;
* the flood limiter's catch-up (#40): the renders this process claimed while
  a chat's keys were down charged to its windows as soon as they answer;
* with ``MINIAPP_URL`` set, another: the live channels of the tables the Mini
  App's pages of this process show (:mod:`telegram_bot.miniapp`, #42).

No exception stops any loop: each failure is logged and the loop runs
again (the subscriber resubscribes) after an exponential backoff
(``LOOP_BACKOFF_BASE`` doubling up to ``LOOP_BACKOFF_CAP`` s, reset once it got
going).  The renders the loops (and the delivery's events,
:mod:`telegram_bot.app.dispatch`) start run in tasks of their own
(:class:`Renders`): a loop never waits for Telegram.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from tables import ServiceUnavailable, TableService, WriteResult, expected_fault
from tables.arena_runner import Woken
from tables.timers import TimerHooks
from telegram_bot.delivery.flood.fallback import PROBE_EVERY
from telegram_bot.miniapp import PageServer
from telegram_bot.publishing.arena_board import woke
from telegram_bot.publishing.publisher import Publisher
from telegram_bot.settings import Settings

log = logging.getLogger(__name__)


class Backoff:
    """Exponential backoff of a background loop: ``base``, doubled per failure up
    to ``cap`` seconds; :meth:`reset` after a success."""

    def __init__(self, base: float, cap: float) -> None:
        self.base = base
        self.cap = cap
        self.failures = 0

    def next_delay(self) -> float:
        delay = min(self.cap, self.base * 2**self.failures)
        self.failures = min(self.failures + 1, 32)
        return delay

    def reset(self) -> None:
        self.failures = 0


class Renders:
    """The renders spawned off the loops and the delivery's events, each in a
    task of its own; a failure is logged (the next write renders again)."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[None]] = set()

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("re-render failed: %r", task.exception())

    async def drain(self, within: float) -> None:
        """Let the renders in flight finish within ``within`` s; the late ones
        are cancelled and awaited: none touches Redis after it closed."""
        if self.tasks:
            _done, late = await asyncio.wait(set(self.tasks), timeout=within)
            if late:
                log.warning("stopping with %d renders unfinished", len(late))
                for task in late:
                    task.cancel()
                await asyncio.gather(*late, return_exceptions=True)


class Background:
    """The loops of the module docstring: :meth:`start` them with what they
    show tables through, :meth:`halt` them (the turn timers handed over)."""

    def __init__(self, svc: TableService, settings: Settings, renders: Renders) -> None:
        self.svc = svc
        self.settings = settings
        self.renders = renders
        self.stop = asyncio.Event()  # set: the loops end
        self._tasks: list[asyncio.Task[None]] = []
        self.loop_failures = 0  # background-loop failures so far (tests read it)
        self.subscriptions = 0  # times the notify subscriber (re)subscribed

    def start(
        self,
        publisher: Publisher,
        hooks: TimerHooks,
        page_server: PageServer | None,
        catch_up: Callable[[], Awaitable[int]] | None = None,
    ) -> None:
        """The loops started: renders through ``publisher``; ``hooks``: the
        adapter's part of a timer tick; ``page_server``: the Mini App's pages'
        live channels (None: off); ``catch_up``: the flood limiter's journal
        charged once the chats that fell back answer (#40, None: no loop)."""
        self.stop.clear()
        self._tasks = [
            asyncio.create_task(self._timers(publisher, hooks), name="timers"),
            asyncio.create_task(self._notifications(publisher), name="notify"),
            asyncio.create_task(self._repairs(publisher), name="repairs"),
        ]
        if catch_up is not None:
            self._tasks.append(asyncio.create_task(self._flood(catch_up), name="flood"))
        if page_server is not None:  # the pages' live channels (#42)
            self._tasks.append(asyncio.create_task(page_server.run(self.stop), name="pages"))

    async def halt(self) -> None:
        """Stop the loops and hand this process's turn timers over to the other
        processes (#28) -- if they ran."""
        running = bool(self._tasks)
        self.stop.set()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, 5)
        self._tasks = []
        if running:
            try:
                await self.svc.timers.hand_over()
            except ServiceUnavailable as e:  # they take the shards when the lease ends
                log.warning("timer shards not handed over: %s", e)

    # ------------------------------------------------------------------ the loops
    async def _timers(self, publisher: Publisher, hooks: TimerHooks) -> None:
        """The turn-timer loop; restarted after any failure."""

        async def on_timer(result: WriteResult) -> None:
            if any(e.kind == "start" for e in result.events):
                # #38: a rematch offer ended -- its game starts with those who agreed
                self.renders.spawn(publisher.start_game(result.table_id))
                return
            self.renders.spawn(publisher.refresh(result.table_id, min_version=result.version))
            self.renders.spawn(publisher.nudge(result))  # #25: a timeout, a takeover

        async def run(backoff: Backoff) -> None:
            await self.svc.timers.run_timers(
                self.stop, interval=self.settings.timer_interval, on_result=on_timer, hooks=hooks
            )

        await self._forever("timer loop", run)

    async def _notifications(self, publisher: Publisher) -> None:
        """Re-render tables written elsewhere (notify channel); resubscribed after
        any failure."""

        async def subscribe(backoff: Backoff) -> None:
            async with self.svc.notifications() as notes:
                self.subscriptions += 1
                backoff.reset()  # subscribed (again)
                while not self.stop.is_set():
                    note = await notes.get(timeout=0.5)
                    if note is not None:
                        self.renders.spawn(publisher.refresh(note.table, min_version=note.version))

        await self._forever("notify subscriber", subscribe)

    async def _repairs(self, publisher: Publisher) -> None:
        """Sweep the pending renders that outlived their process; restarted after
        any failure."""
        every = self.settings.render_grace / 4

        async def sweep(backoff: Backoff) -> None:
            while not self.stop.is_set():
                await publisher.repair_due()
                await publisher.pages_due()  # #42 point 6: a dead process's pages
                backoff.reset()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), every)
            await publisher.stop_repairs()  # its shards to the others at once (#39)

        await self._forever("render sweep", sweep)

    async def _flood(self, catch_up: Callable[[], Awaitable[int]]) -> None:
        """Every :data:`PROBE_EVERY` s, the renders this process claimed while a
        chat's keys were down reach that chat's windows once it answers (#40);
        no command while nothing is due."""

        async def run(backoff: Backoff) -> None:
            while not self.stop.is_set():
                await catch_up()
                backoff.reset()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), PROBE_EVERY)

        await self._forever("flood catch-up", run)

    async def _forever(self, name: str, run: Callable[[Backoff], Awaitable[None]]) -> None:
        """Run ``run`` until stopped; after ANY exception (Redis down, a bug in a
        render, ...) log it and run it again after an exponential backoff
        (capped; reset once a run got going: subscribed, or ran past the cap)."""
        s = self.settings
        backoff = Backoff(s.loop_backoff_base, s.loop_backoff_cap)
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                await run(backoff)
            except Exception as e:  # a background loop must survive anything
                if time.monotonic() - started > backoff.cap:
                    backoff.reset()  # it ran fine for a while: start over small
                delay = backoff.next_delay()
                self.loop_failures += 1
                # a fault we expect (Redis down, a failover): one line; else its traceback
                trace = not expected_fault(e)
                log.warning("%s failed; again in %.1f s: %s", name, delay, e, exc_info=trace)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), delay)


def on_arena(publisher: Publisher, renders: Renders) -> Callable[[Woken], Awaitable[None]]:
    """What a timer tick calls when an arena woke (#27): its new games and
    standings shown, off the timer loop."""

    async def woken(arena: Woken) -> None:
        renders.spawn(publisher.show(woke(arena)))

    return woken
