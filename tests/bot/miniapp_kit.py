"""The Mini App's pages in tests (#42): the bot's Mini App served on a port
of loopback, pages that open its live channel with init data signed as
Telegram signs it, read the frames it sends and send moves."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from telegram_bot.app import BotApp
from telegram_bot.miniapp.auth import sign_init_data
from telegram_bot.miniapp.server import mount
from tests.bot.e2e_kit import SAFETY, Harness

MINIAPP = {"miniapp_url": "https://miniapp.test/app/"}
"""The settings that turn the Mini App on (its URL is never fetched in tests)."""

CARD = re.compile(r"^(?:10|[2-9JQKA])[CDHS]$|^JK$")
_ids = itertools.count(1)


def init_data(
    token: str, user: int, name: str = "", *, age: float = 5.0, lang: str = "en", **extra: object
) -> str:
    """Init data for ``user`` signed with ``token`` ``age`` seconds ago."""
    person = {"id": user, "first_name": name or f"U{user}", "language_code": lang}
    return sign_init_data(token, {"auth_date": int(time.time() - age), "user": person, **extra})


@contextlib.asynccontextmanager
async def serving(h: Harness | BotApp) -> AsyncIterator[str]:
    """The bot's Mini App (the harness's bot, or another bot process) on a free
    loopback port: its base URL (``.../app``)."""
    if isinstance(h, Harness):
        assert h.bot is not None
        h = h.bot.app
    assert h.page_server is not None, "run with **MINIAPP"
    root = web.Application()
    mount(root, "/app", h.page_server.web_app())
    runner = web.AppRunner(root)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    host, port = runner.addresses[0][:2]
    try:
        yield f"http://{host}:{port}/app"
    finally:
        await runner.cleanup()


@dataclass
class Page:
    """One open page: every frame it got, in order."""

    ws: aiohttp.ClientWebSocketResponse
    frames: list[dict[str, Any]] = field(default_factory=list)
    _new: asyncio.Event = field(default_factory=asyncio.Event)
    reader: asyncio.Task[None] | None = None

    async def _read(self) -> None:
        async for msg in self.ws:
            if msg.type == aiohttp.WSMsgType.TEXT:
                self.frames.append(json.loads(msg.data))
                self._new.set()
        self._new.set()

    @property
    def views(self) -> list[dict[str, Any]]:
        return [f["view"] for f in self.frames if f["t"] == "view"]

    @property
    def view(self) -> dict[str, Any] | None:
        views = self.views
        return views[-1] if views else None

    async def wait(self, check: Any, within: float = SAFETY) -> Any:
        """Until ``check()`` is truthy (its value), or the page closed: fail."""
        deadline = time.monotonic() + within
        while True:
            value = check()
            if value:
                return value
            assert not (self.ws.closed and self.reader is not None and self.reader.done()), (
                f"page closed: {self.frames[-3:]}"
            )
            left = deadline - time.monotonic()
            assert left > 0, f"waited in vain; last frames: {self.frames[-3:]}"
            self._new.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._new.wait(), min(left, 0.5))

    async def view_after(self, version: int) -> dict[str, Any]:
        view: dict[str, Any] = await self.wait(
            lambda: (v := self.view) is not None and v["version"] > version and v
        )
        return view

    async def move(
        self, action: str, view: dict[str, Any] | None = None, rid: str = ""
    ) -> dict[str, Any]:
        """Send ``action`` as drawn on ``view`` (default: the last one); its result."""
        view = view or self.view
        assert view is not None
        rid = rid or f"m{next(_ids)}"
        await self.ws.send_json(
            {"t": "move", "id": rid, "v": view["version"], "stamp": view["stamp"], "a": action}
        )
        return await self.result(rid)

    async def result(self, rid: str) -> dict[str, Any]:
        result: dict[str, Any] = await self.wait(
            lambda: next((f for f in self.frames if f["t"] == "result" and f["id"] == rid), None)
        )
        return result

    async def close(self) -> None:
        await self.ws.close()
        if self.reader is not None:
            await self.reader


@contextlib.asynccontextmanager
async def pages(base: str) -> AsyncIterator[Any]:
    """``open(init, table)`` -> a :class:`Page` (all closed at the end)."""
    opened: list[Page] = []
    async with aiohttp.ClientSession() as http:

        async def open_page(init: str, table: str = "") -> Page:
            ws = await http.ws_connect(f"{base}/live")
            page = Page(ws)
            page.reader = asyncio.create_task(page._read())
            await ws.send_json({"t": "hello", "init": init, "table": table})
            opened.append(page)
            return page

        try:
            yield open_page
        finally:
            for page in opened:
                await page.close()


def cards_of(value: Any) -> set[str]:
    """Every card name anywhere in a JSON value."""
    if isinstance(value, str):
        return {value} if CARD.match(value) else set()
    if isinstance(value, dict):
        return set().union(*(cards_of(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(cards_of(v) for v in value)) if value else set()
    return set()


def public_cards(game: dict[str, Any]) -> set[str]:
    """The cards of a game's view everybody may see: the bout, the trump card,
    a shown pass-ticket, the cards played in its public events."""
    seen = {c for pair in game["table"] for c in pair if c}
    if game.get("trump_card"):
        seen.add(game["trump_card"])
    if game.get("pass_ticket"):
        seen.add(game["pass_ticket"]["card"])
    for event in game.get("events", ()):
        if event["kind"] != "draw":
            seen |= set(event.get("cards", ()))
    return seen
