"""Long polling of one bot process (:class:`telegram_bot.app.BotApp`), only
while it holds the fleet's poll lease (#28, :mod:`telegram_bot.state.poll_lease`):
Telegram allows one ``getUpdates`` consumer, so the others wait quietly and one
takes over when the holder stops or dies."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from aiogram import Bot, Dispatcher

from tables import KeyValueStore, ServiceUnavailable
from telegram_bot.state.poll_lease import PollLease

log = logging.getLogger(__name__)

HALT_WITHIN = 5.0
"""Seconds aiogram's polling has to stop by itself before it is cancelled."""


class Polling:
    """aiogram's polling of ``dp`` for ``bot`` under the lease kept in ``kv``
    (``ttl`` s); ``stopping``: set when the process stops (its background
    loops' event)."""

    def __init__(
        self, dp: Dispatcher, bot: Bot, kv: KeyValueStore, ttl: float, stopping: asyncio.Event
    ) -> None:
        self.dp = dp
        self.bot = bot
        self.kv = kv
        self.ttl = ttl
        self.stopping = stopping
        self.polls = False  # this process holds the poll lease (#28)
        self._stopped = asyncio.Event()  # set: run stops

    async def run(self, **kwargs: Any) -> None:
        """Poll until :meth:`stop` while the lease is held; wait for it
        otherwise.  ``kwargs``: aiogram's ``start_polling``'s."""
        lease = PollLease(self.kv, self.ttl)
        try:
            while not self._stopped.is_set():
                stopped_meanwhile()
                if await self._turn(lease) and not self._stopped.is_set():
                    await self._while_held(lease, kwargs)
                else:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._stopped.wait(), lease.every)
        finally:
            with contextlib.suppress(Exception):
                await lease.release()

    async def stop(self) -> None:
        self._stopped.set()
        await self._ask_stop()

    async def _ask_stop(self) -> bool:
        """aiogram's own stop of its polling, waited for :data:`HALT_WITHIN` s
        at most (its shutdown could hold a stop for good); nothing when its
        polling has not started ("Polling is not started").  False: it did
        not stop in time (the caller cancels it)."""
        try:
            async with asyncio.timeout(HALT_WITHIN):
                await self.dp.stop_polling()
        except RuntimeError:
            pass
        except TimeoutError:
            log.warning("polling did not stop within %.1f s: cancelled", HALT_WITHIN)
            return False
        return True

    async def _turn(self, lease: PollLease) -> bool:
        """Whether this process may poll now (logged once per change)."""
        try:
            held = await lease.take()
        except ServiceUnavailable as e:
            stopped_meanwhile()
            log.warning("poll lease: Redis unavailable: %s", e)
            return False
        if held != self.polls:
            log.info("poll lease %s: %s", "taken" if held else "held elsewhere", lease.owner)
        self.polls = held
        return held

    async def _while_held(self, lease: PollLease, kwargs: dict[str, Any]) -> None:
        """aiogram's polling, stopped when the lease is lost (renewed meanwhile;
        while Redis does not answer it goes on: nobody else can take it then) or by
        :meth:`stop` -- also one that came before aiogram's polling started,
        when aiogram's own ``stop_polling`` says "Polling is not started"."""
        polling = asyncio.create_task(
            self.dp.start_polling(
                self.bot,
                # never aiogram's signal handlers: they replace the process's own
                # (``telegram_bot.__main__``: SIGTERM stops it gracefully, #28)
                # and ignore a signal once polling stopped -- a process that lost
                # the poll lease to another never stopped on SIGTERM
                handle_signals=kwargs.get("handle_signals", False),
                close_bot_session=False,
                **{k: v for k, v in kwargs.items() if k != "handle_signals"},
            )
        )
        stopping = asyncio.create_task(self._stopped.wait())
        try:
            while not polling.done():
                stopped_meanwhile()
                await asyncio.wait(
                    {polling, stopping}, timeout=lease.every, return_when=asyncio.FIRST_COMPLETED
                )
                if polling.done():
                    break
                if stopping.done():  # again until aiogram's polling has started and stops
                    if not await self._ask_stop():
                        return  # held: cancelled on the way out
                    continue
                try:
                    held = await lease.take()
                except ServiceUnavailable:  # it goes on: nobody else can take it now
                    stopped_meanwhile()
                    held = True
                if not held:
                    log.warning("poll lease lost to another process: polling stops")
                    self.polls = False
                    if not await self._ask_stop():
                        return  # held: cancelled on the way out
            await polling
            if not self.polls or self.stopping.is_set():
                return
            self._stopped.set()  # stopped by aiogram itself (a signal): stop here too
        finally:
            stopping.cancel()
            if not polling.done():
                await self._halt(polling)

    async def _halt(self, polling: asyncio.Task[None]) -> None:
        """aiogram's polling stopped on its way out of a stop or a cancel:
        aiogram's own stop first -- a cancel of ``start_polling`` leaves its
        pollers running (they went on fetching updates, and took them from
        Telegram, while the process stopped) -- then, if it has not ended
        within :data:`HALT_WITHIN` s, a cancel; a cancel of this task meanwhile
        goes on (never swallowed)."""
        try:
            await self._ask_stop()  # not started yet: cancelled
        finally:  # a second cancel of this task too
            if not polling.done():
                polling.cancel()
        await asyncio.wait({polling})
        if not polling.cancelled() and polling.exception() is not None:
            log.warning("polling ended with %r on its way out", polling.exception())


def stopped_meanwhile() -> None:
    """Raise CancelledError if this task is being cancelled: a stop's cancel
    that reached a Redis call as it failed (its read timing out) came back
    as ServiceUnavailable, and a loop that goes on through Redis faults went
    on for good -- the polling loop kept a stopped bot running (CI); one
    that came as the lease's reply did was swallowed by the call, which
    returned the reply (a CI run under load waited 60 s).  Each turn of the
    polling loops looks here."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
