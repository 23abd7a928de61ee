"""Every outgoing Bot API call passes through :class:`Outgoing`, an aiogram
session request middleware (``install(bot, limiter)``):

* **no-op edits dropped** -- an edit that changes nothing the message shows is
  answered ``True`` without calling Telegram ("message is not modified": too).
* **flood limits** -- a call that puts a message into a chat (:func:`is_limited`)
  first takes its token from the shared windows (:class:`FloodGate`) or uses
  the one prepaid for it (:meth:`Outgoing.prepay`); one call to a chat at a
  time (:class:`ChatTurns`).
* **429** -- the chat's windows held for ``retry_after`` in every process, then
  at most ``max_retries`` retries -- with the message's newest content
  (:attr:`CallOptions.newest`), never the refused stale edit and then the newer.
* **403**, a **400 with ``migrate_to_chat_id``** (#38, never retried) -- told as
  events and re-raised (:data:`CLOSED`; ``Delivery`` answers ``None``).

What a message shows is kept as two short digests (text, keyboard): with a
limiter, in Redis, judged in the script that takes the token -- shared, so no
process drops as a no-op an edit another's made needed; without one, in an
in-process LRU (:mod:`telegram_bot.delivery.shown`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
import uuid
from dataclasses import replace
from functools import partial
from typing import Any, cast

from aiogram import Bot
from aiogram.client.session.middlewares.base import BaseRequestMiddleware, NextRequestMiddlewareType
from aiogram.exceptions import (
    TelegramBadRequest,
    TelegramForbiddenError,
    TelegramMigrateToChat,
    TelegramRetryAfter,
)
from aiogram.methods import Response, TelegramMethod
from aiogram.methods.base import TelegramType
from aiogram.types import Message

from engine.clock import Clock
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.events import Events, Forbidden, Kicked, Migrated, PrivateForbidden
from telegram_bot.delivery.flood.gate import (
    GO,
    URGENT,
    CallOptions,
    ChatTurns,
    FloodGate,
    OutgoingStats,
    Prepaid,
    Receipt,
    Sleep,
)
from telegram_bot.delivery.flood.limiter import FloodLimiter, Headroom
from telegram_bot.delivery.shown import EDITS, ShownStore, content_digests
from telegram_bot.delivery.waiting_line import OWN_VIEW, Priority

log = logging.getLogger(__name__)

CLOSED = (TelegramForbiddenError, TelegramMigrateToChat)
"""What a call to a chat closed to the bot raises: a 403, or a 400 saying the
group lives on under a new id (#38).  Neither is worth a retry."""


_FORBIDDEN_TEXTS = (
    ("bot can't initiate conversation", Forbidden.NOT_STARTED),
    ("bot was blocked by the user", Forbidden.BLOCKED),
    ("user is deactivated", Forbidden.DEACTIVATED),
)


def forbidden_kind(description: str) -> Forbidden:
    """The kind of a private chat's 403 from Telegram's ``description``."""
    text = description.lower()
    return next((kind for part, kind in _FORBIDDEN_TEXTS if part in text), Forbidden.OTHER)


MAX_WAIT = 120.0
"""Seconds of limiter waits after which a call leaves the lines (:class:`FloodGate`)."""
MEMORY_SIZE = 20_000
"""Messages whose content is remembered without a limiter (:class:`telegram_bot.delivery.shown.LocalMemory`)."""

NOT_MODIFIED = "message is not modified"
_FORWARDS = frozenset({"copyMessage", "copyMessages", "forwardMessage", "forwardMessages"})


def address_of(method: TelegramMethod[Any]) -> Address | None:
    """Where a call writes (None: no chat of its own): the message an edit
    changes, the member an ephemeral send or edit goes to."""
    chat = getattr(method, "chat_id", None)
    if not isinstance(chat, int):
        return None
    name = method.__api_method__
    receiver: Any = None
    message = getattr(method, "message_id", None) if name in EDITS else None
    if name.startswith("editEphemeralMessage"):
        receiver, message = method.receiver_user_id, method.ephemeral_message_id  # type: ignore[attr-defined]
    elif name == "sendMessage" and method.ephemeral_message_parameters is not None:  # type: ignore[attr-defined]
        receiver = method.ephemeral_message_parameters.receiver_user_id  # type: ignore[attr-defined]
    message = message if isinstance(message, int) else None
    return Address(chat, message, int(receiver) if receiver is not None else None)


def is_limited(api_method: str) -> bool:
    """Does a call put a message into a chat (and so count against the flood limits)?"""
    if api_method.startswith("send"):
        return api_method != "sendChatAction"
    # Ephemeral messages (issue 14): the Bot API docs say nothing of how their sends
    # and edits count; they count like any message to that group (the safe reading,
    # as the fake Bot API does).
    edits = ("editMessage", "editEphemeralMessage")
    return api_method.startswith(edits) or api_method in _FORWARDS


class Outgoing(BaseRequestMiddleware):
    """The request middleware (see the module docstring); ``limiter`` None: no
    flood limiting, an in-process memory of what messages show."""

    def __init__(
        self,
        limiter: FloodLimiter | None = None,
        *,
        max_retries: int = 3,
        sleep: Sleep = asyncio.sleep,
        clock: Clock = time.monotonic,
    ) -> None:
        self.limiter = limiter
        self.events = Events()  # what it learns, for the layers above (#39)
        self._migrated: set[int] = set()  # old chat ids told of here
        self.max_retries = max_retries
        self.sleep = sleep
        self.stats = OutgoingStats()
        self.shown = ShownStore(limiter, MEMORY_SIZE)
        self._owner = f"{uuid.uuid4().hex[:12]}."  # edit leases: this process ...
        self._calls = itertools.count()  # ... and its call
        self.turns = ChatTurns()  # limited calls to a chat: one at a time (#28)
        self.gate = (
            FloodGate(limiter, sleep=sleep, clock=clock, max_wait=MAX_WAIT, stats=self.stats)
            if limiter is not None
            else None
        )

    # ------------------------------------------------------------ the middleware
    async def __call__(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
    ) -> Response[TelegramType]:
        """A call made directly (``bot(method)``): urgent, its own tokens."""
        return await self._handle(make_request, bot, method, URGENT)

    async def _handle(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
        options: CallOptions,
    ) -> Response[TelegramType]:
        # its edit lease (held already when judged with its prepaid take, #39),
        # and its entries to move when Telegram answers (#28)
        prepaid = options.prepaid
        receipt = Receipt(prepaid.owner if prepaid is not None and prepaid.owner else self.owner())
        attempt = 0
        while True:  # the call, then after each 429 its retry (the newest content)
            to, digests = address_of(method), _digests(bot, method)
            key, limited = _message(to), is_limited(method.__api_method__)
            # 429s of the chat counted before the admission (#28): one since, in
            # its turn, and the call is admitted again -- under that 429's hold
            seen = self.turns.refusals(to.chat) if to is not None else 0
            if limited and not await self._admit(to, digests, options, receipt):
                self.stats.noop += 1  # shows that already, or a newer version
                return _done()
            try:
                if limited and to is not None:  # one at a time to a chat (#28)
                    async with self.turns.turn(to.chat):
                        again = self.turns.refusals(to.chat) != seen  # a 429 since admitted
                        if again and not await self._admit(to, digests, options, receipt):
                            self.stats.noop += 1
                            return _done()
                        response = await self._send(make_request, bot, method, to, receipt)
                else:
                    response = await self._send(make_request, bot, method, to, receipt)
            except TelegramRetryAfter as exc:
                attempt += 1
                if attempt > self.max_retries:
                    raise
                log.warning("429 on %s: retry after %s s", method.__api_method__, exc.retry_after)
                await self.sleep(exc.retry_after)
                # the newest content asked of the message meanwhile (never the
                # refused stale edit and then the newer one), with the version it
                # renders: one another process overtook meanwhile is refused
                fresh = options.newest() if options.newest is not None else None
                method, version = fresh if fresh is not None else (method, options.version)
                options = CallOptions(options.priority, None, options.newest, version)
                continue
            except _NotModified:
                self.stats.noop += 1  # the digest admitted above is what it shows
                await self._answered(key, receipt)
                return _done()
            break
        await self._answered(key, receipt)
        name = method.__api_method__
        if name in EDITS:
            self.stats.edited += 1
        elif is_limited(name):
            self.stats.sent += 1
        result: Any = response  # the chain yields the result (see _done)
        if name == "sendMessage" and to is not None and isinstance(result, Message):
            assert digests is not None
            assert digests[0] is not None
            sent = replace(to, message=result.ephemeral_message_id or result.message_id)
            await self.shown.remember(sent, digests[0], digests[1])
        return response

    async def _answered(self, key: Address | None, receipt: Receipt) -> None:
        """Telegram answered: the edit lease goes, the entries count from now."""
        await self.shown.release(key, receipt)
        await self._stamp(receipt)

    async def _stamp(self, receipt: Receipt) -> None:
        if self.gate is not None:
            await self.gate.stamp(receipt)

    async def _send(
        self,
        make_request: NextRequestMiddlewareType[TelegramType],
        bot: Bot,
        method: TelegramMethod[TelegramType],
        to: Address | None,
        receipt: Receipt,
    ) -> Response[TelegramType]:
        """The call; a "not modified" raises :class:`_NotModified`, any other
        failure is :meth:`_failed`."""
        key = _message(to)
        try:
            return await make_request(bot, method)
        except asyncio.CancelledError:
            self.shown.forget_later(key, receipt)
            raise
        except TelegramBadRequest as exc:
            if key is not None and NOT_MODIFIED in exc.message:
                raise _NotModified from exc
            await self._failed(exc, method.__api_method__, to, receipt)
            raise
        except Exception as exc:
            await self._failed(exc, method.__api_method__, to, receipt)
            raise

    async def _failed(
        self,
        exc: Exception,
        name: str,
        to: Address | None,
        receipt: Receipt,
    ) -> None:
        """The call failed: what the message shows is unknown; a 429 holds the
        chat and teaches the group's budget (#24, #38); a 403 or a group moved
        (#38) is told as an event.  But after a 429 -- a refusal Telegram did
        not count -- the call's entries count from now."""
        if isinstance(exc, TelegramRetryAfter):
            self.stats.retry_after += 1
            if to is not None and is_limited(name):
                try:
                    if self.gate is not None:
                        await self.gate.hold(to, exc.retry_after, generation=receipt.generation)
                finally:
                    # before the chat's turn passes on (#28): the next call sees it --
                    # and only once the hold is in Redis: a call that counted this
                    # refusal before its admission was admitted under the hold
                    self.turns.refused(to.chat)
        elif isinstance(exc, TelegramForbiddenError):
            self.stats.forbidden += 1
            if to is not None:
                kind = forbidden_kind(exc.message)
                self.events.put(PrivateForbidden(to.chat, kind) if to.chat > 0 else Kicked(to.chat))
        elif isinstance(exc, TelegramMigrateToChat) and to and to.chat not in self._migrated:
            self._migrated.add(to.chat)  # told once here
            self.events.put(Migrated(to.chat, exc.migrate_to_chat_id))
        await self.shown.forget(_message(to), receipt)
        if not isinstance(exc, TelegramRetryAfter):  # a 429 is a refusal it did not count
            await self._stamp(receipt)

    def owner(self) -> str:
        """A new call's name as the owner of an edit lease (unique per call)."""
        return f"{self._owner}{next(self._calls)}"

    # ------------------------------------------------------------ limiter & memory
    async def headroom(self, to: Address, gap: float = 0.0) -> Headroom:
        """:meth:`FloodLimiter.headroom` (without a limiter: go)."""
        if self.gate is None:
            return GO
        return await self.gate.headroom(to, gap)

    async def take_if_room(
        self,
        to: Address,
        gap: float = 0.0,
        edit: tuple[Bot, TelegramMethod[Any], str] | None = None,
    ) -> tuple[Headroom, Prepaid | None]:
        """:meth:`headroom` and, with nothing to wait for, the message's tokens
        in the same look (#39 point 1): for the call made with them, as
        :meth:`prepay` (without a limiter: go, nothing taken).  ``edit``: the
        bot, the edit of ``to`` to make with them and the version it renders
        -- judged in the same look, its lease taken for the call (to be made
        under the message's lock: another call of it would wait on the lease)."""
        if self.gate is None:
            return GO, None
        digests = _digests(edit[0], edit[1]) if edit is not None else None
        if edit is None or digests is None:
            return await self.gate.take_if_room(to, gap)
        return await self.gate.take_if_room(to, gap, digests, edit[2], self.owner())

    async def call(
        self, bot: Bot, method: TelegramMethod[TelegramType], options: CallOptions = URGENT
    ) -> TelegramType:
        """``bot(method)`` with explicit ``options`` (a direct call is urgent and
        takes its own token), through the session's later middlewares."""
        session = bot.session
        chain: Any = partial(session.make_request, timeout=None)
        after = list(session.middleware)
        for inner in reversed(after[after.index(self) + 1 :] if self in after else []):
            chain = partial(inner, chain)
        result: Any = await self._handle(chain, bot, method, options)
        return cast(TelegramType, result)

    async def prepay(
        self, to: Address, priority: Priority = Priority.URGENT, *, rank: int = OWN_VIEW
    ) -> Prepaid:
        """Take the token of one message ``to`` a chat now, waiting like any call,
        for the call made with it (``CallOptions(prepaid=ticket)``): a coalesced
        update takes its token before its message's lock and newest content."""
        if self.gate is None:
            return Prepaid(to)  # nothing taken: nothing to give back
        return await self.gate.prepay(to, priority, rank=rank)

    async def settle(self, ticket: Prepaid) -> None:
        """Give the tokens of ``ticket`` back if no call used them."""
        if self.gate is not None:
            await self.gate.settle(ticket)

    async def _admit(
        self,
        to: Address | None,
        digests: Digests | None,
        options: CallOptions,
        receipt: Receipt,
    ) -> bool:
        """Wait for the flood tokens (and an edit's lease); False when the edit
        would change nothing."""
        if self.gate is not None:
            return await self.gate.admit(to, digests, options, receipt)
        key = _message(to)
        if key is not None and digests is not None:
            return self.shown.memory.admit(key, *digests, options.version)
        return True


class _NotModified(Exception):
    """Telegram answered "message is not modified": the edit is a success."""


Digests = tuple[str | None, str]


def _digests(bot: Bot, method: TelegramMethod[Any]) -> Digests | None:
    """The digests of what a send or an edit to a chat shows (None for other calls)."""
    name = method.__api_method__
    if not isinstance(getattr(method, "chat_id", None), int):
        return None
    return content_digests(bot, method) if name == "sendMessage" or name in EDITS else None


def _message(to: Address | None) -> Address | None:
    """``to`` if it names a message (an edit's), else None."""
    return to if to is not None and to.message is not None else None


def _done() -> Any:
    """What a dropped edit answers: ``True``, as for an inline message.  (aiogram's
    middleware chain is annotated with ``Response`` but carries the call's result:
    ``AiohttpSession.make_request`` returns ``response.result``.)"""
    return True


def find_outgoing(bot: Bot) -> Outgoing | None:
    """The :class:`Outgoing` installed on the bot's session, if any."""
    for middleware in bot.session.middleware:
        if isinstance(middleware, Outgoing):
            return middleware
    return None


__all__ = [
    "CLOSED",
    "URGENT",
    "CallOptions",
    "Forbidden",
    "Outgoing",
    "OutgoingStats",
    "Prepaid",
    "find_outgoing",
    "forbidden_kind",
    "install",
    "is_limited",
]


def install(bot: Bot, limiter: FloodLimiter | None = None, **options: Any) -> Outgoing:
    """Put an :class:`Outgoing` on the bot's session (once) and return it."""
    found = find_outgoing(bot)
    if found is not None:
        return found
    outgoing = Outgoing(limiter, **options)
    bot.session.middleware(outgoing)
    return outgoing
