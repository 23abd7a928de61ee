"""The flood limiter when Redis is unreachable: replies still go out.

:class:`FallbackFloodLimiter` wraps the shared Redis limiter
(:class:`telegram_bot.delivery.flood.limiter.FloodLimiter`): every call goes to
it, and when one fails (:class:`tables.ServiceUnavailable`) the tokens come
from in-process windows (:class:`LocalWindows`) -- this process's share of
each limit, the fleet's size as last read from Redis (#40: every process falls
back at once, and three on the whole windows spent three budgets) -- so an
apology ("the game is unavailable for a moment") is not held up by the very
outage it reports -- for ``fallback_for`` seconds before it asks Redis again (a
stopped Redis would otherwise make every message wait for the socket timeout).
On one Redis server every chat falls back at once; on a Redis Cluster a chat
falls back alone, when a call of its own failed (its keys' master died): the
chats whose keys the other masters serve go on in Redis (#40).
The local windows count in the limiter's own :class:`Journal`: they start with
what this process sent just before the outage, and once Redis answers again
the journal is charged to the shared windows (:meth:`FloodLimiter.charge`,
#28) before anything else is asked of them: what the fallback let through
meanwhile, and what a restarted Redis lost, counts again there, so the next
seconds do not overspend.
While it falls back nothing is known of what a message shows fleet-wide: a
table's render (an edit with a table version) waits, as behind another call's
edit (:data:`BUSY`), until the shared state answers again (asked every
:data:`PROBE_EVERY` s meanwhile) and judges it -- sent
then, it could show an older version than another process showed, or repeat
what the message shows (#40: 2 edits went backwards and 27 were "not modified"
through a cluster failover) -- unless it renders the table's version now and
is claimed in the table's own slot (``claims``,
:meth:`tables.tables.Tables.claim_render`): nothing newer can have been shown,
and only the claiming process sends it, so the first move after a master's
death goes out at once where the chat's keys lived on that master.  Once the
chat's slot answers again, the version sent meanwhile becomes the floor of
its digest, and a render held through the fallback is refused when a newer
one was claimed meanwhile.  Any other edit is sent (Telegram answers "not
modified" to a no-op one), and the messages touched meanwhile have their Redis
digest forgotten before their next edit -- a digest from before the outage
would drop an edit back to that content as a no-op -- and no edit lease is
taken (the process's own per-message lock orders its edits, as with one
process).  Each switch to the fallback is logged once.
"""

from __future__ import annotations

import enum
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol, TypeVar

from engine.clock import Clock
from tables import ServiceUnavailable
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.digest import parse_version, shown_after
from telegram_bot.delivery.flood.journal import Journal
from telegram_bot.delivery.flood.limiter import (
    BUSY,
    STALE,
    EditTicket,
    FloodLimiter,
    Headroom,
    OverallEntries,
    Stamp,
    To,
    Verdict,
    Window,
)
from telegram_bot.state.budgets import Budget

T = TypeVar("T")

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

_CHAT_TAG = re.compile(r"\{c:(-?\d+)\}")


def chat_of(stamp: Stamp) -> int | None:
    """The chat whose windows ``stamp`` counts in (``None``: the overall only)."""
    for key, _seconds in stamp.windows:
        if found := _CHAT_TAG.search(key):
            return int(found.group(1))
    return None


def share(window: Window, processes: int) -> Window:
    """One process's share of ``window`` among ``processes`` (at least one
    message: a fleet larger than a window still answers, one at a time)."""
    limit = max(1, window.limit // processes)
    return Window(limit, window.seconds, reserve=min(window.reserve, limit - 1))


class LocalWindows:
    """In-process sliding windows over a :class:`Journal`, the same arithmetic as
    the Redis scripts of :mod:`telegram_bot.delivery.flood.limiter`: all-or-nothing takes."""

    def __init__(self, journal: Journal, clock: Clock) -> None:
        self.journal = journal
        self.clock = clock

    def take(self, buckets: list[tuple[str, Window]], cost: float) -> Verdict:
        now, need = float(self.clock()), int(cost)
        wait, short = 0.0, -1
        for i, (key, window) in enumerate(buckets):
            w = self.journal.wait(key, window.limit, window.seconds, now, need)
            if w > wait:
                wait, short = w, i
        if wait > 0:
            return Verdict(wait, short == 0)
        name = self.journal.name()
        for key, window in buckets:
            self.journal.record(key, window.seconds, now, name, need)
        chats = tuple((key, float(window.seconds)) for key, window in buckets[1:])
        if not chats:
            return Verdict(0.0, False, None)
        key, window = buckets[0]  # the overall window's entries move on the answer too
        names = tuple(f"{name}:{j}" for j in range(1, need + 1))
        overall = OverallEntries(key, float(window.seconds), names, now)
        return Verdict(0.0, False, Stamp(chats, name, need, overall=overall))

    def stamp(self, stamp: Stamp) -> None:
        """Telegram answered: the call's entries count from now (:class:`Stamp`)."""
        now = float(self.clock())
        for key, seconds in stamp.windows:
            self.journal.restamp(key, seconds, stamp.name, stamp.cost, now)
        if stamp.overall is not None:  # cheap here: always (#37)
            o = stamp.overall
            self.journal.restamp_names(o.key, o.seconds, o.names, now)

    def refund(self, buckets: list[tuple[str, Window]], cost: float, held: float = 0.0) -> None:
        now = float(self.clock())
        paid = now - held + 1e-6
        for key, window in buckets:
            if paid > now - window.seconds:
                self.journal.refund(key, paid, int(cost))

    def headroom(self, buckets: list[tuple[str, Window]]) -> Headroom:
        now = float(self.clock())
        first, rest = 0.0, 0.0
        for i, (key, window) in enumerate(buckets):
            w = self.journal.wait(key, window.limit, window.seconds, now, 1 + window.reserve)
            if i == 0:
                first = w
            else:
                rest = max(rest, w)
        return Headroom(first, rest)


class FallbackFloodLimiter:
    """``FallbackFloodLimiter(FloodLimiter(svc.kv, config))``: the limiter
    ``redis``, falling back to :class:`LocalWindows` while Redis is unreachable
    (see the module docstring).  A :data:`Limiter`, the same calls as the Redis one;
    the Redis limiter's own extras (``acquire``, ``wait``, ``shown``, its keys and
    round trips) are on ``redis``."""

    def __init__(
        self,
        redis: FloodLimiter,
        *,
        fallback_for: float = FALLBACK_FOR,
        fleet: Callable[[], int] | None = None,
        per_chat: bool | None = None,
        claims: RenderClaims | None = None,
    ) -> None:
        self.redis = redis
        # a table's render while its chat falls back: sent when claimed (#40)
        self.claims = claims
        self._held: set[Address] = set()  # messages whose render was held
        # the bot processes alive, as last read from the shared state (#40): each
        # takes its share of every window while it cannot read the shared ones
        self.fleet = fleet
        self.config = redis.config
        self.clock = redis.clock
        self.local = LocalWindows(redis.journal, redis.clock)
        self.fallback_for = fallback_for
        # on a Redis Cluster a chat falls back alone: its keys' master failed,
        # and the chats on the other masters go on in Redis (#40: one dead master
        # held every table's render for the fallback's seconds)
        self.per_chat = redis.kv.cluster if per_chat is None else per_chat
        self.fallbacks = 0  # calls answered by the local windows
        self.held_edits = 0  # looks of a table's render held while falling back (#40)
        self.charged = 0  # entries of the journal added to Redis after an outage
        self._down: dict[Scope, float] = {}  # scope -> until when it falls back
        self._charge_due: set[Scope] = set()  # failed: charge the journal before use
        self._probed: dict[Scope, float] = {}  # scope -> when Redis was last asked
        # messages sent or edited meanwhile -> the newest table version sent to it
        # then ('' none): kept in its digest once Redis answers again (#40)
        self._touched: dict[Address, str] = {}
        self.claimed_renders = 0  # a table's render sent while falling back (#40)

    def _scope(self, chat_id: int | None) -> Scope:
        return chat_id if self.per_chat else EVERY

    @property
    def falling_back(self) -> bool:
        """True while the limiter does not ask Redis for some chat (it failed a
        moment ago)."""
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
        self._charge_due.add(scope)

    def _probe(self, chat_id: int | None) -> bool:
        """True at most once every :data:`PROBE_EVERY` s of a scope that falls back."""
        scope, now = self._scope(chat_id), float(self.clock())
        if now < self._probed.get(scope, float("-inf")) + PROBE_EVERY:
            return False
        self._probed[scope] = now
        return True

    async def _redis_back(self, chat_id: int | None) -> None:
        """Before Redis is used again for ``chat_id`` after a failure: the
        journal -- of that chat and the overall window, on a cluster -- counts
        in the shared windows again (#28).  Raises ServiceUnavailable while it
        is down."""
        scope = self._scope(chat_id)
        if scope not in self._charge_due:
            return
        tag = None if scope is EVERY else f"{{c:{scope}}}"
        overall = self.redis.keys.rate_all()
        added = await self.redis.charge(
            None if tag is None else (lambda key: key == overall or tag in key)
        )
        self.charged += added
        self._charge_due.discard(scope)
        self._down.pop(scope, None)
        if not self._charge_due:
            log.warning("flood limiter: Redis is back, %d entries of this process charged", added)

    def _buckets(self, to: To) -> list[tuple[str, Window]]:
        """The windows of a message ``to`` a chat, this process's share of each
        (#40): every process of the fleet falls back at once when the shared
        windows cannot be read, and N processes on the whole windows spent N
        budgets (9 x 429 in a cluster failover).  The fleet's size is the last
        one read."""
        buckets = self.redis.buckets(to)
        n = max(1, self.fleet()) if self.fleet is not None else 1
        return buckets if n == 1 else [(key, share(w, n)) for key, w in buckets]

    def _local_take(self, to: To, cost: float) -> Verdict:
        self.fallbacks += 1
        return self.local.take(self._buckets(to), cost)

    async def _on_redis(
        self, chat_id: int | None, call: Callable[[], Awaitable[T]], *, back: bool = True
    ) -> T | Down:
        """``call()`` on Redis unless the limiter falls back for ``chat_id`` --
        then, or when Redis fails now (from now on it falls back), :data:`DOWN`.
        ``back``: the journal is charged first if Redis failed before."""
        if not self.down(chat_id):
            try:
                if back:
                    await self._redis_back(chat_id)
                return await call()
            except ServiceUnavailable as e:
                self._failed(e, chat_id)
        return DOWN

    async def take(self, to: To = None, *, cost: float = 1, tracked: bool = False) -> Verdict:
        got = await self._on_redis(
            _chat(to), lambda: self.redis.take(to, cost=cost, tracked=tracked)
        )
        return self._local_take(to, cost) if got is DOWN else got

    async def _forget_touched(self, to: Address) -> None:
        """Before Redis judges an edit of a message changed during the fallback."""
        version = self._touched.get(to)
        if version is not None:
            await self.redis.forget(to, version=version)
            self._touched.pop(to, None)

    async def admit_edit(self, edit: EditTicket) -> Verdict:
        key, chat = edit.to, edit.to.chat

        async def judged() -> Verdict:
            await self._forget_touched(key)
            if key in self._held and edit.version:
                # held through the fallback: another process may have sent a
                # newer render meanwhile, which the chat's digest does not know
                if await self._claimed_since(edit):
                    return Verdict(STALE)
                self._held.discard(key)
            return await self.redis.admit_edit(edit)

        # a table's render held while falling back asks Redis again every
        # PROBE_EVERY s: it goes out as soon as the shared state answers (a
        # promoted replica), not at the end of the fallback's seconds (#40)
        if self.down(chat) and edit.version and self._probe(chat):
            self._down.pop(self._scope(chat), None)  # asked again now
        got = await self._on_redis(chat, judged)
        if got is not DOWN:
            return got
        if edit.version:  # a table's render (#40)
            if not await self._claimed(edit):  # judged once the shared state answers
                self.held_edits += 1
                self._held.add(key)
                return Verdict(BUSY)
            self.claimed_renders += 1
            self._touch(key, edit.version)
        else:
            self._touch(key, "")
        if edit.prepaid:
            return Verdict(0.0)  # unknown: send it (no lease: the process's own order)
        return self._local_take(edit.to, 1)

    def _touch(self, key: Address, version: str) -> None:
        self._touched[key] = shown_after(version, self._touched.get(key, ""))

    async def _claimed(self, edit: EditTicket) -> bool:
        """May a table's render go out while its chat falls back?  When it renders
        the table's version now, claimed once in the table's own slot
        (``claim``, :meth:`tables.tables.Tables.claim_render`): nothing newer
        can have been shown to the message, and no other process sends the same
        (#40: the first press after a master's death waited for the promotion
        where the player's chat had its keys)."""
        parsed = parse_version(edit.version)
        if self.claims is None or parsed is None:
            return False
        table, version = parsed
        try:
            return await self.claims.claim_render(table, version, "{}:{}".format(*edit.key))
        except ServiceUnavailable:  # the table's slot is down too: held
            return False

    async def _claimed_since(self, edit: EditTicket) -> bool:
        """Was a newer version of the edit's table claimed for its message?"""
        parsed = parse_version(edit.version)
        if self.claims is None or parsed is None:
            return False
        table, version = parsed
        return await self.claims.render_claimed(table, "{}:{}".format(*edit.key)) > version

    async def refund(self, to: To = None, *, cost: float = 1, held: float = 0.0) -> None:
        got = await self._on_redis(_chat(to), lambda: self.redis.refund(to, cost=cost, held=held))
        if got is DOWN:
            self.local.refund(self._buckets(to), cost, held)

    async def headroom(self, to: To = None, gap: float = 0.0) -> Headroom:
        # (falling back: no edit is spaced across processes)
        got = await self._on_redis(_chat(to), lambda: self.redis.headroom(to, gap))
        return self.local.headroom(self._buckets(to)) if got is DOWN else got

    async def refused(
        self, to: Address | int, *, admitted: int | None = None, retry_after: float = 0.0
    ) -> Budget | None:
        """Learn from a 429 (:meth:`FloodLimiter.refused`); nothing while Redis is
        down (the hold after the 429 is what keeps the chat waiting)."""
        got = await self._on_redis(
            _chat(to),
            lambda: self.redis.refused(to, admitted=admitted, retry_after=retry_after),
            back=False,
        )
        return None if got is DOWN else got

    async def remember(
        self, to: Address, text_digest: str, markup_digest: str, version: str = ""
    ) -> None:
        await self._digest_written(to, self.redis.remember(to, text_digest, markup_digest, version))

    async def forget(self, to: Address, lease: str = "") -> None:
        await self._digest_written(to, self.redis.forget(to, lease))

    async def _digest_written(self, to: Address, call: Coroutine[Any, Any, None]) -> None:
        """A message's digest written in Redis, else the message is touched
        meanwhile (its digest forgotten before its next edit)."""
        if await self._on_redis(to.chat, lambda: call, back=False) is DOWN:
            call.close()
            self._touch(to, "")
        else:
            self._touched.pop(to, None)

    async def release_edit(self, to: Address, lease: str, stamp: Stamp | None = None) -> bool:
        got = await self._on_redis(
            to.chat, lambda: self.redis.release_edit(to, lease, stamp), back=False
        )  # (down: the lease lapses by itself)
        if got is not DOWN:
            return got
        if stamp is not None:
            self.local.stamp(stamp)
        return True

    async def stamp(self, stamp: Stamp) -> None:
        """The call's entries count from now (:meth:`FloodLimiter.stamp`); while
        Redis is down, in the journal alone (it is charged to Redis later)."""
        if (
            await self._on_redis(chat_of(stamp), lambda: self.redis.stamp(stamp), back=False)
            is DOWN
        ):
            self.local.stamp(stamp)

    async def last_digest(self, to: Address) -> str | None:
        got = await self._on_redis(to.chat, lambda: self.redis.last_digest(to), back=False)
        return None if got is DOWN else got


class Down(enum.Enum):
    DOWN = "down"


DOWN = Down.DOWN
"""What :meth:`FallbackFloodLimiter._on_redis` answers when Redis is not asked."""


def _chat(to: To) -> int | None:
    return to.chat if isinstance(to, Address) else to


Limiter = FloodLimiter | FallbackFloodLimiter
"""What the delivery layer asks of a flood limiter
(:class:`telegram_bot.delivery.flood.gate.FloodGate`,
:class:`telegram_bot.delivery.shown.ShownStore`): the Redis one, or the
fallback around it that keeps replies going while Redis is down -- the same
calls, one protocol (``redis``: the limiter whose windows are in Redis, which
the hold after a 429 writes itself)."""
