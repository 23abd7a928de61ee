"""The flood limiter when Redis is unreachable: replies still go out.

:class:`FallbackFloodLimiter` is the shared Redis limiter
(:class:`telegram_bot.delivery.flood.limiter.FloodLimiter`) whose calls, when
one fails (:class:`tables.ServiceUnavailable`), answer from its in-process
windows (:class:`telegram_bot.delivery.flood.journal.LocalWindows`) -- this
process's share of each limit, the fleet's size as last read from Redis (#40:
every process falls back at once, and three on the whole windows spent three
budgets) -- so an apology ("the game is unavailable for a moment") is not held
up by the very outage it reports -- for ``fallback_for`` seconds before it asks
Redis again (a stopped Redis would otherwise make every message wait for the
socket timeout).  On one Redis server every chat falls back at once; on a
Redis Cluster a chat falls back alone, when a call of its own failed (its
keys' master died): the chats whose keys the other masters serve go on in
Redis (#40).  The local windows count in the limiter's own :class:`Journal`:
they start with what this process sent just before the outage, and once Redis
answers again the journal is charged to the shared windows
(:meth:`FloodLimiter.charge`, #28) before anything else is asked of them: what
the fallback let through meanwhile, and what a restarted Redis lost, counts
again there, so the next seconds do not overspend.
While it falls back nothing is known of what a message shows fleet-wide: a
table's render (an edit with a table version) waits, as behind another call's
edit (:data:`BUSY`), until the shared state answers again (asked every
:data:`PROBE_EVERY` s meanwhile) and judges it -- sent
then, it could show an older version than another process showed, or repeat
what the message shows (#40: 2 edits went backwards and 27 were "not modified"
through a cluster failover) -- unless it renders the table's version now and
is claimed in the table's own slot (``claims``,
:meth:`tables.tables.Tables.claim_render`): nothing newer can have been shown,
and only the claiming process sends it (a redraw of that version showing
something else -- a player's selection -- is claimed again), so the first move after a master's
death goes out at once where the chat's keys lived on that master -- as soon
as the chat's windows have room: on a cluster they are read once a fault from
a replica of the chat's slot (:meth:`tables.KeyValueStore.replica_entries`:
every process's sends before the fault), and counted with this process's own
and the renders any process claimed since, fleet-wide in the table's slot,
against the whole window; without a replica that answers, within this
process's share once they turned over since the fault began.  Once the
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

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Protocol

from engine.clock import Clock
from tables import KeyValueStore, RenderClaim, RenderWindow, ServiceUnavailable
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.digest import parse_version, shown_after
from telegram_bot.delivery.flood.lease import Taken
from telegram_bot.delivery.flood.limiter import (
    BUSY,
    STALE,
    EditTicket,
    FloodConfig,
    FloodLimiter,
    Headroom,
    OverallEntries,
    Stamp,
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

CLAIMS_COUNTED_FOR = 65.0
"""Seconds after a fault this process saw during which a table's render judged
in Redis first counts the renders claimed meanwhile in its chat's windows
(the longest window, a group's minute, and a margin; #40)."""

Scope = int | str | None


class RenderClaims(Protocol):
    """A table's renders while their chat's shared state is down (#40), kept in
    the table's own slot (:class:`tables.tables.Tables`); ``message`` is
    ``"<chat>:<message id>"``."""

    async def claim_render(
        self,
        table_id: str,
        version: int,
        message: str,
        shows: tuple[str | None, str] | None = None,
        *,
        windows: Sequence[RenderWindow] = (),
        now: float = 0.0,
        name: str = "",
    ) -> RenderClaim:
        """May this process send that render, showing ``shows`` (its text and
        markup digests), now -- counted as ``name`` at ``now`` in the chat's
        ``windows`` with the renders claimed there?  (Claimed then.)"""
        ...

    async def render_claimed(self, table_id: str, message: str) -> int:
        """The newest version claimed for the message (-1: none)."""
        ...

    async def claimed_windows(
        self, table_id: str, windows: Sequence[str]
    ) -> dict[str, list[tuple[float, str]]]:
        """The claimed renders' entries in each of the chat windows ``windows``."""
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
        self._fault_at = float("-inf")  # when a call of this process last failed
        self._faults_seen = kv.faults  # the client's faults known here (_news_of_faults)
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
        self._fault_at = now
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

    async def catch_up(self) -> int:
        """This process's journal of each chat that fell back -- the renders it
        claimed there meanwhile -- charged to the chat's windows as soon as
        they answer again, not at its next call to that chat (#40: another
        process's send or render judged there before did not count them, a
        fourth message in the chat's 4 s); then the rest (the fleet-wide
        window's) and the fallback's end, as a call would.  Asked by the bot's
        background every :data:`PROBE_EVERY` s; no command for a chat with
        nothing journaled, nor on one server (no claim goes out while it is
        down).  Returns the chats whose journal was charged."""
        if not self.per_chat:
            return 0
        live, caught = self.journal.live(float(self.clock())), 0
        for scope in list(self._charge_due):
            if not isinstance(scope, int):  # the fleet-wide window's alone
                continue
            tag = f"{{c:{scope}}}"
            if not any(tag in key for key in live):
                continue

            def chats(key: str, tag: str = tag) -> bool:
                return tag in key

            try:
                self.charged += await self.charge(chats)
            except ServiceUnavailable:  # still down: asked again next time
                continue
            caught += 1
            with contextlib.suppress(ServiceUnavailable):  # the fleet-wide window's key down
                await self._redis_back(scope)
                self._over(scope)
        return caught

    def _over(self, scope: Scope) -> None:
        """Redis answered for ``scope`` again: the fault is over there."""
        self._fell.pop(scope, None)
        self._seen.pop(scope, None)
        self._replica_asked.pop(scope, None)

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
                self._over(self._scope(chat))
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
            await self._count_claims(edit)
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

    async def take_with_room(
        self, to: Address, gap: float = 0.0, edit: EditTicket | None = None
    ) -> tuple[Headroom, Verdict | None]:
        """#39's look that takes the tokens and judges ``edit`` in one script --
        while nothing of a fault is left to weigh first (#40: the message
        touched or its render held while falling back, renders claimed since
        a fault: :meth:`admit_edit`); else the look alone, and the edit is
        judged in its turn."""
        quiet = (
            not self.down(to.chat)
            and to not in self._touched
            and to not in self._held
            and float(self.clock()) >= self._fault_at + CLAIMS_COUNTED_FOR
        )
        if edit is not None and not quiet:
            return await self.headroom(to, gap), None
        return await super().take_with_room(to, gap, edit)

    async def _count_claims(self, edit: EditTicket) -> None:
        """Before a table's render is judged in Redis within
        :data:`CLAIMS_COUNTED_FOR` s of a fault: the renders of its table
        claimed meanwhile, by any process, count in its chat's windows there
        (#40: a chat's windows in a promoted replica know nothing of what went
        out while they could not be read; judged at once after the promotion,
        a render was a fourth message in 3 s -- a 429 -- while the process that
        claimed the others had not charged its journal yet).  Added to this
        process's journal and charged; entries there already stay as they are."""
        parsed = parse_version(edit.version)
        if self.claims is None or parsed is None:
            return
        self._news_of_faults()
        if float(self.clock()) >= self._fault_at + CLAIMS_COUNTED_FOR:
            return
        buckets = self.buckets(edit.to)[1:]
        try:
            claimed = await self.claims.claimed_windows(parsed[0], [k for k, _w in buckets])
        except ServiceUnavailable:  # the table's slot is down: nothing to count
            return
        added: set[str] = set()
        for k, window in buckets:
            known = {name for _at, name in self.journal.entries.get(k, ())}
            for at, name in claimed.get(k, ()):
                if name not in known:
                    self.journal.record(k, window.seconds, at, name.rpartition(":")[0], 1)
                    added.add(k)
        if added:
            self.charged += await self.charge(lambda key: key in added)

    def _news_of_faults(self) -> None:
        """A fault this process's Redis client met outside the limiter -- the
        chat's other keys (its dedupe, its marks), another table's -- counts
        as one of the limiter's for :meth:`_count_claims` from now on (#40: a
        process whose limiter made no call while a master was dead judged its
        next render in the chat's windows without the renders the others
        claimed meanwhile, and sent a fourth message in 4 s)."""
        seen = self.kv.faults
        if seen != self._faults_seen:
            self._faults_seen = seen
            self._fault_at = max(self._fault_at, float(self.clock()))

    async def _claimed_render(self, edit: EditTicket) -> Verdict:
        """A table's render while its chat falls back: judged once the shared
        state answers, unless claimed (:meth:`_claimed`) once its chat's windows
        have room for it: what every process sent there before the fault (read
        from a replica of the chat's slot) with the renders claimed since,
        fleet-wide (:meth:`_fleet_claim`); without a replica that answers, with
        this process's own sends since and within its share (:meth:`_room`).
        Held as behind another call's edit (:data:`BUSY`) meanwhile, or told
        how long the windows need."""
        key = edit.to
        known = await self._known_windows(edit.to)
        if known is not None and self.claims is not None:
            return await self._fleet_claim(edit, known)
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
        if not (await self._claimed(edit)).claimed:
            if took is not None:  # not sent: its entries go back
                self.local.refund(self._local_buckets(edit.to), 0.0)
            return self._held_back(key)
        self.claimed_renders += 1
        self._touch(key, edit.version)
        return Verdict(0.0) if took is None else took

    async def _fleet_claim(self, edit: EditTicket, known: list[RenderWindow]) -> Verdict:
        """A table's render claimed in the table's slot with its chat's windows
        counted there fleet-wide (:meth:`tables.tables.Tables.claim_render`):
        the entries a replica of the chat's slot holds and this process's own
        (``known``), and the renders any process claimed since the fault -- the
        whole window, not this process's share of it (#40: on its share alone
        a render waited until every entry from before the fault had left the
        chat's window, up to 4 s, and the player with it).  The fleet-wide
        window's entries come from the allowance, as in Redis (a lease, or
        the share while its key is down); the chat's are journaled under the
        claim's name (charged to Redis once it answers)."""
        key = edit.to
        taken = Taken(0.0)
        if not edit.prepaid:
            try:
                taken = await self._overall()
            except ServiceUnavailable:  # its key is down, and no share is known here
                return self._held_back(key)
            if taken.wait > 0:
                self._held.add(key)
                return Verdict(taken.wait, True)
        name = self.journal.name()
        claim = await self._claimed(edit, known, f"{name}:1")
        if not claim.claimed:
            self.lease.give_back(taken)
            if claim.wait > 0 and not edit.prepaid:
                self._held.add(key)
                return Verdict(min(claim.wait, PROBE_EVERY))  # asked again then
            return self._held_back(key)
        self.claimed_renders += 1
        self._touch(key, edit.version)
        if edit.prepaid:
            return Verdict(0.0)
        self.fallbacks += 1
        now, chats = float(self.clock()), [(w.key, float(w.seconds)) for w in known]
        for k, seconds in chats:
            self.journal.record(k, seconds, now, name, 1)
        overall = None
        if taken.entries:  # moved too if answered late (#37)
            lease = self.lease
            overall = OverallEntries(lease.bucket, lease.seconds, taken.entries, taken.at)
        return Verdict(0.0, False, Stamp(tuple(chats), name, overall=overall))

    async def _known_windows(self, to: Address) -> list[RenderWindow] | None:
        """The chat's windows of a message ``to`` it (whole, not a share) with
        the entries known of each: a replica's of the chat's slot -- every
        process's sends before the fault -- and this process's journal; None:
        no replica answers."""
        buckets = self.buckets(to)[1:]
        seen = await self._replica_windows(to.chat, [k for k, _w in buckets])
        if seen is None:
            return None
        known = []
        for k, window in buckets:
            entries = {name: at for at, name in seen.get(k, ())}
            entries.update((name, at) for at, name in self.journal.entries.get(k, ()))
            pairs = [(at, name) for name, at in entries.items()]
            known.append(RenderWindow(k, window.limit, window.seconds, pairs))
        return known

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

    async def _claimed(
        self, edit: EditTicket, windows: Sequence[RenderWindow] = (), name: str = ""
    ) -> RenderClaim:
        """May a table's render go out while its chat falls back?  When it renders
        the table's version now, claimed once in the table's own slot
        (``claim``, :meth:`tables.tables.Tables.claim_render`): nothing newer
        can have been shown to the message, and no other process sends the same
        (#40: the first press after a master's death waited for the promotion
        where the player's chat had its keys) -- nor the same content again: a
        redraw of that version showing something else (a selection) is claimed
        as well, whichever process claimed the version's render.  With the
        chat's ``windows``, once they have room for it (else the wait)."""
        parsed = parse_version(edit.version)
        if self.claims is None or parsed is None:
            return RenderClaim(False)
        table, version = parsed
        message, shows = "{}:{}".format(*edit.to.key), (edit.text_digest, edit.markup_digest)
        try:
            return await self.claims.claim_render(
                table, version, message, shows, windows=windows, now=float(self.clock()), name=name
            )
        except ServiceUnavailable:  # the table's slot is down too: held
            return RenderClaim(False)

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
