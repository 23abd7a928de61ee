"""Waiting for the shared flood windows -- the limiter side of
:class:`telegram_bot.delivery.outgoing.Outgoing`: a call takes its token (in the
overall line when the overall window is short, in its chat's line by rank when
the chat's are, #24) or uses the one prepaid for it; tokens unused, or paid for
an edit that changed nothing, go back.  An edit takes its message's edit lease
with its token (:class:`Receipt`), waiting ``lease_poll`` while another
call's is in flight.  Calls to one chat leave one at a time (:class:`ChatTurns`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from engine.clock import Clock
from tables import survived
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.flood.limiter import (
    BUSY,
    NOOP,
    STALE,
    EditTicket,
    FloodLimiter,
    Headroom,
    Stamp,
    Verdict,
)
from telegram_bot.delivery.waiting_line import OWN_VIEW, ChatLines, Priority, WaitingLine

log = logging.getLogger(__name__)

LAST_RESORT = 3.0
"""A call that waited this many times ``max_wait`` goes out without a token (a
limiter that never has room is a bug; the 429 it may draw is then retried)."""

GO = Headroom(0.0, 0.0)

Sleep = Callable[[float], Awaitable[Any]]
"""``asyncio.sleep`` or a test's own (a fake clock moving on)."""


@dataclass
class Prepaid:
    """The token of one message, taken ahead of its call (``Outgoing.prepay``)
    and used by it; unused, or used by an edit that changed nothing, it goes
    back (``Outgoing.settle``).  Held longer than ``prepaid_ttl`` it goes back
    and the call takes a fresh one: the limiter counted it when paid, Telegram
    counts the message when it arrives."""

    to: Address  # the message it pays for (the one the call will edit, if known)
    used: bool = False
    at: float | None = None  # the limiter's clock when paid (None: unknown, use them)
    stamp: Stamp | None = None  # where its entries are (moved when Telegram answers)
    generation: int | None = None  # the group's budget it was paid under (#38)
    # the edit judged with the take (#39), whose call holds the message's edit
    # lease as ``owner``: its digests and version
    judged: EditTicket | None = None

    @property
    def owner(self) -> str:
        """The edit lease its call holds already ('': none)."""
        return self.judged.owner if self.judged is not None else ""


@dataclass
class Receipt:
    """What one call holds of the flood limiter: ``owner`` of its message's edit
    lease (unique per call; '': no lease), ``held`` while the lease is its;
    ``stamp``, its entries to move when Telegram answers (:class:`Stamp`);
    ``generation``, the budget it was admitted under, which its 429 passes
    back (one burst, one cut, #38)."""

    owner: str = ""
    held: bool = False
    stamp: Stamp | None = None
    generation: int | None = None

    def take(self) -> Stamp | None:
        """The stamp, once (the receipt is empty after)."""
        stamp, self.stamp = self.stamp, None
        return stamp


@dataclass
class Place:
    """Whether one call holds the overall line, and the head of its chat's."""

    overall: bool = False
    chat: bool = False


Newest = Callable[[], "tuple[Any, str] | None"]
"""After a 429, the call to retry instead of the one refused -- an edit with the
message's newest content and its version (None: the same call)."""


@dataclass(frozen=True)
class CallOptions:
    """How one call goes out: its place in the overall line, its prepaid token,
    what to retry after a 429 (``newest``)."""

    priority: Priority = Priority.URGENT
    prepaid: Prepaid | None = None
    newest: Newest | None = None
    version: str = ""  # the table version an edit renders (older than shown: dropped)
    rank: int = OWN_VIEW  # its place in its chat's line (#24: own view, actor, others, table)


URGENT = CallOptions()


@dataclass
class OutgoingStats:
    """Counts of what went out (shared by ``Outgoing``, its gate and ``Delivery``)."""

    sent: int = 0  # messages sent (any send method that succeeded)
    edited: int = 0  # edits Telegram applied
    coalesced: int = 0  # pending edits dropped because newer content replaced them
    noop: int = 0  # edits dropped as changing nothing (+ "not modified" answers)
    retry_after: int = 0  # 429 answers received
    forbidden: int = 0  # 403 answers received
    waits: int = 0  # times a call waited on the flood limiter
    busy: int = 0  # times an edit waited for another call's edit of its message

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class FloodGate:
    """The flood tokens of this process's calls (see the module docstring).
    Past ``max_wait`` seconds of waits a call leaves the lines but still waits
    for its token (#27: one sent without drew a 429); past :data:`LAST_RESORT`
    times that, it goes out anyway."""

    def __init__(
        self,
        limiter: FloodLimiter,
        *,
        sleep: Sleep,
        max_wait: float,
        stats: OutgoingStats,
        clock: Clock = time.monotonic,
    ) -> None:
        self.limiter = limiter
        self.sleep = sleep
        self.clock = clock  # the seconds waited in a line (``sleep``'s time scale)
        self.max_wait = max_wait
        self.stats = stats
        # calls of this process that wait for the OVERALL bucket queue here (urgent
        # ones first, else FIFO): only the head asks Redis again, not every waiter
        self.line = WaitingLine()
        # calls that wait for a chat's OWN windows queue per chat by rank (#24)
        self.chats = ChatLines()

    async def headroom(self, to: Address, gap: float) -> Headroom:
        """:meth:`FloodLimiter.headroom`; go when Redis cannot tell."""
        with survived(log, "flood limiter: no headroom reading for chat %s; sent at once", to.chat):
            return await self.limiter.headroom(to, gap)
        return GO

    async def take_if_room(
        self,
        to: Address,
        gap: float,
        digests: tuple[str | None, str] | None = None,
        version: str = "",
        owner: str = "",
    ) -> tuple[Headroom, Prepaid | None]:
        """:meth:`headroom` and, with nothing to wait for, the message's tokens
        taken in the same script (#39 point 1), as :meth:`prepay` takes them
        (None: not taken; go when Redis cannot tell, the tokens to prepay).
        ``digests``: the edit the call is to make, judged there too, its
        message's edit lease taken for ``owner`` (judged stale, a no-op or
        another call's: nothing taken, its call judges it in its turn)."""
        edit = _ticket(to, digests, version, owner) if owner else None
        with survived(log, "flood limiter: no headroom reading for chat %s; sent at once", to.chat):
            room, taken = await self.limiter.take_with_room(to, gap, edit)
            if taken is None or taken.wait != 0:
                return room, None
            at = float(self.limiter.clock())
            stamp, generation = taken.stamp, taken.generation
            return room, Prepaid(to, at=at, stamp=stamp, generation=generation, judged=edit)
        return GO, None

    async def prepay(self, to: Address, priority: Priority, *, rank: int = OWN_VIEW) -> Prepaid:
        """Take the tokens of one message ``to`` a chat now (see ``Outgoing.prepay``)."""
        options, receipt = CallOptions(priority, rank=rank), Receipt()
        await self.admit(to, None, options, receipt=receipt)
        at = float(self.limiter.clock())
        return Prepaid(to, at=at, stamp=receipt.stamp, generation=receipt.generation)

    async def stamp(self, receipt: Receipt) -> None:
        """Telegram answered the call of ``receipt``: its entries count from now
        (best effort: left where taken, they still count from the take)."""
        stamp = receipt.take()
        if stamp is None:
            return
        with survived(log, "flood limiter: entries of %s left where taken", stamp.name):
            await self.limiter.stamp(stamp)

    async def settle(self, ticket: Prepaid) -> None:
        """Give the tokens of ``ticket`` back if no call used them (and the edit
        lease taken with them: what the message shows is unknown)."""
        if not ticket.used:
            ticket.used = True
            await self.refund(ticket, self._held(ticket))
            if ticket.judged is not None:
                with survived(log, "the edit lease of %s not given back; it lapses", ticket.to):
                    await self.limiter.forget(ticket.to, ticket.owner)

    async def hold(self, to: Address, seconds: float, *, generation: int | None = None) -> None:
        """A 429 for a write ``to`` a chat: no token before ``seconds`` are over,
        and the group's budget learns from it (#24), once per burst (#38)."""
        what = "flood limiter: chat %s not held after a 429; its retry waits retry_after itself"
        with survived(log, what, to.chat):
            await self.limiter.hold(to, seconds)  # straight to Redis
        what = "flood limiter: a 429 in chat %s not learnt from; the hold keeps the chat waiting"
        with survived(log, what, to.chat):
            await self.limiter.refused(to, admitted=generation, retry_after=seconds)

    async def refund(self, ticket: Prepaid, held: float = 0.0) -> None:
        # a lost refund only slows the next message a little
        with survived(log, "flood limiter: a token of chat %s not refunded", ticket.to.chat):
            await self.limiter.refund(ticket.to, held=held)

    async def admit(
        self,
        to: Address | None,
        digests: tuple[str | None, str] | None,
        options: CallOptions,
        receipt: Receipt | None = None,
    ) -> bool:
        """Wait for the token of a write ``to`` a chat (and an edit's lease, for
        ``receipt.owner``); False when the edit would change nothing or go
        backwards.  ``receipt`` gets the entries taken."""
        receipt = receipt if receipt is not None else Receipt()
        receipt.stamp, receipt.generation = None, None
        chat_id = to.chat if to is not None else None  # None: the overall window only
        edit = _ticket(to, digests, options.version, receipt.owner) if to is not None else None
        prepaid = options.prepaid
        if prepaid is not None and not prepaid.used and prepaid.to.chat == chat_id:
            prepaid.used = True  # the tokens are ours already
            done = await self._use_prepaid(prepaid, edit, receipt)
            if done is not None:
                receipt.stamp = prepaid.stamp if done else None
                receipt.generation = prepaid.generation
                return done
        waited = 0.0
        place = Place()
        again = False  # asked once: a window known full is asked again (#39)
        try:
            while True:
                if edit is not None:
                    verdict = await self.limiter.admit_edit(edit, again=again)
                else:
                    # Outgoing stamps the answer (#37)
                    verdict = await self.limiter.take(to, tracked=True, again=again)
                again = True
                delay = verdict.wait
                if delay in (NOOP, STALE):  # shows this, or a newer version, already
                    return False
                if waited >= self.max_wait * LAST_RESORT:
                    log.warning(
                        "flood limiter: gave up waiting after %.0f s (chat %s)", waited, chat_id
                    )
                    return True
                if delay == BUSY:  # not the windows it waits for
                    self._leave(chat_id, place)
                    waited += await self._busy()
                    continue
                if delay <= 0:
                    receipt.stamp, receipt.generation = verdict.stamp, verdict.generation
                    return self._took(verdict, receipt)
                self.stats.waits += 1
                if waited >= self.max_wait:
                    # out of patience: no turn in a line to wait for any more, but
                    # the tokens all the same (a window never takes one too many)
                    self._leave(chat_id, place)
                    await self.sleep(delay)
                    waited += delay
                    continue
                if verdict.overall and not place.overall:
                    t0 = self.clock()
                    await self.line.acquire(options.priority)  # our turn: ask again at once
                    place.overall = True
                    waited += self.clock() - t0
                    continue
                self._leave(chat_id, place, chat=False)  # only our chat is short
                waited += await self._chat_wait(chat_id, options.rank, delay, place)
        finally:
            self._leave(chat_id, place)

    def _leave(self, chat_id: int | None, place: Place, *, chat: bool = True) -> None:
        """Pass on the overall line (and, ``chat``, the chat's) that the call holds."""
        if place.overall:
            place.overall = False
            self.line.release()
        if chat and place.chat and chat_id is not None:
            place.chat = False
            self.chats.release(chat_id)

    async def _chat_wait(self, chat_id: int | None, rank: int, delay: float, place: Place) -> float:
        """A call short of its chat's own windows waits in the chat's line by
        ``rank`` (#24 item 2): not yet its head, it queues; the head sleeps
        ``delay`` out and passes the line to a better call that came meanwhile.
        The seconds waited."""
        if chat_id is None:  # (only the overall bucket: never short here)
            await self.sleep(delay)
            return delay
        line = self.chats.line(chat_id)
        waited = 0.0
        if not place.chat and line.idle:
            # the head at once: the wait just told holds (asking again now
            # would cost a script for the same answer, #39)
            await line.acquire(rank)
            place.chat = True
        if place.chat:
            await self.sleep(delay)
            waited = delay
            if not line.outranked(rank):
                return waited
            place.chat = False  # the better call asks first; we queue behind it
            line.release()
        t0 = self.clock()
        await line.acquire(rank)
        place.chat = True
        return waited + self.clock() - t0

    async def _use_prepaid(
        self, prepaid: Prepaid, edit: EditTicket | None, receipt: Receipt
    ) -> bool | None:
        """:meth:`admit` with the prepaid token; None: it was held too long (or
        the message's lease is another call's), went back, and the call takes
        a fresh one."""
        if self._fresh(prepaid):
            if edit is None:
                return True
            if edit == prepaid.judged:  # judged with its take: its lease is ours (#39)
                return self._took(Verdict(0.0), receipt)
            verdict = await self.limiter.admit_edit(replace(edit, prepaid=True))
            if verdict.wait in (NOOP, STALE):  # a no-op edit costs nothing
                await self.refund(prepaid, self._held(prepaid))
                return False
            if verdict.wait != BUSY:
                return self._took(verdict, receipt)
        await self.refund(prepaid, self._held(prepaid))
        return None

    def _held(self, prepaid: Prepaid) -> float:
        """Seconds since the ticket's tokens were paid (0: unknown)."""
        if prepaid.at is None:
            return 0.0
        return max(0.0, float(self.limiter.clock()) - prepaid.at)

    def _fresh(self, prepaid: Prepaid) -> bool:
        """The ticket's tokens were paid so recently that they still count now."""
        return self._held(prepaid) <= self.limiter.config.prepaid_ttl

    async def _busy(self) -> float:
        """Another call's edit of the message is in flight: wait a moment."""
        self.stats.busy += 1
        poll = self.limiter.config.lease_poll
        await self.sleep(poll)
        return poll

    @staticmethod
    def _took(verdict: Verdict, receipt: Receipt) -> bool:
        if receipt.owner and verdict.wait == 0:
            receipt.held = True
        return True


def _ticket(
    to: Address, digests: tuple[str | None, str] | None, version: str, owner: str
) -> EditTicket | None:
    """What the limiter judges of an edit of message ``to`` (None: not an edit,
    a send takes its tokens only)."""
    if to.message is None or digests is None:
        return None
    return EditTicket(to, digests[0], digests[1], version, owner, tracked=True)


class ChatTurns:
    """Limited calls to one chat leave this process one at a time, and a 429
    is seen by the calls admitted before it (#28): in its turn, a call that
    finds :meth:`refusals` moved on since its admission is admitted again,
    under the hold, instead of drawing a 429 of its own.  A 429 is counted
    once its hold is in Redis."""

    def __init__(self) -> None:
        self._locks: dict[int, tuple[asyncio.Lock, int]] = {}
        self._refusals: dict[int, int] = {}

    def refusals(self, chat_id: int) -> int:
        """429s this process received for ``chat_id`` so far (a 429 is rare: kept)."""
        return self._refusals.get(chat_id, 0)

    def refused(self, chat_id: int) -> None:
        self._refusals[chat_id] = self.refusals(chat_id) + 1

    @contextlib.asynccontextmanager
    async def turn(self, chat_id: int) -> AsyncIterator[None]:
        """The chat's turn."""
        lock, users = self._locks.get(chat_id, (asyncio.Lock(), 0))
        self._locks[chat_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[chat_id]
            if users <= 1:  # nobody else waits: forget the lock
                del self._locks[chat_id]
            else:
                self._locks[chat_id] = (lock, users - 1)
