"""The flood limiter when Redis is unreachable: replies still go out.

:class:`FallbackFloodLimiter` answers a call that fails
(:class:`tables.ServiceUnavailable`) from its in-process windows
(:class:`telegram_bot.delivery.flood.journal.LocalWindows`), this process's
share of each limit (#40: the whole fleet falls back at once) -- so an
apology for the outage is not held up by it -- for ``fallback_for`` seconds
before it asks Redis again.  On one server every chat falls back; on a
Cluster a chat alone, when its keys' master failed (#40).  The local windows
count in the limiter's :class:`Journal`, charged to the shared windows once
Redis answers (#28), so the next seconds do not overspend.

Meanwhile nothing is known of what a message shows fleet-wide.  A table's
render (an edit with a version) waits as behind another call's edit
(:data:`BUSY`), asking Redis every :data:`PROBE_EVERY` s -- sent blind it
could go backwards or repeat (#40: 2 edits went backwards, 27 "not modified"
in a failover) -- unless it renders the table's version now and is claimed in
the table's own slot (``claims``, :meth:`tables.tables.Tables.claim_render`)
once the chat's windows have room: read once a fault from a replica of the
chat's slot (:meth:`tables.KeyValueStore.replica_entries`), else once they
turned over.  Any other edit is sent without a lease (the process's own lock
orders its edits), and a message touched meanwhile has its digest forgotten
before its next edit in Redis.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from engine.clock import Clock
from tables import KeyValueStore, ServiceUnavailable
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.digest import parse_version, shown_after
from telegram_bot.delivery.flood.limiter import (
    BUSY,
    STALE,
    EditTicket,
    FloodConfig,
    FloodLimiter,
    T,
    Verdict,
    Window,
)
from telegram_bot.state.budgets import Budgets

log = logging.getLogger(__name__)

FALLBACK_FOR = 5.0
"""Seconds the limiter stays on its in-process windows after Redis failed."""

PROBE_EVERY = 0.5
"""Seconds between two asks of Redis for a table's render held while falling back."""

Scope = int | str | None


class RenderClaims(Protocol):
    """A table's renders while their chat's shared state is down (#40), kept in
    the table's own slot (:class:`tables.tables.Tables`); ``message`` is
    ``"<chat>:<message id>"``."""

    async def claim_render(self, table_id: str, version: int, message: str) -> bool:
        """May this process send that render now?  (Claimed then.)"""
        ...

    async def render_claimed(self, table_id: str, message: str) -> int:
        """The newest version claimed for the message (-1: none)."""
        ...


EVERY = "*"
"""The one scope of a single Redis server: when it fails, every chat falls back."""


class FallbackFloodLimiter(FloodLimiter):
    """A :class:`FloodLimiter` whose calls answer from its in-process windows
    while Redis is unreachable (see the module docstring): one protocol, each
    call's answer without Redis given to :meth:`FloodLimiter._guard`."""

    def __init__(
        self,
        kv: KeyValueStore,
        config: FloodConfig | None = None,
        *,
        clock: Clock = time.time,
        budgets: Budgets | None = None,
        fallback_for: float = FALLBACK_FOR,
        fleet: Callable[[], int] | None = None,
        per_chat: bool | None = None,
        claims: RenderClaims | None = None,
    ) -> None:
        super().__init__(kv, config, clock=clock, budgets=budgets, fleet=fleet)
        # a table's render while its chat falls back: sent when claimed (#40)
        self.claims = claims
        self._held: set[Address] = set()  # messages whose render was held
        self.fallback_for = fallback_for
        # on a Redis Cluster a chat falls back alone: its keys' master failed,
        # and the chats on the other masters go on in Redis (#40: one dead master
        # held every table's render for the fallback's seconds)
        self.per_chat = kv.cluster if per_chat is None else per_chat
        self.held_edits = 0  # looks of a table's render held while falling back (#40)
        self.charged = 0  # entries of the journal added to Redis after an outage
        self._down: dict[Scope, float] = {}  # scope -> until when it falls back
        self._charge_due: set[Scope] = set()  # failed: charge the journal before use
        self._fell: dict[Scope, float] = {}  # scope -> when it began to fall back
        self._probed: dict[Scope, float] = {}  # scope -> when Redis was last asked
        # messages sent or edited meanwhile -> the newest table version sent to it
        # then ('' none): kept in its digest once Redis answers again (#40)
        self._touched: dict[Address, str] = {}
        self.claimed_renders = 0  # a table's render sent while falling back (#40)
        # a chat's window keys -> their entries in a replica of its slot, read
        # once a fault: every process's sends before it (#40)
        self._seen: dict[Scope, dict[str, list[tuple[float, str]]]] = {}
        self._replica_asked: dict[Scope, float] = {}  # scope -> when a replica was last asked
        self.replica_reads = 0  # chats' windows read from a replica while falling back

    def _scope(self, chat_id: int | None) -> Scope:
        return chat_id if self.per_chat else EVERY

    @property
    def falling_back(self) -> bool:
        """True while the limiter does not ask Redis for some chat."""
        now = float(self.clock())
        return any(now < until for until in self._down.values())

    def down(self, chat_id: int | None) -> bool:
        """True while the limiter does not ask Redis for ``chat_id``."""
        return float(self.clock()) < self._down.get(self._scope(chat_id), float("-inf"))

    def _failed(self, error: ServiceUnavailable, chat_id: int | None) -> None:
        if not self.falling_back:
            log.warning("flood limiter: Redis unavailable, in-process windows for now: %s", error)
        scope, now = self._scope(chat_id), float(self.clock())
        self._down[scope] = now + self.fallback_for
        self._probed[scope] = now
        self._fell.setdefault(scope, now)  # a new fault, not a failed probe
        self._charge_due.add(scope)

    def _probe(self, chat_id: int | None) -> bool:
        """True at most once every :data:`PROBE_EVERY` s of a scope that falls back."""
        scope, now = self._scope(chat_id), float(self.clock())
        if now < self._probed.get(scope, float("-inf")) + PROBE_EVERY:
            return False
        self._probed[scope] = now
        return True

    async def _redis_back(self, chat_id: int | None) -> None:
        """Before Redis is used again for ``chat_id`` after a failure, the
        journal (of that chat and the overall window, on a Cluster) is charged
        there (#28)."""
        scope = self._scope(chat_id)
        if scope not in self._charge_due:
            return
        tag = None if scope is EVERY else f"{{c:{scope}}}"
        overall = self.keys.rate_all()
        added = await self.charge(
            None if tag is None else (lambda key: key == overall or tag in key)
        )
        self.charged += added
        self._charge_due.discard(scope)
        self._down.pop(scope, None)
        if not self._charge_due:
            log.warning("flood limiter: Redis is back, %d entries of this process charged", added)

    async def _guard(
        self,
        chat: int | None,
        call: Callable[[], Awaitable[T]],
        down: Callable[[], T],
        *,
        back: bool = True,
    ) -> T:
        """``call()`` on Redis unless ``chat`` falls back -- then, or when Redis
        fails now, ``down()``."""
        if not self.down(chat):
            try:
                if back:
                    await self._redis_back(chat)
                got = await call()
                scope = self._scope(chat)
                self._fell.pop(scope, None)  # the fault is over
                self._seen.pop(scope, None)
                self._replica_asked.pop(scope, None)
                return got
            except ServiceUnavailable as e:
                self._failed(e, chat)
        return down()

    async def _written(self, to: Address, call: Coroutine[Any, Any, None]) -> None:
        """A message's digest written in Redis, else the message is touched."""

        async def write() -> bool:
            await call
            return True

        if await self._guard(to.chat, write, lambda: False, back=False):
            self._touched.pop(to, None)
        else:
            call.close()
            self._touch(to, "")

    async def _forget_touched(self, to: Address) -> None:
        """Before Redis judges an edit of a message changed during the fallback."""
        version = self._touched.get(to)
        if version is not None:
            await self._forget_digest(to, version=version)
            self._touched.pop(to, None)

    async def admit_edit(self, edit: EditTicket, *, again: bool = False) -> Verdict:
        key, chat = edit.to, edit.to.chat

        async def judged() -> Verdict | None:
            await self._forget_touched(key)
            if key in self._held and edit.version:
                # held through the fallback: another process may have sent a
                # newer render meanwhile, which the chat's digest does not know
                if await self._claimed_since(edit):
                    return Verdict(STALE)
                self._held.discard(key)
            return await FloodLimiter.admit_edit(self, edit, again=again)

        # a table's render held while falling back asks Redis again every
        # PROBE_EVERY s: it goes out as soon as the shared state answers (a
        # promoted replica), not at the end of the fallback's seconds (#40)
        if self.down(chat) and edit.version and self._probe(chat):
            self._down.pop(self._scope(chat), None)  # asked again now
        got = await self._guard(chat, judged, lambda: None)
        if got is not None:
            return got
        if edit.version:  # a table's render (#40)
            return await self._claimed_render(edit)
        self._touch(key, "")
        if edit.prepaid:
            return Verdict(0.0)  # unknown: send it (no lease: the process's own order)
        return self._local_take(edit.to)

    async def _claimed_render(self, edit: EditTicket) -> Verdict:
        """A table's render while its chat falls back: claimed (:meth:`_claimed`)
        once the chat's windows have room for it (:meth:`_room`), else held as
        behind another call's edit (:data:`BUSY`) or told how long to wait."""
        key = edit.to
        wait = await self._room(edit.to)
        if wait is None or (wait > 0 and edit.prepaid):
            # the windows are unknown, or the prepaid tokens were taken without
            # what the replica holds: they go back, fresh ones are asked for
            return self._held_back(key)
        if wait > 0:
            # asked again within PROBE_EVERY s: Redis (a promoted replica) judges
            # it then if it answers, else the windows again
            self._held.add(key)
            return Verdict(min(wait, PROBE_EVERY))
        took = None if edit.prepaid else self._local_take(edit.to)
        if took is not None and took.wait != 0:  # the fleet-wide window, or a call meanwhile
            self._held.add(key)
            return took
        if not await self._claimed(edit):
            if took is not None:  # not sent: its entries go back
                self.local.refund(self._local_buckets(edit.to), 0.0)
            return self._held_back(key)
        self.claimed_renders += 1
        self._touch(key, edit.version)
        return Verdict(0.0) if took is None else took

    def _held_back(self, key: Address) -> Verdict:
        self.held_edits += 1
        self._held.add(key)
        return Verdict(BUSY)

    async def _room(self, to: Address) -> float | None:
        """Seconds until a message ``to`` a chat that falls back fits in this
        process's share of its windows (None: unknown, hold it), counting the
        entries of a replica of the chat's slot -- every process's sends before
        the fault -- and the journal's; without a replica, :meth:`_settled`."""
        buckets = self._local_buckets(to)[1:]
        seen = await self._replica_windows(to.chat, [k for k, _w in buckets])
        if seen is None:
            return 0.0 if self._settled(to) else None
        now, wait = float(self.clock()), 0.0
        for k, window in buckets:
            entries = {name: at for at, name in seen.get(k, ())}
            entries.update((name, at) for at, name in self.journal.entries.get(k, ()))
            wait = max(wait, _window_wait(sorted(entries.values()), window, now))
        return wait

    async def _replica_windows(
        self, chat: int, keys: list[str]
    ) -> dict[str, list[tuple[float, str]]] | None:
        """The entries of a chat's window ``keys`` in a replica of its slot, read
        once a fault (asked at most every :data:`PROBE_EVERY` s); None: no
        replica answered."""
        scope = self._scope(chat)
        if not self.per_chat or scope not in self._fell:
            return None  # one server: no replica; or not falling back
        seen = self._seen.setdefault(scope, {})
        missing = [k for k in keys if k not in seen]
        if missing:
            now, asked = float(self.clock()), self._replica_asked.get(scope)
            if asked is not None and now < asked + PROBE_EVERY:
                return None
            self._replica_asked[scope] = now
            try:
                seen.update(await self.kv.replica_entries(missing))
            except ServiceUnavailable as e:
                if asked is None:  # once a fault
                    log.warning(
                        "flood limiter: no replica of chat %s's windows answers, "
                        "its renders wait for its windows to turn over (%s)",
                        chat,
                        e,
                    )
                return None
            self.replica_reads += 1
        return seen

    def _settled(self, to: Address) -> bool:
        """Has every window of a message ``to`` a chat turned over since the
        fault began?  Until then they may hold the other processes' sends (#40:
        a claimed render sent at once drew a 429 in the fleet benchmark).
        Other calls take the share at once: an answer must not wait a minute."""
        scope, now = self._scope(to.chat), float(self.clock())
        since = self._fell.get(scope, now)
        return now >= since + max(window.seconds for _key, window in self._local_buckets(to))

    def _touch(self, key: Address, version: str) -> None:
        self._touched[key] = shown_after(version, self._touched.get(key, ""))

    async def _claimed(self, edit: EditTicket) -> bool:
        """May a table's render go out while its chat falls back?  When it
        renders the table's version now, claimed once in the table's own slot:
        nothing newer can have been shown, and no other process sends the same
        (#40: the first press after a master's death waited for the promotion)."""
        parsed = parse_version(edit.version)
        if self.claims is None or parsed is None:
            return False
        table, version = parsed
        try:
            return await self.claims.claim_render(table, version, "{}:{}".format(*edit.to.key))
        except ServiceUnavailable:  # the table's slot is down too: held
            return False

    async def _claimed_since(self, edit: EditTicket) -> bool:
        """Was a newer version of the edit's table claimed for its message?"""
        parsed = parse_version(edit.version)
        if self.claims is None or parsed is None:
            return False
        table, version = parsed
        return await self.claims.render_claimed(table, "{}:{}".format(*edit.to.key)) > version


def _window_wait(entries: list[float], window: Window, now: float) -> float:
    """Seconds until one more entry fits under ``window``'s limit, its entries
    scored ``entries`` (sorted); 0: now -- the arithmetic of
    :meth:`telegram_bot.delivery.flood.journal.Journal.wait`."""
    live = [at for at in entries if at > now - window.seconds]
    over = len(live) + 1 - window.limit
    if over <= 0:
        return 0.0
    return max(live[over - 1] + window.seconds - now, 1e-6)
