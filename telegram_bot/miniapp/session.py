"""One open page's live channel (#42): a WebSocket, bound to the Telegram user
its first message proves (:mod:`telegram_bot.miniapp.auth`), following one
table (:class:`telegram_bot.miniapp.hub.LiveHub`) and sending the page's moves
through the use case of a hand button.

The protocol, one JSON object a frame (``t`` its type):

page -> server
    ``{"t": "hello", "init": <initData>, "table": <id or "">}`` first (within
    :data:`HELLO_WITHIN` s), then ``{"t": "move", "id": <request id>, "v":
    <version shown>, "stamp": <its stamp>, "a": <action text>}`` or
    ``{"t": "ping"}``.
server -> page
    ``{"t": "hello", "user", "locale", "labels", "faces"}`` (the page's
    words, the face ranks in its language), then
    ``{"t": "view", "view": {...}}`` (:func:`telegram_bot.views.page.page_view`,
    every version newer than the last one sent, never an older one),
    ``{"t": "result", "id", "ok", "status", "version", "text"}`` for each move
    (``version``: the one it made; ``text``: why it was refused, in the
    reader's language), ``{"t": "none"}`` (no table
    to show), ``{"t": "gone"}`` (the table is no more), ``{"t": "refused",
    "reason"}`` (init data refused, or the table not his to see; then closed),
    ``{"t": "pong"}``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tables.faults import expected_fault
from tables.model import ServiceUnavailable
from telegram_bot.miniapp.auth import InitDataRefused, PageUser, check_init_data
from telegram_bot.miniapp.hub import LiveHub
from telegram_bot.publishing.changes import Shows
from telegram_bot.usecases.page import PageTables
from telegram_bot.usecases.press import PageMove, PressOutcome, PressStatus
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator
from telegram_bot.views.miniapp import replay_start
from telegram_bot.views.page import TableRead, faces, may_watch, page_labels, page_view

log = logging.getLogger(__name__)

HELLO_WITHIN = 10.0
"""Seconds a page has to say who it is after it connects."""
MAX_FRAME = 8192
"""Bytes of one frame from a page (a move is a few dozen)."""
FORGET_ABOVE = 4096
"""Players a :class:`MoveLimit` remembers before it forgets the idle ones."""
PAGES_PER_USER = 8
"""Pages one user may have open on one process (a ninth is refused)."""
CLOSE_REFUSED = 4401
CLOSE_AGAIN = 1013  # "try again later": the page reconnects
WAITING_FOR_HELLO = 256
"""Sockets of one process not yet proven by their init data: more are closed
at once (each would be held ``HELLO_WITHIN`` s before any check)."""
MAX_VERSION = 2**53  # a version a page may name (a JavaScript integer)
"""The close code of a page refused (its init data, or a table not its own)."""
TABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
REQUEST_ID = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
ACTION = re.compile(r"^[A-Z0-9]{1,64}$")

ALERTS = {
    PressStatus.STALE: texts.STALE,
    PressStatus.NOT_SEATED: texts.REFUSALS["not_seated"],
    PressStatus.AI_CONTROLLED: texts.REFUSALS["ai_controlled"],
    PressStatus.GAME_OVER: texts.REFUSALS["game_over"],
}
"""The text of each refused move without a reason of its own (as a button's
alert, :mod:`telegram_bot.handlers.game`)."""


def said(outcome: PressOutcome, _: Translator) -> str | None:
    """Why a page's move was refused (None: it was not)."""
    if outcome.ok:
        return None
    if outcome.error is not None:
        return texts.refusal(outcome.error, _)
    if outcome.reason is not None:
        return _(texts.MOVE_REFUSALS[outcome.reason], **outcome.reason_args)
    return _(ALERTS.get(outcome.status, texts.MOVE_NOT_POSSIBLE))


class MoveLimit:
    """A player's page moves in this process: at most ``moves`` in any
    ``window`` seconds, whichever of his pages they come from.  The fleet's
    own count decides (:meth:`PageTables.move_allowed`, one script); this one
    only while Redis does not answer it."""

    def __init__(self, moves: int, window: float, clock: Callable[[], float] = time.monotonic):
        self.moves, self.window, self.clock = moves, window, clock
        self._recent: dict[int, deque[float]] = {}

    def allow(self, user: int) -> bool:
        now = self.clock()
        if len(self._recent) > FORGET_ABOVE:
            self.forget_idle()
        recent = self._recent.setdefault(user, deque())
        while recent and recent[0] <= now - self.window:
            recent.popleft()
        if len(recent) >= self.moves:
            return False
        recent.append(now)
        return True

    def forget_idle(self) -> None:
        now = self.clock()
        for user in [u for u, r in self._recent.items() if not r or r[-1] <= now - self.window]:
            del self._recent[user]


@dataclass
class PageConfig:
    """What a page's channel needs of the settings."""

    token: str
    max_age: float
    clock: Callable[[], float] = time.time
    renew_every: float = 10.0
    """Seconds between two renewals of this process's open pages in Redis
    (#42 point 6: a third of their ``MINIAPP_PAGE_TTL``)."""


@dataclass(eq=False)
class PageSession:
    """One page: its WebSocket, its user, the table it follows, the version it
    shows (:meth:`show` never sends an older one)."""

    ws: web.WebSocketResponse
    user: PageUser
    locale: str
    shown: int = 0
    table: str = ""
    closed: bool = False
    page: str = field(default_factory=lambda: secrets.token_hex(6))
    """Its id among its user's pages (#42 point 6: his open pages, fleet-wide)."""
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def show(self, loaded: TableRead | None, *, again: bool = False) -> None:
        """Send the page ``loaded`` as its user may see it, if newer than what it
        shows (``again``: also the same version, after a refused move)."""
        async with self._lock:
            if self.closed or self.ws.closed:
                return
            if loaded is None:  # its table is gone: so is the page's channel
                self.closed = True
                await self._send({"t": "gone", "table": self.table})
                await self.ws.close()
                return
            if loaded.version < self.shown or (loaded.version == self.shown and not again):
                return
            if not may_watch(loaded.table, self.user.id):
                self.closed = True
                await self._send({"t": "refused", "reason": "not_watchable"})
                await self.ws.close(code=CLOSE_REFUSED)
                return
            self.shown = loaded.version
            await self._send({"t": "view", "view": page_view(loaded, self.user.id, self.locale)})

    async def send(self, frame: dict[str, Any]) -> None:
        async with self._lock:
            await self._send(frame)

    async def _send(self, frame: dict[str, Any]) -> None:
        with contextlib.suppress(ConnectionError, RuntimeError):  # a page gone meanwhile
            await self.ws.send_str(json.dumps(frame, separators=(",", ":"), ensure_ascii=False))


@dataclass
class PageChannel:
    """Every page's live channel in this process: the WebSocket handler."""

    config: PageConfig
    cases: PageTables
    hub: LiveHub
    publisher: Shows
    limit: MoveLimit
    sessions: set[PageSession] = field(default_factory=set)
    moves_refused: int = 0  # by the flood limit (tests read it)
    waiting: int = 0  # sockets not yet proven (their hello awaited)

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(heartbeat=20.0, max_msg_size=MAX_FRAME)
        await ws.prepare(request)
        session = None
        if self.waiting >= WAITING_FOR_HELLO:  # a flood of unproven sockets
            await ws.close(code=CLOSE_AGAIN)
            return ws
        try:
            self.waiting += 1
            try:
                session = await self._hello(ws)
            finally:
                self.waiting -= 1
            if session is not None:
                await self._follow(session)
        finally:
            if session is not None:
                self.sessions.discard(session)
            await ws.close()
        return ws

    async def _hello(self, ws: web.WebSocketResponse) -> PageSession | None:
        """The page's first frame: its user proved, its table chosen and joined."""
        try:
            msg = await ws.receive(timeout=HELLO_WITHIN)
        except TimeoutError:
            return None
        hello = _frame(msg)
        if hello is None or hello.get("t") != "hello":
            return None
        try:
            user = check_init_data(
                self.config.token,
                str(hello.get("init") or ""),
                max_age=self.config.max_age,
                now=self.config.clock(),
            )
        except InitDataRefused as e:
            log.info("a page refused: %s", e.reason)
            await ws.send_str(json.dumps({"t": "refused", "reason": e.reason}))
            await ws.close(code=CLOSE_REFUSED)
            return None
        start = user.start_param or ""
        if replay_start(start) is not None:  # a replay's link: the page shows no table
            start = ""
        asked = str(hello.get("table") or "") or start
        if asked and not TABLE_ID.match(asked):
            asked = ""
        if sum(1 for s in self.sessions if s.user.id == user.id) >= PAGES_PER_USER:
            await ws.send_str(json.dumps({"t": "refused", "reason": "too_many_pages"}))
            await ws.close(code=CLOSE_REFUSED)
            return None
        session = PageSession(ws, user, "en")
        self.sessions.add(session)  # counted from now on (his pages opened at once too)
        try:
            session.locale = await self.cases.locale(user.id, user.language)
            table = await self.cases.table_of(user.id, asked or None)
        except ServiceUnavailable:
            table = asked or None
            if table is None:  # not "no table of his": unknown now, asked again
                self.sessions.discard(session)
                await ws.close(code=CLOSE_AGAIN)
                return None
        except BaseException:
            self.sessions.discard(session)
            raise
        if table is None:
            self.sessions.discard(session)
            await session.send({"t": "none"})
            return None
        session.table = table
        locale = session.locale
        labels = page_labels(Translator(locale))
        hello = {"t": "hello", "user": user.id, "locale": locale, "labels": labels}
        hello["now"] = int(self.config.clock() * 1000)  # the page's timer: the server's clock
        await session.send({**hello, "faces": faces(locale)})
        return session

    async def _follow(self, session: PageSession) -> None:
        try:
            # #42 point 6: open before its first view -- his hand message waits
            # from now on, on every process, until his last page closes
            await self._opened(session)
            await self.hub.join(session.table, session)
            async for msg in session.ws:
                frame = _frame(msg)
                if frame is None:
                    continue
                if frame.get("t") == "move":
                    await self._move(session, frame)
                elif frame.get("t") == "ping":
                    await session.send({"t": "pong"})
        except ServiceUnavailable as e:
            log.warning("a page closed: %s", e)
        finally:
            session.closed = True
            self.sessions.discard(session)
            await self.hub.leave(session.table, session)
            await self._closed(session)

    async def _opened(self, session: PageSession) -> None:
        try:
            await self.cases.page_open(session.table, session.user.id, session.page)
        except ServiceUnavailable as e:  # his hand is edited as before; renewed later
            log.info("a page's presence not recorded now: %s", e)

    async def _closed(self, session: PageSession) -> None:
        """His hand message brought up to date if this was his last page on
        the table (#42 point 6); a failure leaves it to the presence's expiry."""
        try:
            change = await self.cases.page_closed(session.table, session.user.id, session.page)
            await self.publisher.show(change)
        except Exception as e:  # the page is gone either way; a sweep draws it
            trace = not expected_fault(e)
            log.warning("a closed page's hand not drawn: %s", e, exc_info=trace)

    async def keep_open(self, stop: asyncio.Event) -> None:
        """Renew this process's open pages in Redis every ``renew_every`` s until
        ``stop``: a process that dies renews them no more, and they expire."""
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.config.renew_every)
            if stop.is_set():
                return
            open_now = [s for s in list(self.sessions) if s.table and not s.closed]
            try:
                await self.cases.pages_open([(s.table, s.user.id, s.page) for s in open_now])
            except Exception as e:  # the next round tries again; expiry is ttl away
                log.warning("open pages not renewed: %s", e, exc_info=not expected_fault(e))
            for session in open_now:  # closed meanwhile: not left open by the renewal
                if session.closed:
                    await self._closed(session)

    async def _allowed(self, user: int) -> bool:
        """One more page move of ``user``'s within his flood limit: counted over
        the fleet (one script), by this process while Redis does not answer."""
        fleet = await self.cases.move_allowed(user)
        return self.limit.allow(user) if fleet is None else fleet

    async def _move(self, session: PageSession, frame: dict[str, Any]) -> None:
        rid, action = str(frame.get("id", "")), str(frame.get("a", ""))
        version, stamp = frame.get("v"), str(frame.get("stamp", ""))
        _ = Translator(session.locale)
        if (
            not REQUEST_ID.match(rid)
            or not ACTION.match(action)
            or type(version) is not int  # not a bool either
            or not 0 <= version <= MAX_VERSION
        ):
            await session.send({"t": "result", "id": rid[:40], "ok": False, "status": "bad"})
            return
        if not await self._allowed(session.user.id):
            self.moves_refused += 1
            text = _(texts.PAGE_TOO_FAST)
            await session.send(
                {"t": "result", "id": rid, "ok": False, "status": "flood", "text": text}
            )
            return
        move = PageMove(session.user.id, session.table, version, stamp, action, f"wa{rid}")
        try:
            outcome = await self.cases.move(move)  # through a failover, as a press (#40)
        except ServiceUnavailable:  # down, and no promotion came within the wait
            text = _(texts.UNAVAILABLE)
            await session.send(
                {"t": "result", "id": rid, "ok": False, "status": "down", "text": text}
            )
            return
        result: dict[str, Any] = {
            "t": "result",
            "id": rid,
            "ok": outcome.ok,
            "status": outcome.status.value,
        }
        if outcome.version is not None:  # the version his move made
            result["version"] = outcome.version
        refusal = said(outcome, _)
        if refusal is not None:
            result["text"] = refusal
        await session.send(result)
        if outcome.status is not PressStatus.APPLIED:  # the table of now, from scratch
            with contextlib.suppress(ServiceUnavailable):  # the next write shows it
                await session.show(await self.cases.load(session.table), again=True)
        try:  # his hand message, the others', the group's table: as for a press
            await self.publisher.show(outcome.change)
        except Exception as e:  # a render's failure is not the page's: it stays open
            trace = not expected_fault(e)  # an outage: one line; a bug: its traceback
            log.warning("render after a page's move failed: %s", e, exc_info=trace)


def _frame(msg: Any) -> dict[str, Any] | None:
    if msg.type != WSMsgType.TEXT:
        return None
    try:
        data = json.loads(msg.data)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return None
    return data if isinstance(data, dict) else None
