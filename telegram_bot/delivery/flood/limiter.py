"""Telegram's flood limits as sliding windows in Redis, shared by every bot process.

Telegram counts windows, not buckets (#28: a bucket's burst plus its refill
let 45 through in a second): each limit is a :class:`Window`, a sorted set of
entries scored by the time they were counted (the time from ``clock``, never
Redis ``TIME``: tests drive it).  A take is ONE script on the chat's own hash
slot (``rl:{c:<chat>}:...``, :class:`FloodKeys`: no hot key on a Cluster):
one entry in each of its windows, or -- any one full -- none and how long to
wait.  The fleet-wide window (``rl:{all}``) is leased in batches
(:class:`OverallLease`).  Each window keeps a ``reserve`` that deferrable
messages leave free (:meth:`FloodLimiter.headroom`).  Every entry counted is
kept in the :class:`Journal` too (the fallback's windows, charged to Redis
after an outage: :meth:`FloodLimiter.charge`, #28).

The same script judges an edit (:meth:`FloodLimiter.admit_edit`) against what
its message shows, ``<text>:<keyboard>:<version>``: an older table version is
refused (:data:`STALE`: content never goes backwards, whichever process
renders it), an edit that changes nothing takes no token (:data:`NOOP`); an
admitted one records its content and takes the message's edit lease, so
edits of a message land in version order (another call hears :data:`BUSY`).
Redis only through ``svc.kv``; every call goes through
:meth:`FloodLimiter._guard`, where
:class:`telegram_bot.delivery.flood.fallback.FallbackFloodLimiter` falls back.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from engine.clock import Clock
from tables import KeyValueStore
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.digest import check_digest, table_version
from telegram_bot.delivery.flood.full import REMEMBERED, KnownFull
from telegram_bot.delivery.flood.journal import Journal, LocalWindows
from telegram_bot.delivery.flood.lease import KEY_LIFE, OverallLease, Taken
from telegram_bot.delivery.flood.rates import (
    BUSY,
    NOOP,
    STALE,
    FloodConfig,
    Headroom,
    OverallEntries,
    Stamp,
    Verdict,
    Window,
)
from telegram_bot.delivery.flood.scripts import (
    ACQUIRE_LUA,
    CHARGE_LUA,
    FORGET_LUA,
    HEADROOM_LUA,
    HOLD_LUA,
    LEASE_LUA,
    MERGE_LUA,
    OVERALL_STAMP_LUA,
    REFUND_LUA,
    RELEASE_EDIT_LUA,
    STAMP_LUA,
)
from telegram_bot.state.budgets import EPHEMERAL, PUBLIC, Budget, Budgets
from telegram_bot.state.keys import FloodKeys

T = TypeVar("T")

To = Address | int | None
"""Where a message goes: an :class:`Address`, a chat id (a message every member
of the chat sees), or None (the overall window only)."""


def address(to: To) -> Address | None:
    return Address(to) if isinstance(to, int) else to


def chat_of(to: To) -> int | None:
    return to.chat if isinstance(to, Address) else to


@dataclass(frozen=True)
class EditTicket:
    """One edit of a message, as :meth:`FloodLimiter.admit_edit` judges it:
    ``text_digest`` None: a keyboard-only edit; ``version``: the table version
    it renders ('': never refused as older); ``owner``: the call that takes
    the edit lease ('': none); ``prepaid``: its token was taken before, only
    the digest is judged."""

    to: Address
    text_digest: str | None
    markup_digest: str
    version: str = ""
    owner: str = ""
    prepaid: bool = False
    tracked: bool = False  # the caller stamps Telegram's answer (take's ``tracked``)


log = logging.getLogger(__name__)

_CHAT_TAG = re.compile(r"\{c:(-?\d+)\}")


def stamp_chat(stamp: Stamp) -> int | None:
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


STAMP_COVERED = 0.5
"""Seconds after its take within which a call's entries move to its answer
without touching their keys' TTL: the take set it a second past the window."""


def _scaled(window: Window, limit: int) -> Window:
    """``window`` with a learned ``limit`` (#24): its reserve for urgent
    messages in proportion, at most ``limit - 1``."""
    if limit == window.limit:
        return window
    reserve = min(limit - 1, round(window.reserve * limit / window.limit))
    return Window(limit, window.seconds, reserve=max(0, reserve))


def _answer(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


class FloodLimiter:
    """Shared sliding windows for outgoing messages (see the module docstring);
    ``round_trips`` counts its Redis round trips."""

    def __init__(
        self,
        kv: KeyValueStore,
        config: FloodConfig | None = None,
        *,
        clock: Clock = time.time,
        budgets: Budgets | None = None,
        fleet: Callable[[], int] | None = None,
    ) -> None:
        """``fleet``: the bot processes alive -- on a Cluster, this process's
        share of the fleet-wide window while its master is down (#40)."""
        self.kv = kv
        self.config = config or FloodConfig()
        self.budgets = budgets  # learned per group (#24); None: the documented windows
        self._budget_cache: dict[int, tuple[float, Budget]] = {}
        self.keys = FloodKeys(kv)
        self.clock = clock
        self.round_trips = 0
        self.late_stamps = 0  # calls answered late: overall entries moved (#37)
        self._script = kv.script(ACQUIRE_LUA)
        self._headroom = kv.script(HEADROOM_LUA)
        self._refund = kv.script(REFUND_LUA)
        self._forget = kv.script(FORGET_LUA)
        self._release = kv.script(RELEASE_EDIT_LUA)
        self._stamp = kv.script(STAMP_LUA)
        self._stamp_late = kv.script(OVERALL_STAMP_LUA)
        self._charge = kv.script(CHARGE_LUA)
        self._merge = kv.script(MERGE_LUA)
        self.journal = Journal()
        self._digest_ttl_ms = math.ceil(self.config.digest_ttl * 1000)
        self._edit_ttl_ms = math.ceil(self.config.edit_ttl * 1000)
        self._lease_ms = math.ceil(self.config.edit_lease * 1000)
        c = self.config
        self.lease = OverallLease(
            kv.script(LEASE_LUA),
            self.keys.rate_all(),
            c.overall.limit,
            c.overall.seconds,
            c.overall.reserve,
            min(c.lease, c.overall.limit),
            c.lease_ttl,
            self.journal,
            clock,
            fleet=fleet if kv.cluster else None,
            recharge=self._charge_overall,
        )
        self._hold = kv.script(HOLD_LUA)
        # while Redis is unreachable (:mod:`telegram_bot.delivery.flood.fallback`):
        # windows in this process, its share of each among the ``fleet`` alive (#40)
        self.local = LocalWindows(self.journal, clock)
        self.fleet = fleet
        self.fallbacks = 0  # calls answered by the local windows
        self.full = KnownFull(clock)  # windows that refused a call a moment ago (#39)

    async def _guard(
        self,
        chat: int | None,
        call: Callable[[], Awaitable[T]],
        down: Callable[[], T],
        *,
        back: bool = True,
    ) -> T:
        """Every call of the protocol on ``chat``'s windows: ``call()`` in Redis,
        or ``down()`` without it in the fallback's override (``back``: the
        journal is charged to Redis first after an outage)."""
        return await call()

    async def _written(self, to: Address, call: Coroutine[Any, Any, None]) -> None:
        """A message's digest written (the fallback: or touched, while down)."""
        await call

    def _local_take(self, to: To) -> Verdict:
        self.fallbacks += 1
        return self.local.take(self._local_buckets(to))

    def _local_buckets(self, to: To) -> list[tuple[str, Window]]:
        """The windows of a message ``to`` a chat, this process's share of each
        (#40: the whole fleet falls back at once, and N processes on the whole
        windows spent N budgets -- 9 x 429 in a cluster failover)."""
        buckets = self.buckets(to)
        n = max(1, self.fleet()) if self.fleet is not None else 1
        return buckets if n == 1 else [(key, share(w, n)) for key, w in buckets]

    # ------------------------------------------------------------ buckets
    def buckets(self, to: To, budget: Budget | None = None) -> list[tuple[str, Window]]:
        """The windows one message ``to`` counts in; ``[0]`` is the overall one
        (leased, never in a chat's script).  A group's minute holds its learned
        public budget (#24; None: the documented 20).  An ephemeral write counts
        like any message to the group while ephemerals are counted (or nothing
        is known); else in the group's ephemeral minute and in its receiver's
        own window, as Telegram counts messages to one user."""
        c, k, to = self.config, self.keys, address(to)
        out = [(k.rate_all(), c.overall)]
        if to is None:
            return out
        chat = to.chat
        if chat > 0:
            out.append((k.rate_chat(chat), c.per_chat))
        elif to.receiver is None or budget is None or budget.counted:
            out.append((k.rate_chat(chat), c.per_chat))
            limit = c.per_group.limit if budget is None else budget.public
            out.append((k.rate_group(chat), _scaled(c.per_group, limit)))
        else:
            out.append((k.rate_ephemeral(chat), _scaled(c.per_group, budget.ephemeral)))
            out.append((k.rate_receiver(chat, to.receiver), c.per_chat))
        return out

    async def budget(self, chat_id: int | None) -> Budget | None:
        """A group's learned budget (None: a private chat, or no learning),
        read at most once in ``budget_refresh`` seconds."""
        if self.budgets is None or chat_id is None or chat_id >= 0:
            return None
        now = float(self.clock())
        hit = self._budget_cache.get(chat_id)
        if hit is not None and 0 <= now - hit[0] < self.config.budget_refresh:
            return hit[1]
        self.round_trips += 1
        got = await self.budgets.get(chat_id)
        if len(self._budget_cache) > 10_000:
            self._budget_cache.clear()
        self._budget_cache[chat_id] = (now, got)
        return got

    async def _minute(self, chat_id: int) -> tuple[int, int]:
        """A group's public and ephemeral writes counted in its last minute."""
        k, since = self.keys, float(self.clock()) - self.config.per_group.seconds
        public, ephemeral = k.rate_group(chat_id), k.rate_ephemeral(chat_id)

        def build(p: Any) -> None:
            p.zcount(public, since, "+inf")
            p.zcount(ephemeral, since, "+inf")

        self.round_trips += 1
        got = await self.kv.store.run(build)
        return int(got[0]), int(got[1])

    async def windows(self, to: To) -> list[tuple[str, Window]]:
        """:meth:`buckets` with the group's learned budget."""
        found = address(to)
        return self.buckets(found, await self.budget(found.chat if found else None))

    async def refused(
        self, to: Address | int, *, admitted: int | None = None, retry_after: float = 0.0
    ) -> Budget | None:
        """A 429 for a write ``to`` a group: the budget it counted in is cut,
        fleet-wide (:class:`telegram_bot.state.budgets.Budgets`), once per burst
        (#38): ``admitted`` is the :attr:`Verdict.generation` it was admitted
        under (None: a refusal within the last cut's ``retry_after`` is of its
        burst).  None: nothing to learn (a private chat)."""
        found = address(to)
        assert found is not None
        if self.budgets is None or found.chat >= 0:
            return None  # nothing to learn (and while Redis is down, nothing: the hold waits)
        learn = lambda: self._refused(found, admitted, retry_after)  # noqa: E731
        return await self._guard(found.chat, learn, lambda: None, back=False)

    async def _refused(
        self, found: Address, admitted: int | None, retry_after: float
    ) -> Budget | None:
        assert self.budgets is not None
        chat_id, ephemeral = found.chat, found.ephemeral
        before = await self.budget(chat_id)
        shared = False
        if before is not None and not before.counted:  # does one shared minute explain it?
            public, apart = await self._minute(chat_id)
            shared = apart > 0 if not ephemeral else public + apart >= before.public
        self.round_trips += 2
        after = await self.budgets.refused(
            chat_id,
            EPHEMERAL if ephemeral else PUBLIC,
            shared=shared,
            admitted=admitted,
            burst=retry_after,
        )
        self._budget_cache[chat_id] = (float(self.clock()), after)
        if after.repeat:
            log.info(
                "group %s: a 429 of a burst already learned from (public %d a minute)",
                chat_id,
                after.public,
            )
            return after
        if before is not None and not before.counted and after.counted:
            k = self.keys  # what Telegram counted in the minute, we count too
            self.round_trips += 1
            await self._merge(
                [k.rate_group(chat_id), k.rate_ephemeral(chat_id)], [self.config.per_group.ttl_ms]
            )
        log.warning(
            "group %s flood budget learned from a 429 on an %s write: public %d a minute, "
            "ephemerals %s (%s)",
            chat_id,
            "ephemeral" if ephemeral else "public",
            after.public,
            "counted with them" if after.counted else f"apart, {after.ephemeral} a minute",
            after.why,
        )
        return after

    async def hold(self, to: To, seconds: float) -> None:
        """A 429: no token before ``seconds`` are over, in every process, for
        the chat's windows the refused write counted in (never the overall
        one): Telegram counted messages our windows did not see."""
        buckets = (await self.windows(to))[1:]  # [0] is the overall bucket
        args: list[str | int | float] = [repr(float(self.clock())), repr(float(seconds))]
        for _, window in buckets:
            args += [window.limit, repr(float(window.seconds))]
        self.round_trips += 1
        await self._hold([key for key, _ in buckets], args)

    async def _overall(self) -> Taken:
        """An overall entry from the allowance (leasing a batch when it is
        short): its name, or the seconds to wait."""
        before = self.lease.leases
        taken = await self.lease.take()
        self.round_trips += self.lease.leases - before
        return taken

    async def _run(
        self,
        to: Address | None,
        edit: EditTicket | None = None,
        tracked: bool = False,
        again: bool = False,
    ) -> Verdict:
        """An overall entry from the allowance, then ONE script on the chat's
        slot (given back by name when the chat's windows refuse).  A new call
        (not ``again``) to windows that refused one a moment ago waits as long
        without asking them (#39)."""
        chat_id = to.chat if to is not None else None
        budget = await self.budget(chat_id)
        buckets = self.buckets(to, budget)
        full = 0.0 if again else self.full.wait(buckets[1:]) or self._own_full(buckets)
        if full > 0:  # refused a moment ago: only what the message shows is judged
            if edit is None:
                return Verdict(full, False)
            return (await self._chat([], edit, chat_id, refused=full))[0]
        taken = await self._overall()
        if taken.wait > 0:
            return Verdict(taken.wait, True)
        try:
            verdict, _edit = await self._chat(buckets[1:], edit, chat_id, tracked)
        except BaseException:
            self.lease.give_back(taken)
            raise
        if verdict.wait != 0:
            self.lease.give_back(taken)
            return verdict
        return self._taken(verdict, budget, taken)

    def _taken(self, verdict: Verdict, budget: Budget | None, taken: Taken) -> Verdict:
        """An admitted ``verdict`` with the budget it was admitted under and its
        overall entries ``taken``."""
        if budget is not None:  # what its 429, if any, was admitted under (#38)
            verdict = verdict._replace(generation=budget.generation)
        if verdict.stamp is not None and taken.entries:  # moved too if answered late (#37)
            lease = self.lease
            overall = OverallEntries(lease.bucket, lease.seconds, taken.entries, taken.at)
            verdict = verdict._replace(stamp=replace(verdict.stamp, overall=overall))
        return verdict

    def _own_full(self, buckets: list[tuple[str, Window]]) -> float:
        """Seconds this process's own entries counted in the last
        :data:`~telegram_bot.delivery.flood.full.REMEMBERED` seconds keep the
        chat's windows (``buckets[1:]``) full (0: ask Redis).  #39:
        the script that would refuse the call is spared; other processes only
        fill the windows more, and the trust is a remembered refusal's."""
        now = float(self.clock())
        since = now - REMEMBERED
        return max(
            (
                self.journal.wait(key, w.limit, w.seconds, now, 1, since=since)
                for key, w in buckets[1:]
            ),
            default=0.0,
        )

    async def _chat(
        self,
        buckets: list[tuple[str, Window]],
        edit: EditTicket | None,
        chat_id: int | None = None,
        tracked: bool = False,
        refused: float = 0.0,
        room: tuple[Address, float] | None = None,
    ) -> tuple[Verdict, float]:
        """The chat's script (:data:`ACQUIRE_LUA`) and, with ``room``, the
        seconds until the message's last edit is its gap old; ``tracked``: the
        call joins the chat's unanswered calls until :meth:`stamp` (#37);
        ``refused``: the windows are known full that long (only an ``edit``'s
        digest is judged); ``room``: a deferrable message and its gap, taken
        only when the windows leave their reserves free and the gap is over
        (#39 point 1: :meth:`headroom` and the take in one script)."""
        if not buckets and edit is None:
            return Verdict(0.0), 0.0
        td, md, version, owner = "*", "", "", ""  # no edit: the script skips the digest
        if edit is not None:
            td = "*" if edit.text_digest is None else edit.text_digest  # '*': keep the text
            md, version, owner = edit.markup_digest, edit.version, edit.owner
        now, name = float(self.clock()), self.journal.name()
        args: list[str | int | float] = [
            repr(now),
            len(buckets),
            md,
            td,
            self._digest_ttl_ms,
            version,
            self._edit_ttl_ms,
            owner,
            self._lease_ms,
            name,
        ]
        for _, window in buckets:  # (a deferrable message leaves the reserve free)
            limit = window.limit - window.reserve if room is not None else window.limit
            args += [limit, repr(float(window.seconds)), 1]
        keys = [k for k, _ in buckets]
        gap = room[1] if room is not None and room[0].message is not None else 0.0
        if edit is not None:  # what it shows (and its edit lease), its last edit
            k, message = self.keys, edit.to.key
            keys.append(k.sent_digest(*message))  # its record: its last edit too (#39)
        elif gap > 0:
            assert room is not None
            keys.append(self.keys.sent_digest(*room[0].key))  # its last edit
        # the chat's unanswered calls count as arriving now (#37, ACQUIRE_LUA):
        # kept in its first window, below 0 (#39: no key of their own)
        unanswered = buckets[0][0] if buckets and chat_id is not None else ""
        c = self.config
        if unanswered:
            args += [repr(float(c.edit_lease)), repr(float(c.answer_margin)), int(tracked)]
        else:
            args += [0, 0, 0]
        args.append(repr(refused) if refused > 0 else "")
        args.append(repr(gap) if room is not None else "")
        self.round_trips += 1
        wait, _sep, rest = _answer(await self._script(keys, args)).partition(";")
        if room is not None and rest.count(";"):  # short of its reserve, or its gap
            return Verdict(float(wait), False), float(rest.partition(";")[2])
        if float(wait) != 0:
            if float(wait) > 0 and buckets:
                self.full.note(buckets, now + float(wait))
            return Verdict(float(wait), False), 0.0
        for key, window in buckets:
            self.journal.record(key, window.seconds, now, name)
        if not buckets:
            return Verdict(0.0), 0.0
        windows = tuple((key, float(window.seconds)) for key, window in buckets)
        stamp = Stamp(windows, name, unanswered if tracked else "", at=now)
        return Verdict(0.0, False, stamp), 0.0

    async def acquire(self, to: To = None) -> float:
        """Take a token for a message ``to`` a chat (``None``: the overall
        bucket only): 0 when taken, else the seconds to wait (nothing taken)."""
        return (await self.take(to)).wait

    async def take(self, to: To = None, *, tracked: bool = False, again: bool = False) -> Verdict:
        """:meth:`acquire` as a :class:`Verdict`; ``tracked``: the caller stamps
        Telegram's answer (:meth:`stamp`, #37); ``again``: asked again after
        waiting (:meth:`_run`)."""
        found = address(to)
        return await self._guard(
            chat_of(to),
            lambda: self._run(found, tracked=tracked, again=again),
            lambda: self._local_take(found),
        )

    async def refund(self, to: To = None, *, held: float = 0.0) -> None:
        """Give back the entry a :meth:`take` counted ``held`` seconds ago for a
        message that did not go out: the newest counted by then (never a later
        message's) in each chat window that still counts it.  The overall entry
        stays (#28): which leased entry it was is not known here, and giving
        back another would let the fleet overspend."""

        async def refund() -> None:
            buckets = (await self.windows(to))[1:]
            if not buckets:
                return
            now = float(self.clock())
            args: list[str | int | float] = [repr(now), repr(now - held + 1e-6)]
            for _, window in buckets:
                args += [repr(float(window.seconds)), 1]
            self.round_trips += 1
            await self._refund([key for key, _ in buckets], args)
            self.full.forget(key for key, _ in buckets)
            self.local.refund(buckets, held, now)

        local = lambda: self.local.refund(self._local_buckets(to), held)  # noqa: E731
        await self._guard(chat_of(to), refund, local)

    async def _charge_overall(self) -> int:
        """The journal charged to the fleet-wide window when it answers again (#40)."""
        bucket = self.keys.rate_all()
        return await self.charge(lambda key: key == bucket)

    async def charge(self, only: Callable[[str], bool] | None = None) -> int:
        """Count this process's journal in the shared windows again after an
        outage -- what the fallback counted, what a restarted Redis lost (#28):
        one round trip per key ``only`` admits (default: all).  Returns the
        entries added."""
        now, added = float(self.clock()), 0
        for key, entries in self.journal.live(now).items():
            if only is not None and not only(key):
                continue
            # the fleet-wide window's key lives a minute at least (:data:`KEY_LIFE`)
            life = KEY_LIFE if key == self.lease.bucket else 0.0
            args: list[str | int | float] = [repr(now), repr(self.journal.seconds[key]), life]
            for at, name in entries:
                args += [repr(at), name]
            self.round_trips += 1
            added += int(_answer(await self._charge([key], args)))
        return added

    async def headroom(self, to: To = None, gap: float = 0.0) -> Headroom:
        """How long a deferrable message ``to`` a chat waits so that it leaves
        the windows' reserves to urgent ones (the overall part local,
        :meth:`OverallLease.headroom`); takes no token.  For an edit and a
        ``gap``: also until the message's last edit by any process is ``gap``
        old -- with nothing to wait for, this edit is recorded as its last, so
        two processes never both edit it within its gap."""
        # (falling back: no edit is spaced across processes)
        local = lambda: self.local.headroom(self._local_buckets(to))  # noqa: E731
        return await self._guard(chat_of(to), lambda: self._headroom_of(to, gap), local)

    async def take_with_room(
        self, to: Address, gap: float = 0.0, edit: EditTicket | None = None
    ) -> tuple[Headroom, Verdict | None]:
        """:meth:`headroom` and, with nothing to wait for, the message's token
        taken in the same script (as :meth:`take` with ``tracked``; None: not
        taken) -- with ``edit`` (of ``to``), the edit judged there too, as
        :meth:`admit_edit` judges it (a :data:`STALE`, :data:`NOOP` or
        :data:`BUSY` verdict: nothing taken).  #39 point 1: a look, a take and
        a prepaid edit's judging were three scripts a deferred edit."""
        if edit is not None:
            check_digest(edit.text_digest, edit.markup_digest)
        # (falling back: nothing is taken here, the caller takes its token)
        local = lambda: (self.local.headroom(self._local_buckets(to)), None)  # noqa: E731
        return await self._guard(to.chat, lambda: self._take_with_room(to, gap, edit), local)

    async def _headroom_of(self, to: To, gap: float) -> Headroom:
        overall = self.lease.headroom(float(self.clock()))
        to = address(to)
        buckets = (await self.windows(to))[1:]
        if not buckets:
            return Headroom(overall, 0.0)
        keys = [key for key, _ in buckets]
        if to is not None and to.message is not None and gap > 0:
            keys.append(self.keys.sent_digest(*to.key))  # its last edit (#39)
        else:
            gap = 0.0
        claim = "1" if overall <= 0 else "0"
        args: list[str | int | float] = [
            repr(float(self.clock())),
            repr(float(gap)),
            claim,
            self._edit_ttl_ms,
        ]
        for _, window in buckets:
            args += [window.limit, repr(float(window.seconds)), 1 + window.reserve]
        self.round_trips += 1
        chat, _sep, edit = _answer(await self._headroom(keys, args)).partition(";")
        return Headroom(overall, float(chat), float(edit or 0))

    async def _take_with_room(
        self, to: Address, gap: float, edit: EditTicket | None = None
    ) -> tuple[Headroom, Verdict | None]:
        """The overall window short of its reserve: :meth:`headroom` alone.
        Else an overall entry, then ONE script on the chat's slot -- the
        chat's reserves and the message's gap looked at, its token taken when
        neither holds it back (the overall entry given back when one does)."""
        if self.lease.headroom(float(self.clock())) > 0:
            return await self._headroom_of(to, gap), None
        budget = await self.budget(to.chat)
        buckets = self.buckets(to, budget)
        taken = await self._overall()
        if taken.wait > 0:
            return Headroom(taken.wait, 0.0), None
        try:
            verdict, spaced = await self._chat(buckets[1:], edit, to.chat, True, room=(to, gap))
        except BaseException:
            self.lease.give_back(taken)
            raise
        if verdict.wait < 0:  # judged: stale, no change, or another call's lease
            self.lease.give_back(taken)
            return Headroom(0.0, 0.0), verdict
        if verdict.wait > 0 or spaced > 0:
            self.lease.give_back(taken)
            return Headroom(0.0, verdict.wait, spaced), None
        return Headroom(0.0, 0.0), self._taken(verdict, budget, taken)

    async def admit_edit(self, edit: EditTicket, *, again: bool = False) -> Verdict:
        """Judge ``edit`` and take what it needs in ONE script on the chat's
        slot: :data:`STALE`, :data:`NOOP` or :data:`BUSY` (nothing taken, even
        when out of tokens), 0 (admitted: token, content, lease), else the
        seconds to wait.  Never sleeps: the caller waits and asks ``again``."""
        check_digest(edit.text_digest, edit.markup_digest)
        if edit.prepaid:  # the digest and the lease alone: no bucket, no overall token
            return (await self._chat([], edit))[0]
        return await self._run(edit.to, edit, tracked=edit.tracked, again=again)

    # ------------------------------------------------------------ digests
    async def remember(
        self, to: Address, text_digest: str, markup_digest: str, version: str = ""
    ) -> None:
        """Record what a message shows (after a send or its deletion; a lease goes)."""
        check_digest(text_digest, markup_digest)

        async def write() -> None:
            self.round_trips += 1
            value = f"{text_digest}:{markup_digest}:{version}"
            await self.kv.set(self.keys.sent_digest(*to.key), value, ttl_ms=self._digest_ttl_ms)

        await self._written(to, write())

    async def forget(self, to: Address, lease: str = "", version: str = "") -> None:
        """An edit failed: the content is unknown, the highest version asked is
        kept (nothing older goes out after it) and ``lease`` goes; ``version``:
        one it may show since (#40: sent while the chat's state was down)."""
        await self._written(to, self._forget_digest(to, lease, version))

    async def _forget_digest(self, to: Address, lease: str = "", version: str = "") -> None:
        self.round_trips += 1
        keys = [self.keys.sent_digest(*to.key)]
        now = repr(float(self.clock()))
        await self._forget(keys, [self._digest_ttl_ms, lease, version, now])

    async def stamp(self, stamp: Stamp) -> None:
        """Telegram answered the call of ``stamp``: its entries count from now
        (:class:`Stamp`); while Redis is down, in the journal alone."""

        async def move() -> None:
            keys, args = self._stamp_args(stamp)
            if keys:  # (answered in time and not tracked: nothing to move)
                self.round_trips += 1
                await self._stamp(keys, args)
            await self._stamp_overall(stamp)

        await self._guard(stamp_chat(stamp), move, lambda: self.local.stamp(stamp), back=False)

    async def _stamp_overall(self, stamp: Stamp) -> None:
        """A call answered ``overall_stamp_after`` late: its overall entries
        count from now (#37: a loaded process's late messages reached Telegram
        30 in half a second while the window had let them go)."""
        entries = stamp.overall
        now = float(self.clock())
        if entries is None or now - entries.at < self.config.overall_stamp_after:
            return
        self.journal.restamp(entries.key, entries.seconds, entries.names, now)
        self.round_trips += 1
        self.late_stamps += 1
        # its key lives a minute at least (:data:`KEY_LIFE`, #39)
        life = max(entries.seconds, KEY_LIFE)
        await self._stamp_late([entries.key], [repr(now), repr(life), *entries.names])

    def _stamp_args(self, stamp: Stamp) -> tuple[list[str], list[str | int | float]]:
        """The window keys and ARGV of STAMP_LUA; the journal's entries move too."""
        now = float(self.clock())
        args: list[str | int | float] = [repr(now), stamp.name, 1]
        windows = stamp.windows
        if stamp.at is not None and now - stamp.at <= self.config.chat_stamp_after:
            windows = ()  # answered in time: they stay where they were counted (#39)
        # the TTL the take gave its keys (a second past the window) still covers
        # an entry moved this soon after: no PEXPIRE (seconds 0, #39)
        covered = stamp.at is not None and now - stamp.at <= STAMP_COVERED
        args += [0 if covered else repr(seconds) for _key, seconds in windows]
        for key, seconds in windows:
            self.journal.restamp(key, seconds, stamp.names, now)
        keys = [key for key, _seconds in windows]
        return keys + ([stamp.unanswered] if stamp.unanswered else []), args

    async def release_edit(self, to: Address, lease: str, stamp: Stamp | None = None) -> bool:
        """The edit of ``lease`` went out: the lease goes and ``stamp``'s entries
        count from now, in one round trip.  False: the call outlived its lease
        (the content is forgotten: another edit may have landed first)."""

        def down() -> bool:
            if stamp is not None:
                self.local.stamp(stamp)
            return True

        return await self._guard(
            to.chat, lambda: self._release_edit(to, lease, stamp), down, back=False
        )

    async def _release_edit(self, to: Address, lease: str, stamp: Stamp | None) -> bool:
        self.round_trips += 1
        keys = [self.keys.sent_digest(*to.key)]
        args: list[str | int | float] = [lease, self._digest_ttl_ms, repr(float(self.clock()))]
        if stamp is not None and stamp.windows:
            more, values = self._stamp_args(stamp)
            if more:
                keys += more
                args += values
        released = bool(await self._release(keys, args))
        if stamp is not None:
            await self._stamp_overall(stamp)
        return released


__all__ = [
    "BUSY",
    "NOOP",
    "STALE",
    "Address",
    "EditTicket",
    "FloodConfig",
    "FloodKeys",
    "FloodLimiter",
    "Headroom",
    "Journal",
    "OverallEntries",
    "Stamp",
    "Verdict",
    "Window",
    "table_version",
]
