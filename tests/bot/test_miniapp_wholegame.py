"""A whole game in the Mini App (#42, its "Done when"): a real bot (aiogram's
dispatcher on the fake Bot API, a real Redis) and headless Chromium (Debian's,
as ``tests/sandbox/test_browser.py`` runs it).  Two players play the whole
game from the page -- a card tapped to select it, tapped again (or the attack
card it covers tapped) to play it, *Take* and *Done* pressed -- while the third
plays from his hand message's buttons and a member of the group who does not
play watches the page.  Every page ends showing the result; every frame each
page got is checked against the table as it was at that frame's version
(:func:`tests.bot.miniapp_kit.check_feed`: the spectator only public cards, a
player only his own besides), and so are the cards the spectator's page draws
at every move; no move is refused.

The moves follow each other one at a time, each made once every page shows
the table as it is (as people look before they tap), so no move may be
refused: a refusal is a bug.  The choices are random: ``WHOLEGAME_SEED=<n>``
repeats them (the seed is printed)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import socket
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any
from urllib.parse import quote

import pytest
from aiohttp import web

from engine import Action
from engine.cards import card_name, card_names
from sandbox.fake_api import FakeTelegram, Message, RateLimits, SimUser
from sandbox.fake_api.world import World
from tables import PLAYING
from telegram_bot.buttons.callbacks import parse_game
from telegram_bot.miniapp.server import mount
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import (
    SAFETY,
    Harness,
    assert_no_hidden_cards,
    choose,
    game_buttons,
    running,
    shows_result,
)
from tests.bot.miniapp_kit import MINIAPP, check_feed, init_data, moment_at, replay_moments
from tests.bot.test_miniapp_browser import DARK, STAND_IN
from tests.sandbox.test_browser import CHROMIUM_ARGS, WAIT_MS, chromium_path

pytestmark = pytest.mark.slow

MAX_MOVES = 400
"""A 3-player Chuvash game takes well under this many moves."""


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


@dataclass
class Watched:
    """A page in Chromium and every frame of its live channel, both ways."""

    page: Any
    got: list[dict[str, Any]] = field(default_factory=list)
    sent: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def attach(self) -> None:
        self.page.on("websocket", self._socket)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _socket(self, ws: Any) -> None:
        ws.on("framereceived", lambda data: self.got.append(json.loads(data)))
        ws.on("framesent", lambda data: self.sent.append(json.loads(data)))

    @property
    def views(self) -> list[dict[str, Any]]:
        return [f["view"] for f in self.got if f["t"] == "view"]

    @property
    def view(self) -> dict[str, Any]:
        views = self.views
        assert views, self.got
        return views[-1]

    @property
    def labels(self) -> dict[str, str]:
        return next(f["labels"] for f in self.got if f["t"] == "hello")

    async def until(self, check: Any) -> Any:
        deadline = time.monotonic() + SAFETY
        while not (value := check()):
            assert time.monotonic() < deadline, f"waited in vain: {self.got[-3:]}"
            await asyncio.sleep(0.01)
        return value

    async def shows(self, version: int) -> None:
        """Until the page draws ``version`` (and its frame is recorded)."""
        await self.page.wait_for_function(
            "v => Number(document.body.dataset.version || 0) >= v", arg=version, timeout=WAIT_MS
        )
        await self.until(lambda: any(v["version"] >= version for v in self.views))


async def test_two_pages_a_hand_message_and_a_spectator_play_a_whole_game(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    seed = int(os.environ.get("WHOLEGAME_SEED") or random.randrange(2**32))
    print(f"the choices' seed: WHOLEGAME_SEED={seed}")
    rng = random.Random(seed)
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with running(
        redis_url,
        redis_prefix,
        fake,
        flood_limiter=False,
        miniapp_moves=1000,  # the page's flood limit is not this test's (a test of its own)
        telegram_web_app_js=f"{base}/tg.js",
        **MINIAPP,
    ) as h:
        ann, bob, carol = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob", "Carol"))
        dave = fake.add_user("Dave", language_code="en")
        tid, _group = await group_lobby(h, "chuvash", [ann, bob, carol], 0, watchers=[dave])
        table, _state, _v = await h.svc.tables.get(tid)
        print(f"table {tid}, the deal's seed {table.seed}")
        assert h.bot is not None
        assert h.bot.app.page_server is not None
        root = web.Application()

        async def stand_in(_request: web.Request) -> web.Response:
            return web.Response(text=STAND_IN, content_type="application/javascript")

        root.router.add_get("/tg.js", stand_in)
        mount(root, "/app", h.bot.app.page_server.web_app())
        runner = web.AppRunner(root)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        try:
            await _whole_game(h, base, tid, (ann, bob), carol, dave, rng)
        finally:
            await runner.cleanup()
    assert not fake.stats.errors, fake.stats.error_texts


def _url(base: str, tid: str, init: str, theme: dict[str, str] | None = None) -> str:
    hash_ = f"tgWebAppData={quote(init)}"
    if theme:
        hash_ += "&theme=" + quote(json.dumps(theme))
    return f"{base}/app/?t={tid}#{hash_}"


async def _whole_game(
    h: Harness,
    base: str,
    tid: str,
    players: tuple[SimUser, SimUser],
    carol: SimUser,
    dave: SimUser,
    rng: random.Random,
) -> None:
    from playwright.async_api import async_playwright

    token = h.fake.token
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(
                viewport={"width": 390, "height": 760}, reduced_motion="reduce"
            )
            watched: dict[int, Watched] = {}
            for n, user in enumerate((*players, dave)):
                w = Watched(await context.new_page())
                w.attach()
                await w.page.goto(_url(base, tid, init_data(token, user.id), DARK if n else None))
                watched[user.id] = w
            pages = {u.id: watched[u.id] for u in players}
            moves = {"page": 0, "message": 0}
            spectator_saw: list[tuple[int, set[str]]] = []
            for _step in range(MAX_MOVES):
                table, state, version = await h.svc.tables.get(tid)
                if table.status != PLAYING or state is None or state.over:
                    break
                for w in watched.values():  # everybody sees the table before a move
                    await w.shows(version)
                drawn = await watched[dave.id].page.eval_on_selector_all(
                    "[data-card]", "els => els.map(e => e.dataset.card)"
                )
                spectator_saw.append((version, set(drawn)))  # the cards on his screen
                seat = rng.choice(state.to_act())
                mover = table.seats[seat].user
                if mover in pages:
                    await _move_in_page(pages[mover], version, rng)
                    moves["page"] += 1
                else:
                    assert mover == carol.id, (seat, mover)
                    await _move_by_buttons(h, carol, tid, version, rng)
                    moves["message"] += 1
            else:
                raise AssertionError(f"no end after {MAX_MOVES} moves")
            print(f"moves: {moves}")
            assert moves["page"] > 5
            assert moves["message"] > 0
            loaded = await h.svc.tables.load(tid)
            result = loaded.result
            assert result is not None
            assert result.game == loaded.table.game_no
            # every page ends showing the result; so does his hand message
            if result.draw:
                said = "\U0001f91d"
            else:
                assert result.loser is not None
                said = "\U0001f413 " + loaded.table.seats[result.loser].name
            for w in watched.values():
                await w.shows(loaded.version)
                await w.page.wait_for_function(
                    "s => document.getElementById('moves').textContent.includes(s)",
                    arg=said,
                    timeout=WAIT_MS,
                )
                assert w.view["result"] is not None
            await _until(h, lambda m: shows_result(m), carol, tid)
            # frame by frame, as the table was at each frame's version
            moments = await replay_moments(h.svc, tid)
            assert check_feed(watched[dave.id].views, moments, None) > 10
            for at, cards in spectator_saw:
                hidden = cards - moment_at(moments, at).public
                assert not hidden, f"the spectator's page drew hidden cards {hidden} at {at}"
            assert any(cards for _at, cards in spectator_saw)
            for player in players:
                sits = loaded.table.seat_of(player.id)
                assert sits is not None
                assert check_feed(watched[player.id].views, moments, sits) > 10
            for w in watched.values():
                versions = [v["version"] for v in w.views]
                assert versions == sorted(set(versions))  # never back, never twice
                assert all(f["ok"] for f in w.got if f["t"] == "result"), w.got
                assert not w.errors, w.errors
            # and no message of the bot showed anybody a card hidden from him
            assert await assert_no_hidden_cards(h, tid, [*players, carol, dave]) > 0
            assert not any(f["t"] == "move" for f in watched[dave.id].sent)
            await context.close()
        finally:
            await browser.close()


async def _until(h: Harness, check: Any, user: SimUser, tid: str) -> Message:
    """His hand message once ``check(message)`` holds."""
    world = h.fake.world
    deadline = time.monotonic() + SAFETY
    while True:
        seen = world.version
        message = await h.hand_message(user, tid)
        if message is not None and check(message):
            return message
        assert time.monotonic() < deadline, message and (message.text, message.button_texts)
        with contextlib.suppress(TimeoutError):  # a UI record is no world change: look again
            await world.wait_for(partial(_changed, world, seen), 0.2)


def _changed(thing: World | Message, seen: int) -> bool | None:
    """The world, or a message, changed since its version ``seen``."""
    return thing.version != seen or None


def _pick(legal: list[str], rng: random.Random) -> str:
    """A move as a player picks it: mostly a card, now and then *Take*/*Done*."""
    cards = [a for a in legal if a[0] not in "KP"]
    if cards and (len(cards) == len(legal) or rng.random() < 0.85):
        short = [a for a in cards if len(Action.from_text(0, a).cards) <= 3]
        return rng.choice(short or cards)
    return rng.choice([a for a in legal if a[0] in "KP"])


async def _move_in_page(w: Watched, version: int, rng: random.Random) -> None:
    """One move made by tapping the page as a person does; it is applied."""
    view = w.view
    assert view["version"] == version, (view["version"], version)
    legal = view["game"]["legal"]
    assert legal, view
    action = _pick(legal, rng)
    sent_before = len([f for f in w.sent if f["t"] == "move"])
    page = w.page
    await page.bring_to_front()  # a page behind the others gets no animation frames
    # (throttled): each click would wait 2 s for its element to be stable
    kind = action[0]
    if kind in "KP":
        labels = w.labels
        bout = view["game"]["table"]
        covered = bool(bout) and all(c for _a, c in bout)
        name = labels["take"] if kind == "K" else labels["done" if covered else "pass"]
        await page.locator("#actions").get_by_role("button", name=name, exact=True).click()
    else:
        parsed = Action.from_text(0, action)
        cards = card_names(parsed.cards)
        if kind == "C":  # the card, then the attack card it covers
            attack, card = card_name(parsed.attack), cards[0]
            await page.locator(f"#hand .card:not(.selected)[data-card='{card}']").first.click()
            await page.locator(f"#bout .pair.target .card.attack[data-card='{attack}']").click()
        else:  # each card selected, then the last one tapped again
            for card in cards:
                await page.locator(f"#hand .card:not(.selected)[data-card='{card}']").first.click()
            await page.locator(f"#hand .card.selected[data-card='{cards[-1]}']").first.click()
    sent = await w.until(lambda: [f for f in w.sent if f["t"] == "move"][sent_before:] or None)
    assert len(sent) == 1, sent
    move = sent[0]
    assert move["a"] == action, (move, action)
    assert move["v"] == version, move
    result = await w.until(
        lambda: next((f for f in w.got if f["t"] == "result" and f["id"] == move["id"]), None)
    )
    assert result["ok"], result  # refused: wrongly, nothing moved meanwhile
    assert result["status"] == "applied", result
    assert result["version"] > version, result


async def _move_by_buttons(
    h: Harness, user: SimUser, tid: str, version: int, rng: random.Random
) -> None:
    """One move made with his hand message's buttons (a card, then *Play*, or
    one press): every press answered without an alert."""
    world = h.fake.world
    for _press in range(6):
        _t, _s, now = await h.svc.tables.get(tid)
        if now > version:
            return

        def current(message: Message, version: int = version) -> bool:  # drawn at it
            if choose(message) is None:
                return False
            drawn = [parse_game(b["callback_data"]) for b in game_buttons(message)]
            return {cb.version for cb in drawn if cb is not None} == {version}

        message = await _until(h, current, user, tid)
        button = choose(message, rng)
        assert button is not None
        shown = message.version
        answer = await user.press(data=button["callback_data"], message=message).wait_answer(SAFETY)
        assert answer.get("text") is None, (button["text"], answer)  # no alert: not refused
        with contextlib.suppress(TimeoutError):  # its edit (a new message: looked up again)
            await world.wait_for(partial(_changed, message, shown), 5.0)
    raise AssertionError("his presses made no move")
