"""Telegram's flood limits as token buckets in Redis, shared by every bot process.

Telegram allows about one message a second in a chat (short bursts allowed),
20 a minute in a group and about 30 a second overall; edits count like sends.
An :meth:`FloodLimiter.acquire` is ONE round trip to the chat's own hash slot:
a Lua script refills the chat's buckets (its chat bucket and, for a group, its
per-minute bucket) and either takes one token from each of them or -- when any
is short -- takes nothing and answers how long to wait.  Never a partial take.

No hot key: every key of a chat carries the chat's hash tag
(``rl:{c:<chat>}:...``, :class:`FloodKeys`), so the chats spread over a Redis
Cluster.  The fleet-wide bucket (``rl:{all}``) is not hit per message: a
process leases its tokens in small batches (:class:`OverallLease`, ``lease``
tokens at a time, one round trip per batch) into a local allowance that the
messages use up; a lease unused for ``lease_ttl`` seconds goes back to the
bucket with the next lease, so no process sits on tokens and the fleet never
exceeds the overall rate by more than ``lease_ttl`` seconds of it.

Urgent first: each bucket keeps a ``reserve`` that deferrable messages (the
coalesced updates of players who did not just act) leave alone --
:meth:`FloodLimiter.headroom` tells them how long to hold back -- so a press's
own answer finds a token even when the bot is busy, and the deferred updates
coalesce while they wait.

The time comes from Python (``clock``, default :func:`time.time`) and is passed
into the scripts, so tests drive the buckets with a fake clock and processes on
one host agree (Redis ``TIME`` is never read).

The same script can first compare what a message shows -- digests of its text
and of its keyboard, and the highest table version it showed, stored as
``<text>:<keyboard>:<version>`` -- with an edit, described by one
:class:`EditTicket` (:meth:`FloodLimiter.admit_edit`; a keyboard-only edit
compares the keyboard and keeps the text): an edit of an OLDER version than the
one shown is refused (:data:`STALE`; the content never goes backwards,
whichever process renders it), an edit that would change nothing takes no
token (:data:`NOOP`); an allowed edit records the new content in the same
round trip, and (the ticket's ``owner``) takes the message's *edit lease*:
while one call's edit of it is in flight, another's -- any process -- hears
:data:`BUSY` and asks again a moment later, when the digest drops it if older,
else it goes out after: edits land in version order.  The lease goes after the
call (:meth:`FloodLimiter.release_edit`, ``forget``) or lapses after
``edit_lease`` s.  A digest lives ``digest_ttl`` (an hour, refreshed on every
edit): it expires with the game.  Redis is reached only through the table
service's key-value API (``svc.kv``); failures surface as ServiceUnavailable.

The default rates are a little stricter than the fake Bot API's (per chat 1/s
burst 3, group 20 refilling 20/min, overall 30/s burst 30): one token of slack
in each capacity absorbs the time between our acquire and the server taking its
own -- which is why tokens prepaid long before their call are taken again
(``prepaid_ttl``, :class:`telegram_bot.delivery.flood.gate.Prepaid`).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from engine.clock import Clock
from tables import KeyValueStore
from telegram_bot.delivery.digest import check_digest, table_version
from telegram_bot.delivery.flood.lease import OverallLease
from telegram_bot.delivery.flood.rates import (
    BUSY,
    NOOP,
    STALE,
    FloodConfig,
    Headroom,
    Rate,
    Verdict,
)
from telegram_bot.delivery.flood.scripts import (
    ACQUIRE_LUA,
    FORGET_LUA,
    HEADROOM_LUA,
    LEASE_LUA,
    REFUND_LUA,
    RELEASE_EDIT_LUA,
)
from telegram_bot.state.keys import FloodKeys

Sleep = Callable[[float], Awaitable[Any]]


@dataclass(frozen=True)
class EditTicket:
    """One edit of a message, as :meth:`FloodLimiter.admit_edit` judges it.

    ``chat_id``, ``message_id``: the message; ``text_digest`` and
    ``markup_digest``: what it would show (``text_digest`` None: a keyboard-only
    edit, the text stays); ``version``: the table version it renders
    (:func:`table_version`; '': unversioned, never refused as older);
    ``owner``: the call that takes the message's edit lease with it ('': no
    lease).  ``prepaid``: its flood tokens were taken before (a coalesced
    update's prepaid tokens) -- only the digest is judged (and the lease
    taken), no bucket is touched.  Every edit costs one token."""

    chat_id: int
    message_id: int
    text_digest: str | None
    markup_digest: str
    version: str = ""
    owner: str = ""
    prepaid: bool = False


def _answer(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


class FloodLimiter:
    """Shared token buckets for outgoing messages (see the module docstring).

    ``FloodLimiter(svc.kv, config, clock=time.time)``; ``round_trips`` counts
    its Redis round trips.
    """

    def __init__(
        self, kv: KeyValueStore, config: FloodConfig | None = None, *, clock: Clock = time.time
    ) -> None:
        self.kv = kv
        self.config = config or FloodConfig()
        self.keys = FloodKeys(kv)
        self.clock = clock
        self.round_trips = 0
        self._script = kv.script(ACQUIRE_LUA)
        self._headroom = kv.script(HEADROOM_LUA)
        self._refund = kv.script(REFUND_LUA)
        self._forget = kv.script(FORGET_LUA)
        self._release = kv.script(RELEASE_EDIT_LUA)
        self._digest_ttl_ms = math.ceil(self.config.digest_ttl * 1000)
        self._edit_ttl_ms = math.ceil(self.config.edit_ttl * 1000)
        self._lease_ms = math.ceil(self.config.edit_lease * 1000)
        c = self.config
        self.lease = OverallLease(
            kv.script(LEASE_LUA),
            self.keys.rate_all(),
            c.overall.per_second,
            c.overall.burst,
            c.overall.reserve,
            min(c.lease, c.overall.burst),
            c.lease_ttl,
            c.overall.ttl_ms,
        )

    @property
    def redis(self) -> FloodLimiter:
        """The limiter whose buckets are in Redis: this one (see :class:`Limiter`)."""
        return self

    # ------------------------------------------------------------ buckets
    def buckets(self, chat_id: int | None) -> list[tuple[str, Rate]]:
        """The buckets one message to ``chat_id`` takes from (groups: negative
        ids); ``[0]`` is the overall one (leased, never in a chat's script)."""
        c, k = self.config, self.keys
        out = [(k.rate_all(), c.overall)]
        if chat_id is not None:
            out.append((k.rate_chat(chat_id), c.per_chat))
            if chat_id < 0:
                out.append((k.rate_group(chat_id), c.per_group))
        return out

    async def _overall(self, cost: float) -> float:
        """Take ``cost`` overall tokens from the allowance (leasing a batch when
        it is short): 0 when taken, else the seconds to wait."""
        before = self.lease.leases
        wait = await self.lease.take(cost, float(self.clock()))
        self.round_trips += self.lease.leases - before
        return wait

    async def _run(
        self, chat_id: int | None, cost: float, edit: EditTicket | None = None
    ) -> Verdict:
        """Overall tokens from the allowance, then ONE script on the chat's slot:
        its buckets (and for an ``edit`` the message's digest and edit lease)."""
        buckets = self.buckets(chat_id)
        for _, rate in buckets:
            if cost > rate.burst:
                raise ValueError(f"cost {cost} exceeds the burst of {rate!r}")
        if (wait := await self._overall(cost)) > 0:
            return Verdict(wait, True)
        try:
            verdict = await self._chat(buckets[1:], cost, edit)
        except BaseException:
            self.lease.give_back(cost)
            raise
        if verdict.wait != 0:
            self.lease.give_back(cost)
        return verdict

    async def _chat(
        self, buckets: list[tuple[str, Rate]], cost: float, edit: EditTicket | None
    ) -> Verdict:
        if not buckets and edit is None:
            return Verdict(0.0)
        td, md, version, owner = "*", "", "", ""  # no edit: the script skips the digest
        if edit is not None:
            td = "*" if edit.text_digest is None else edit.text_digest  # '*': keep the text
            md, version, owner = edit.markup_digest, edit.version, edit.owner
        args: list[str | int | float] = [
            repr(float(self.clock())),
            len(buckets),
            md,
            td,
            self._digest_ttl_ms,
            version,
            self._edit_ttl_ms,
            owner,
            self._lease_ms,
        ]
        for _, rate in buckets:
            args += [repr(rate.per_second), repr(float(rate.burst)), repr(float(cost)), rate.ttl_ms]
        keys = [k for k, _ in buckets]
        if edit is not None:  # what it shows, its last edit, its edit lease
            k, message = self.keys, (edit.chat_id, edit.message_id)
            keys += [k.sent_digest(*message), k.edited_at(*message), k.in_flight(*message)]
        self.round_trips += 1
        wait, _sep, _short = _answer(await self._script(keys, args)).partition(";")
        return Verdict(float(wait), False)

    async def acquire(self, chat_id: int | None = None, *, cost: float = 1) -> float:
        """Take ``cost`` tokens for a message to ``chat_id`` (``None``: the overall
        bucket only): 0 when taken, else the seconds to wait (nothing taken)."""
        return (await self.take(chat_id, cost=cost)).wait

    async def take(self, chat_id: int | None = None, *, cost: float = 1) -> Verdict:
        """:meth:`acquire`, also telling whether the overall bucket is short."""
        return await self._run(chat_id, cost)

    async def refund(
        self, chat_id: int | None = None, *, cost: float = 1, held: float = 0.0
    ) -> None:
        """Give back the tokens a :meth:`take` took for a message that did not go
        out (a no-op edit, overtaken by a newer one), never above a bucket's
        capacity; tokens taken ``held`` seconds ago only where the bucket cannot
        have refilled since (``held * rate < cost``).  The overall token goes to
        this process's allowance; one round trip for the chat's buckets."""
        if held * self.config.overall.per_second < cost:
            self.lease.give_back(cost)
        buckets = self.buckets(chat_id)[1:]
        if not buckets:
            return
        args: list[str | int | float] = [repr(float(self.clock())), repr(float(held))]
        for _, rate in buckets:
            args += [repr(rate.per_second), repr(float(rate.burst)), repr(float(cost)), rate.ttl_ms]
        self.round_trips += 1
        await self._refund([key for key, _ in buckets], args)

    async def headroom(
        self, chat_id: int | None = None, message_id: int | None = None, gap: float = 0.0
    ) -> Headroom:
        """Priority for urgent messages: how long until a message to ``chat_id``
        could take its token and still leave the reserve of the overall bucket
        and of its chat's buckets (0 and 0: now).
        A deferrable message (another player's coalesced update) waits for this
        first, so the acting player's own updates keep finding tokens when the
        bot is busy -- and the deferred ones coalesce meanwhile.  Takes no
        token; the overall part is local (:meth:`OverallLease.headroom`).

        With ``message_id`` and ``gap``: also how long until that message's last
        edit -- by any process -- is ``gap`` seconds old (``message``); when
        nothing is to wait for, the edit about to go out is recorded as its last
        (in the same script), so two processes never both edit a message
        within its coalescing gap."""
        overall = self.lease.headroom(float(self.clock()))
        buckets = self.buckets(chat_id)[1:]
        if not buckets:
            return Headroom(overall, 0.0)
        keys = [key for key, _ in buckets]
        if chat_id is not None and message_id is not None and gap > 0:
            keys.append(self.keys.edited_at(chat_id, message_id))
        else:
            gap = 0.0
        claim = "1" if overall <= 0 else "0"
        args: list[str | int | float] = [
            repr(float(self.clock())),
            repr(float(gap)),
            claim,
            self._edit_ttl_ms,
        ]
        for _, rate in buckets:
            args += [repr(rate.per_second), repr(float(rate.burst)), repr(1.0 + rate.reserve)]
        self.round_trips += 1
        chat, _sep, edit = _answer(await self._headroom(keys, args)).partition(";")
        return Headroom(overall, float(chat), float(edit or 0))

    async def admit_edit(self, edit: EditTicket) -> Verdict:
        """Judge ``edit`` against what its message shows and take what it needs, in
        ONE script on the chat's slot (after the overall allowance): :data:`STALE`
        (the message shows a newer version) or :data:`NOOP` (it shows exactly
        this) -- nothing taken, even when out of tokens; :data:`BUSY` (another
        owner's edit of the message is in flight) -- nothing taken; 0 -- admitted:
        its token taken (none when ``prepaid``), the new content recorded, the
        lease taken for ``owner``; else the seconds to wait, nothing taken
        (``overall``: the overall bucket is the short one).  Never sleeps: the
        caller waits and asks again (:class:`telegram_bot.delivery.flood.gate.FloodGate`)."""
        check_digest(edit.text_digest, edit.markup_digest)
        if edit.prepaid:  # the digest and the lease alone: no bucket, no overall token
            return await self._chat([], 1, edit)
        return await self._run(edit.chat_id, 1, edit)

    async def wait(
        self, chat_id: int | None = None, *, sleep: Sleep = asyncio.sleep, max_wait: float = 300.0
    ) -> float:
        """Acquire, sleeping as told until the tokens are taken; the seconds slept.
        Raises :class:`TimeoutError` past ``max_wait`` seconds of waiting."""
        slept = 0.0
        while (delay := await self.acquire(chat_id)) > 0:
            if slept + delay > max_wait:
                raise TimeoutError(f"flood limit: would wait over {max_wait} s")
            await sleep(delay)
            slept += delay
        return slept

    # ------------------------------------------------------------ digests
    async def remember(
        self, chat_id: int, message_id: int, text_digest: str, markup_digest: str, version: str = ""
    ) -> None:
        """Record what a message shows now (after a send, or a "not modified")."""
        check_digest(text_digest, markup_digest)
        self.round_trips += 1
        await self.kv.set(
            self.keys.sent_digest(chat_id, message_id),
            f"{text_digest}:{markup_digest}:{version}",
            ttl_ms=self._digest_ttl_ms,
        )

    async def forget(self, chat_id: int, message_id: int, lease: str = "") -> None:
        """An edit failed: the message's content is unknown -- but the highest
        table version it was asked to show is kept, so a retry or another
        process's older render still cannot go back behind it (and ``lease`` goes)."""
        self.round_trips += 1
        keys = [self.keys.sent_digest(chat_id, message_id)]
        keys += [self.keys.in_flight(chat_id, message_id)] if lease else []
        await self._forget(keys, [self._digest_ttl_ms, lease])

    async def release_edit(self, chat_id: int, message_id: int, lease: str) -> bool:
        """The edit of ``lease`` went out: its lease goes.  False: the call outlived
        it (the content is forgotten: another edit may have landed first)."""
        self.round_trips += 1
        keys = [
            self.keys.in_flight(chat_id, message_id),
            self.keys.sent_digest(chat_id, message_id),
        ]
        return bool(await self._release(keys, [lease, self._digest_ttl_ms]))

    async def last_digest(self, chat_id: int, message_id: int) -> str | None:
        """``<text>:<markup>`` a message shows (None: unknown)."""
        shown = await self.shown(chat_id, message_id)
        return None if shown is None or shown[0] == "?:?" else shown[0]

    async def shown(self, chat_id: int, message_id: int) -> tuple[str, str] | None:
        """(``<text>:<markup>``, ``<table>#<version>``) a message shows (None: unknown)."""
        self.round_trips += 1
        raw = await self.kv.get(self.keys.sent_digest(chat_id, message_id))
        if raw is None:
            return None
        text, _sep, rest = raw.partition(":")
        markup, _sep, version = rest.partition(":")
        return f"{text}:{markup}", version


class Limiter(Protocol):
    """What the delivery layer asks of a flood limiter
    (:class:`telegram_bot.delivery.flood.gate.FloodGate`,
    :class:`telegram_bot.delivery.shown.ShownStore`): a :class:`FloodLimiter`,
    or the :class:`telegram_bot.delivery.flood.fallback.FallbackFloodLimiter`
    around one that keeps replies going while Redis is down.  The calls are
    :class:`FloodLimiter`'s."""

    @property
    def config(self) -> FloodConfig: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def redis(self) -> FloodLimiter:
        """The limiter whose buckets are in Redis: the hold after a 429
        (:class:`telegram_bot.delivery.flood.hold.ChatHold`) writes them itself."""
        ...

    async def take(self, chat_id: int | None = None, *, cost: float = 1) -> Verdict: ...

    async def admit_edit(self, edit: EditTicket) -> Verdict: ...

    async def refund(
        self, chat_id: int | None = None, *, cost: float = 1, held: float = 0.0
    ) -> None: ...

    async def headroom(
        self, chat_id: int | None = None, message_id: int | None = None, gap: float = 0.0
    ) -> Headroom: ...

    async def remember(
        self, chat_id: int, message_id: int, text_digest: str, markup_digest: str, version: str = ""
    ) -> None: ...

    async def forget(self, chat_id: int, message_id: int, lease: str = "") -> None: ...

    async def release_edit(self, chat_id: int, message_id: int, lease: str) -> bool: ...


__all__ = [
    "BUSY",
    "NOOP",
    "STALE",
    "EditTicket",
    "FloodConfig",
    "FloodKeys",
    "FloodLimiter",
    "Headroom",
    "Limiter",
    "Rate",
    "Verdict",
    "table_version",
]
