"""Views held back by the flood limiter (#24 item 6): when a player's hand in the
group (an ephemeral message with a table version) waits for the group's flood
budget longer than ``held_after`` seconds, :class:`HeldWatch` puts a
:class:`HeldBack` on the delivery's events, once a wait (#39), so the publisher
can tell him (a hand in his private chat updates at once).

Only the limiter's share of a wait counts, never the coalescing gaps an edit
keeps on purpose (:meth:`telegram_bot.delivery.slots.Slot.gap_due`): it lasts
while the edit waits for tokens, for the reserve or out a 429, until that
content (or newer) went out or the edit finished anyway.  One task per
message while a watched edit waits."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

from engine.clock import Clock
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.events import Events, HeldBack
from telegram_bot.delivery.flood.gate import Sleep
from telegram_bot.delivery.slots import Content, DeliveryConfig, Slot

log = logging.getLogger(__name__)


@dataclass
class _Wait:
    """One message's wait for edit ``seq`` (or newer) since ``since``."""

    seq: int
    since: float
    content: Content
    task: asyncio.Task[None] | None = None
    reported: bool = False  # told: not again while it lasts


class HeldWatch:
    """The waits of this process's ephemeral edits (see the module docstring),
    told on ``events`` after ``config.held_after`` seconds (None: nothing is
    watched); ``gone``: the message was deleted or found gone."""

    def __init__(
        self,
        events: Events,
        config: DeliveryConfig,
        *,
        clock: Clock,
        sleep: Sleep,
        gone: Callable[[Address], bool],
    ) -> None:
        self.config = config
        self.after = config.held_after or 0.0
        self.events: Events | None = events if config.held_after is not None else None
        self.clock = clock
        self.sleep = sleep
        self._gone = gone
        self._waits: dict[Address, _Wait] = {}
        self.fired = 0  # waits told (diagnostics, tests)

    @property
    def watching(self) -> int:
        """The waits watched now (one per message at most)."""
        return len(self._waits)

    def asked(self, key: Address, slot: Slot, content: Content) -> None:
        """Edit ``slot.seq`` was just asked: a wait begins, or ``content`` joins
        the one going on."""
        if self.events is None or not key.ephemeral or not content.version:
            return
        wait = self._waits.get(key)
        if wait is not None:
            wait.content = content
            return
        wait = self._waits[key] = _Wait(slot.seq, float(self.clock()), content)
        self._start(key, slot, wait)

    def gapped(self, key: Address, slot: Slot) -> None:
        """The pending edit is past its coalescing gaps: its wait counts from then."""
        wait = self._waits.get(key)
        if wait is not None and slot.pending is not None and slot.sent_seq < wait.seq:
            wait.since = max(wait.since, slot.gap_due(self.config))

    async def aclose(self) -> None:
        """Stop watching (nothing is watched from now on)."""
        self.events = None
        tasks = [w.task for w in self._waits.values() if w.task is not None]
        self._waits.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # ------------------------------------------------------------------ internals
    def _start(self, key: Address, slot: Slot, wait: _Wait) -> None:
        wait.task = asyncio.get_running_loop().create_task(self._watch(key, slot, wait))

    def _over(self, key: Address, slot: Slot, seq: int) -> bool:
        """Edit ``seq`` (or newer) went out or was not needed, or failed, or the
        message is gone."""
        if slot.done_seq >= seq or self._gone(key):
            return True
        return slot.sent_seq >= seq and not slot.lock.locked()

    async def _watch(self, key: Address, slot: Slot, wait: _Wait) -> None:
        try:
            while True:
                self.gapped(key, slot)
                if self._over(key, slot, wait.seq):
                    if slot.seq > wait.seq and not self._over(key, slot, slot.seq):
                        # newer content waits: a wait of its own, from when it was asked
                        p = slot.pending
                        wait.seq, wait.reported = slot.seq, False
                        wait.since = p.created if p is not None else float(self.clock())
                        continue
                    return
                left = wait.since + self.after - float(self.clock())
                if left <= 0 and not wait.reported:
                    self._report(key, wait)
                    wait.reported = True
                await self.sleep(left if left > 0 else self.after)  # until it is over
        finally:
            if self._waits.get(key) is wait:
                del self._waits[key]

    def _report(self, key: Address, wait: _Wait) -> None:
        if self.events is None:
            return
        self.fired += 1
        waited = float(self.clock()) - wait.since
        log.info("ephemeral %s held back %.1f s by the flood limit", key, waited)
        self.events.put(HeldBack(key, wait.content.version, waited))


__all__ = ["HeldBack", "HeldWatch"]
