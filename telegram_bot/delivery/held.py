"""Views held back by the flood limiter (#24 item 6): when a player's hand in the
group (an ephemeral message) waits for the group's flood budget longer than
``after`` seconds, :class:`HeldWatch` tells its ``hook`` once for that wait --
so the publisher can say so to him (his hand in a private chat updates at once).

Only the flood limiter's share of a wait counts, never the coalescing gaps an
edit keeps on purpose: a wait begins when the content was asked -- for an edit
that waits as pending, when its gaps are over (its urgency's delay, the
message's gap since its last edit here and by any process,
:meth:`telegram_bot.delivery.slots.Slot.gap_due`) -- and lasts while the edit
waits for tokens, is held back for the urgent edits' reserve, or sleeps out a
429.  It ends once that content (or newer) went out, or the edit finished
anyway (failed, the message gone).

Watched: edits with a ``receiver`` (an ephemeral message: only a group's count
against its budget) and the table ``version`` they render (the hook's reader
finds the table by it).  One task per message while a watched edit waits, none
when ``hook`` is None."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from engine.clock import Clock
from tables import survived
from telegram_bot.delivery.flood.gate import Sleep
from telegram_bot.delivery.slots import Content, Slot

log = logging.getLogger(__name__)

Key = tuple[int, int]


@dataclass(frozen=True)
class HeldBack:
    """An ephemeral message's edit waited ``waited`` seconds for the flood limiter."""

    chat_id: int  # the group
    message_id: int  # the message's key: minus its ephemeral_message_id
    receiver: int  # the user who sees it
    version: str  # the table version its newest content renders (``<table>#<n>``)
    waited: float


OnHeld = Callable[[HeldBack], Awaitable[Any]]
"""``on_held(held)``: an ephemeral view was held back (awaited in a task of its own)."""


@dataclass
class _Wait:
    """One message's wait: for edit ``seq`` (or newer) of it, since ``since``."""

    seq: int
    since: float
    content: Content
    task: asyncio.Task[None] | None = None
    reported: bool = False  # told to the hook: not again while it lasts


class HeldWatch:
    """The waits of this process's ephemeral edits (see the module docstring).
    ``gaps(slot)``: when a pending edit's coalescing gaps are over."""

    def __init__(
        self,
        *,
        after: float,
        clock: Clock,
        sleep: Sleep,
        gaps: Callable[[Slot], float],
        gone: Callable[[Key], bool],
    ) -> None:
        self.after = after
        self.hook: OnHeld | None = None
        self.clock = clock
        self.sleep = sleep
        self._gaps = gaps
        self._gone = gone
        self._waits: dict[Key, _Wait] = {}
        self._hooks: set[asyncio.Task[Any]] = set()
        self.fired = 0  # waits reported to the hook (diagnostics, tests)

    @property
    def watching(self) -> int:
        """The waits watched now (one per message at most)."""
        return len(self._waits)

    def asked(self, key: Key, slot: Slot, content: Content) -> None:
        """Edit ``slot.seq`` of the message was just asked (``content``): a wait
        begins unless one goes on already (its newer content joins it)."""
        if self.hook is None or content.receiver is None or not content.version:
            return
        wait = self._waits.get(key)
        if wait is not None:
            wait.content = content
            return
        wait = self._waits[key] = _Wait(slot.seq, float(self.clock()), content)
        self._start(key, slot, wait)

    def gapped(self, key: Key, slot: Slot) -> None:
        """The message's pending edit is past (or learnt) its coalescing gaps:
        its wait counts from then on, not from when it was asked."""
        wait = self._waits.get(key)
        if wait is not None and slot.pending is not None and slot.sent_seq < wait.seq:
            wait.since = max(wait.since, self._gaps(slot))

    async def aclose(self) -> None:
        """Stop watching (nothing is watched from now on); the hooks under way
        finish."""
        self.hook = None
        tasks = [w.task for w in self._waits.values() if w.task is not None]
        self._waits.clear()
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._hooks:
            await asyncio.gather(*list(self._hooks), return_exceptions=True)

    # ------------------------------------------------------------------ internals
    def _start(self, key: Key, slot: Slot, wait: _Wait) -> None:
        wait.task = asyncio.get_running_loop().create_task(self._watch(key, slot, wait))

    def _over(self, key: Key, slot: Slot, seq: int) -> bool:
        """Edit ``seq`` of the message went out (or newer content did, or it was
        found not needed), or it finished anyway: failed, the message gone."""
        if slot.done_seq >= seq or self._gone(key):
            return True
        return slot.sent_seq >= seq and not slot.lock.locked()

    async def _watch(self, key: Key, slot: Slot, wait: _Wait) -> None:
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

    def _report(self, key: Key, wait: _Wait) -> None:
        hook, content = self.hook, wait.content
        if hook is None or content.receiver is None:
            return
        self.fired += 1
        waited = float(self.clock()) - wait.since
        held = HeldBack(key[0], key[1], content.receiver, content.version, waited)
        log.info(
            "ephemeral %s of %s held back %.1f s by the flood limit", key, held.receiver, waited
        )
        task = asyncio.get_running_loop().create_task(self._call(hook, held))
        self._hooks.add(task)
        task.add_done_callback(self._hooks.discard)

    @staticmethod
    async def _call(hook: OnHeld, held: HeldBack) -> None:
        with survived(log, "on_held hook failed for %s", held):
            await hook(held)
