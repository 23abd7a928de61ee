"""The Mini App's pages in tests (#42): the bot's Mini App served on a port
of loopback, pages that open its live channel with init data signed as
Telegram signs it, read the frames it sends and send moves."""

from __future__ import annotations

import asyncio
import bisect
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

from engine import Action, new_game
from engine.cards import card_name, card_names
from tables import MOVE_KINDS, TableService
from telegram_bot.app import BotApp
from telegram_bot.miniapp.auth import sign_init_data
from telegram_bot.miniapp.server import mount
from tests.bot.e2e_kit import SAFETY, SEEDS, Harness

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


@dataclass
class Moment:
    """A game at one version of its table, as replayed: what everybody may see
    (``public``: every card played, shown or face up so far), each seat's hand,
    what each seat may see (his own cards ever held and the public ones), the
    bout and the face-up trump card."""

    version: int
    public: frozenset[str]
    hands: list[list[str]]
    seen: list[frozenset[str]]
    bout: list[list[str | None]]
    trump_card: str | None


async def replay_moments(svc: TableService, tid: str) -> list[Moment]:
    """Table ``tid``'s game (its only one) at every version of it: replayed from
    its event log and its deal's seed (recorded by
    :func:`tests.bot.e2e_kit.record_seeds`), apart from what the views say."""
    table, _state, _v = await svc.tables.get(tid)
    events = await svc.admin.event_page(tid, 0, 100_000)
    starts = [i for i, e in enumerate(events) if e.kind == "start"]
    assert len(starts) == 1, f"one game expected: {len(starts)}"
    seeds = SEEDS.get(tid) or [table.seed]
    state = new_game(table.variant, len(table.seats), seeds[0], table.options, None)
    own = [set(card_names(state.hand(s))) for s in range(len(table.seats))]
    public: set[str] = set()
    moments: list[Moment] = []

    def snapshot(version: int) -> None:
        if state.trump_card is not None:
            public.add(card_name(state.trump_card))
        if state.ticket:  # a shown pass-ticket (S8)
            public.add(card_name(state.ticket[1]))
        moments.append(
            Moment(
                version,
                frozenset(public),
                [card_names(state.hand(s)) for s in range(state.players)],
                [frozenset(o | public) for o in own],
                [[card_name(a), card_name(c) if c >= 0 else None] for a, c in state.table],
                card_name(state.trump_card) if state.trump_card is not None else None,
            )
        )

    snapshot(events[starts[0]].version)
    for e in events[starts[0] + 1 :]:
        if e.kind in MOVE_KINDS:
            for ev in state.apply(Action.from_text(e.seat, e.text)):
                names = set(card_names(ev.cards))
                if ev.kind == "draw":
                    own[ev.seat] |= names
                else:
                    public.update(names)
        if moments[-1].version == e.version:
            moments.pop()  # one write's events together
        snapshot(e.version)
    return moments


def moment_at(moments: list[Moment], version: int) -> Moment:
    """The game as it was at table version ``version``."""
    at = bisect.bisect_right([m.version for m in moments], version) - 1
    assert at >= 0, f"version {version} before the game"
    return moments[at]


def check_feed(views: list[dict[str, Any]], moments: list[Moment], seat: int | None) -> int:
    """Every view of a game that a page of ``seat`` (None: a spectator) got
    holds no card hidden from him at that view's version -- compared with the
    replayed table (``moments``), not with the view itself: only public cards
    (the bout, the cards played, shown or face up so far), and a seat's own
    hand, which is his as it was then; the bout is the table's.  The number of
    views checked."""
    checked = 0
    for view in views:
        game = view.get("game")
        if game is None:  # a lobby, the game's end: no cards
            assert not cards_of(view), view
            continue
        moment = moment_at(moments, view["version"])
        assert game["table"] == moment.bout, (view["version"], game["table"], moment.bout)
        assert game.get("trump_card") == moment.trump_card, view["version"]
        if seat is None:
            assert "hand" not in game, view
            assert "legal" not in game, view
            allowed = moment.public
        else:
            assert view["you"] == seat, view
            assert sorted(game["hand"]) == sorted(moment.hands[seat]), view["version"]
            allowed = moment.seen[seat]
        for event in game.get("events", ()):  # another seat's draw: a count only
            if event["kind"] == "draw" and event["seat"] != seat:
                assert "cards" not in event, (view["version"], event)
        hidden = cards_of(view) - allowed
        assert not hidden, f"seat {seat} shown hidden cards {hidden} at {view['version']}"
        checked += 1
    return checked
