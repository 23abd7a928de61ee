"""The Mini App's reads beside its live table (#42): a finished game's replay
and the player's own page, JSON over HTTP GET.

Each request proves its user as the live channel's first frame does: the
page's init data, in ``Authorization: tma <initData>`` (Telegram's documented
way to send it to a server), checked by :func:`.auth.check_init_data`
(signature, ``auth_date``) -- refused with 401 and nothing read otherwise.
A user reads only what the chat would show him: the replay of a game he
played (as ``/replay`` allows, else 403), and his own player page (it has no
user parameter to forge).  The reads go through the page's use cases
(:class:`telegram_bot.usecases.page.PageTables`); a user's reads are limited
like his moves (a replay replays the whole game through the rules).

``GET <path>/api/replay?table=<id>&game=<n>``
    :func:`telegram_bot.views.page_replay.replay_page`
``GET <path>/api/player``
    :func:`telegram_bot.views.page_player.player_page`
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from engine import EngineError
from engine.replay import replay_steps
from tables.model import LiveError, ServiceUnavailable
from telegram_bot.miniapp.auth import InitDataRefused, PageUser, check_init_data
from telegram_bot.miniapp.session import TABLE_ID, MoveLimit, PageConfig
from telegram_bot.usecases.page import PageTables
from telegram_bot.views.i18n import Translator
from telegram_bot.views.page_player import player_page
from telegram_bot.views.page_replay import replay_page
from telegram_bot.views.replay import EXPIRED, NOT_YOURS

log = logging.getLogger(__name__)

AUTH_SCHEME = "tma"
"""``Authorization: tma <initData>``."""
GAME = re.compile(r"^[0-9]{1,9}$")
"""A game's number (ASCII digits: ``str.isdigit`` takes ``²`` too)."""
KEPT_REPLAYS = 32
"""Replays drawn lately that are kept (as JSON), by game and language: a
record never changes, and a long game takes a fraction of a second of CPU to
draw (measured: a 455-step 2-deck game of four 30 ms and 250 kB of JSON, a
2964-step 4-deck game of six 650 ms and 2.7 MB, 91 kB gzipped)."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _json(data: Any, status: int = 200) -> web.Response:
    response = web.json_response(data, status=status, dumps=_dumps)
    response.headers["Cache-Control"] = "no-store"  # a user's own data: never kept
    response.enable_compression()
    return response


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@dataclass
class PageReads:
    """The reads' handlers (:meth:`routes`), over the page's use cases."""

    config: PageConfig
    cases: PageTables
    limit: MoveLimit
    _drawn: OrderedDict[tuple[str, int, str], str] = field(default_factory=OrderedDict)
    # a replay being drawn: the requests for it wait for that one draw
    _drawing: dict[tuple[str, int, str], asyncio.Future[str | None]] = field(default_factory=dict)
    # one draw at a time: a draw holds the GIL, and the live pages need the loop
    _draws: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(1))
    draws: int = 0  # replays drawn (tests read it)

    def routes(self) -> Mapping[str, Handler]:
        return {"replay": self.replay, "player": self.player}

    def _user(self, request: web.Request) -> PageUser:
        header = request.headers.get("Authorization", "")
        scheme, _sp, init = header.partition(" ")
        if scheme.lower() != AUTH_SCHEME:
            raise _refused("malformed")
        try:
            return check_init_data(
                self.config.token,
                init.strip(),
                max_age=self.config.max_age,
                now=self.config.clock(),
            )
        except InitDataRefused as e:
            log.info("a page's read refused: %s", e.reason)
            raise _refused(e.reason) from None

    async def _locale(self, user: PageUser) -> str:
        return await self.cases.locale(user.id, user.language)

    async def replay(self, request: web.Request) -> web.Response:
        user = self._user(request)
        table = request.query.get("table", "")
        game = request.query.get("game", "")
        if not TABLE_ID.match(table) or not GAME.match(game) or int(game) == 0:
            return _json({"error": "bad_request"}, 400)
        if not self.limit.allow(user.id):
            return _json({"error": "too_fast"}, 429)
        locale = "en"
        try:
            locale = await self._locale(user)
            record = await self.cases.replay(user.id, table, int(game))
        except LiveError as e:
            _ = Translator(locale)  # said as /replay says it
            if e.code == "not_allowed":
                return _json({"error": "not_allowed", "text": _(NOT_YOURS)}, 403)
            if e.code == "no_record":
                text = _(EXPIRED, days=self.cases.replay_days)
                return _json({"error": "no_record", "text": text}, 404)
            raise
        except ServiceUnavailable:
            return _json({"error": "unavailable"}, 503)
        drawn = await self._drawn_replay(record, locale)
        if drawn is None:  # pragma: no cover - the service writes valid records
            return _json({"error": "no_record"}, 404)
        you = next((i for i, (u, _n) in enumerate(record["seats"]) if u == user.id), None)
        body = '{"you":' + json.dumps(you) + "," + drawn[1:]  # his seat, then the rest as kept
        response = web.Response(text=body, content_type="application/json")
        response.headers["Cache-Control"] = "no-store"
        response.enable_compression()  # a long game's steps: megabytes, a few % gzipped
        return response

    async def _drawn_replay(self, record: Mapping[str, Any], locale: str) -> str | None:
        """The replay page of ``record`` in ``locale`` as JSON (its viewer's seat
        aside): drawn off the event loop -- the live pages keep moving
        meanwhile --, once however many ask for it at once, one draw at a time
        in the process, and kept (:data:`KEPT_REPLAYS`)."""
        key = (str(record["table"]), int(record["game"]), locale)
        drawn = self._drawn.get(key)
        if drawn is not None:
            self._drawn.move_to_end(key)
            return drawn
        pending = self._drawing.get(key)
        if pending is None:
            pending = asyncio.ensure_future(self._draw(key, record, locale))
            self._drawing[key] = pending
        return await asyncio.shield(pending)

    async def _draw(
        self, key: tuple[str, int, str], record: Mapping[str, Any], locale: str
    ) -> str | None:
        def draw() -> str:
            page = replay_page(replay_steps(record), -1, locale)
            del page["you"]
            return _dumps(page)

        try:
            async with self._draws:
                self.draws += 1
                drawn = await asyncio.to_thread(draw)
        except EngineError as e:  # pragma: no cover
            log.warning("replay %s not drawn: %s", key, e)
            return None
        finally:
            self._drawing.pop(key, None)
        self._drawn[key] = drawn
        while len(self._drawn) > KEPT_REPLAYS:
            self._drawn.popitem(last=False)
        return drawn

    async def player(self, request: web.Request) -> web.Response:
        user = self._user(request)
        if not self.limit.allow(user.id):
            return _json({"error": "too_fast"}, 429)
        try:
            locale = await self._locale(user)
            data = await self.cases.player(user.id)
        except ServiceUnavailable:
            return _json({"error": "unavailable"}, 503)
        now_ms = int(self.config.clock() * 1000)
        page = player_page(
            data.ratings,
            user.name,
            data.history,
            data.stats,
            data.recent,
            locale=locale,
            now_ms=now_ms,
        )
        return _json(page)


def _refused(reason: str) -> web.HTTPUnauthorized:
    return web.HTTPUnauthorized(
        text=_dumps({"error": "refused", "reason": reason}),
        content_type="application/json",
        headers={"Cache-Control": "no-store", "WWW-Authenticate": AUTH_SCHEME},
    )


__all__ = ["AUTH_SCHEME", "PageReads"]
