"""The Mini App's replay viewer and player page in a real browser (#42):
headless Chromium (Debian's, as ``tests/sandbox/test_browser.py`` runs it)
opens the page the bot's process serves, with the stand-in ``Telegram.WebApp``
of ``test_miniapp_browser.py``.  The viewer steps through a finished game by
its buttons, the keyboard and the slider, each step drawn from the server's
frames; the player page draws the rating's chart and opens a replay; the
page opened without a table (the menu button) is the player page.

With ``MINIAPP_SCREENSHOT=docs/miniapp`` it saves ``-replay.png`` and
``-player.png`` there."""

from __future__ import annotations

import os
import random
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from engine import public_view
from engine.replay import replay_steps
from sandbox.fake_api import FakeTelegram, RateLimits
from tables import TableService
from telegram_bot.miniapp.server import mount
from tests.bot.e2e_kit import running
from tests.bot.miniapp_kit import MINIAPP, init_data
from tests.bot.test_miniapp_browser import DARK
from tests.bot.test_miniapp_browser import STAND_IN as PLAIN_STAND_IN
from tests.sandbox.test_browser import CHROMIUM_ARGS, WAIT_MS, chromium_path

pytestmark = pytest.mark.slow

PLAYERS = [(7201, "Ann <b>bold</b>"), (7202, "Bob"), (7203, "Dasha")]
STAND_IN = PLAIN_STAND_IN.replace(
    "initDataUnsafe: {}",
    'initDataUnsafe: Object.fromEntries(new URLSearchParams(hash.get("tgWebAppData") || ""))',
)
"""The stand-in, with the init data's ``start_param`` (a direct link's)."""
assert STAND_IN != PLAIN_STAND_IN


@pytest.fixture
def sock() -> socket.socket:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    return s


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def play_out(svc: TableService, tid: str, rng: random.Random) -> None:
    for _ in range(5000):
        table, state, version = await svc.tables.get(tid)
        assert state is not None
        if state.over:
            return
        seat = state.to_act()[0]
        player = table.seats[seat].user
        assert player is not None
        action = rng.choice(state.legal_actions(seat)).text()
        await svc.games.apply(tid, player, action, version)
    raise AssertionError("the game did not end")


async def finished_games(svc: TableService, seed: int, games: int = 3) -> str:
    """Rated Chuvash games of three (a match), played to their end through the
    service."""
    (first, name), *rest = PLAYERS
    made = await svc.lobbies.create_lobby(first, name, chat=None, variant="chuvash", timer=0)
    for user, other in rest:
        await svc.lobbies.join(made.table_id, user, other)
    await svc.games.start(made.table_id, first)
    rng = random.Random(seed)
    await play_out(svc, made.table_id, rng)
    for _game in range(1, games):  # a rematch starts once all of them said yes
        for user, _name in PLAYERS:
            await svc.games.rematch(made.table_id, user)
        await play_out(svc, made.table_id, rng)
    return made.table_id


async def test_the_replay_viewer_steps_and_the_player_page_opens_it(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, sock: socket.socket, tmp_path: Path
) -> None:
    port = sock.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    seed = random.randrange(2**62)
    print("seed", seed)
    async with running(
        redis_url, redis_prefix, fake, telegram_web_app_js=f"{base}/tg.js", **MINIAPP
    ) as h:
        tid = await finished_games(h.svc, seed)
        record = await h.svc.replays.record(tid, 1)
        rated = [e for e in await h.svc.ratings.history(PLAYERS[0][0]) if e["table"] == tid]
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
            init = init_data(fake.token, PLAYERS[0][0], "Ann", lang="ru")
            others = init_data(fake.token, 7299, "Eve", start_param=f"r1_{tid}")
            mine = init_data(fake.token, PLAYERS[1][0], "Bob", start_param=f"r1_{tid}")
            ends = await _in_browser(base, tid, init, record, len(rated), tmp_path)
            await _from_the_group(base, mine, others, ends)
        finally:
            await runner.cleanup()


def _hash(init: str, theme: dict[str, str] | None = None) -> str:
    import json
    from urllib.parse import quote

    out = f"#tgWebAppData={quote(init)}"
    return out + ("&theme=" + quote(json.dumps(theme)) if theme else "")


async def _in_browser(
    base: str, tid: str, init: str, record: dict[str, Any], rated: int, tmp_path: Path
) -> int:
    """The viewer and the player page; the step that ends a bout first."""
    from playwright.async_api import async_playwright

    steps = replay_steps(record)
    last = steps[-1].last
    busy = max(range(len(steps)), key=lambda k: (len(steps[k].state.table), -k))
    shots = os.environ.get("MINIAPP_SCREENSHOT") or str(tmp_path / "miniapp")
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(viewport={"width": 390, "height": 760})
            errors: list[str] = []
            page = await context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))

            async def at_step(k: int) -> None:
                await page.wait_for_function(
                    "k => document.body.dataset.step === String(k)", arg=k, timeout=WAIT_MS
                )

            # the viewer, from a replay message's button: ?r=<table>.<game>
            await page.goto(f"{base}/app/?r={tid}.1&s=0" + _hash(init))
            await at_step(0)
            names = await page.locator("#seats .seat .name").all_text_contents()
            assert names[0] == "Ann <b>bold</b>"  # text, never markup
            assert await page.locator("#seats b").count() == 0
            # every hand, as the text replay shows them: 6 cards each at the deal
            assert await page.locator("#seats .seat-hand .card").count() == 18
            assert await page.locator("#moves").inner_text() == "Раздача"  # his language
            assert await page.locator(".suit-order").inner_text() == "♠ > ♥ > ♦ > ♣"  # C3
            assert f"из {last}" in await page.locator("#replay-pos").inner_text()
            await page.locator("#replay-next").click()
            await at_step(1)
            first = steps[1].action
            assert first is not None
            line = await page.locator("#moves").inner_text()
            assert line.startswith(PLAYERS[first.seat][1])
            await page.locator(f".seat.moved[data-seat='{first.seat}']").wait_for(timeout=WAIT_MS)
            played = [c for pair in public_view(steps[1].state)["table"] for c in pair if c]
            shown = await page.locator("#bout .card").evaluate_all(
                "cards => cards.map(c => c.dataset.card)"
            )
            assert shown == played
            await page.keyboard.press("ArrowRight")
            await at_step(2)
            await page.keyboard.press("ArrowLeft")
            await at_step(1)
            await page.keyboard.press("Shift+ArrowRight")  # the next bout
            await at_step(next(s for s in steps[-1].bout_starts if s > 1))
            await page.keyboard.press("End")
            await at_step(last)
            assert await page.locator("#replay-next").is_disabled()
            # a bout taken or beaten off flies off the table (a CSS animation)
            ends = next(
                k
                for k in range(2, len(steps))
                if steps[k - 1].state.table and not steps[k].state.table
            )
            beaten = steps[ends].state.discard != steps[ends - 1].state.discard
            assert await _flies(page, ends) == ["leaving " + ("beaten" if beaten else "taken")]
            slider = page.locator("#replay-slider")
            await slider.evaluate(
                "(el, k) => { el.value = String(k); el.dispatchEvent(new Event('input')); }", busy
            )
            await at_step(busy)
            assert await page.locator("#bout .pair").count() == len(steps[busy].state.table)
            assert await page.locator("#centre .leaving").count() == 0  # nothing in flight
            await page.screenshot(path=f"{shots}-replay.png")
            # the player page: from the page's own header ...
            await page.locator("#to-player").click()
            await page.wait_for_function(
                "() => document.body.dataset.route === 'player' && document.body.dataset.player === '1'",
                timeout=WAIT_MS,
            )
            # ... and from /rating's or /replay's button: ?p=1
            await page.goto(f"{base}/app/?p=1" + _hash(init, DARK))
            await page.wait_for_function(
                "() => document.body.dataset.player === '1'", timeout=WAIT_MS
            )
            chuvash = page.locator(".rating[data-variant='chuvash']")
            assert await chuvash.locator(".chart polyline").count() == 1
            assert rated >= 2
            assert await chuvash.locator(".chart circle").count() == rated  # a dot a game
            assert await page.locator(".rating[data-variant='shchelkovsky'] .chart").count() == 0
            await page.screenshot(path=f"{shots}-player.png")
            assert await page.locator(".games button").count() == 3
            await page.locator(f".games button[data-replay='{tid}.1']").click()
            await page.wait_for_function(
                "() => document.body.dataset.route === 'replay'", timeout=WAIT_MS
            )
            assert "?r=" in page.url
            # the table's page once its game is over: the game's replay
            await page.goto(f"{base}/app/?t={tid}" + _hash(init))
            await page.locator("#to-replay").wait_for(timeout=WAIT_MS)
            await page.locator("#to-player").click()  # his page, and back: the table again
            await page.wait_for_function(
                "() => document.body.dataset.route === 'player' && document.body.dataset.player === '1'",
                timeout=WAIT_MS,
            )
            assert await page.locator("#to-replay").is_hidden()
            await page.go_back()
            await page.locator("#to-replay").wait_for(timeout=WAIT_MS)
            assert await page.locator("#seats .seat").count() == 3
            assert "Чувашский петух" in await page.locator("#title").inner_text()
            await page.locator("#to-replay").click()
            await page.wait_for_function(
                "() => document.body.dataset.route === 'replay' && document.body.dataset.step === '0'",
                timeout=WAIT_MS,
            )
            assert f"?r={tid}.3" in page.url  # the match's last game
            # the menu button: no table to show -> his page
            await page.goto(f"{base}/app/" + _hash(init))
            await page.wait_for_function(
                "() => document.body.dataset.route === 'player' && document.body.dataset.player === '1'",
                timeout=WAIT_MS,
            )
            assert not errors, errors
            await context.close()
        finally:
            await browser.close()
    return ends


async def _flies(page: Any, step: int) -> list[str]:
    """The classes of what flies off the table when the viewer steps from
    ``step - 1`` to ``step`` (seen as added, whenever it is removed again)."""
    slider = page.locator("#replay-slider")
    await slider.evaluate(
        "(el, k) => { el.value = String(k); el.dispatchEvent(new Event('input')); }", step - 1
    )
    await page.wait_for_function(
        "k => document.body.dataset.step === String(k)", arg=step - 1, timeout=WAIT_MS
    )
    await page.evaluate(
        """() => {
          window.flown = [];
          new MutationObserver((changes) => {
            for (const c of changes) for (const n of c.addedNodes)
              if (n.classList && n.classList.contains("leaving")) window.flown.push(n.className);
          }).observe(document.getElementById("centre"), { childList: true });
        }"""
    )
    await page.locator("#replay-next").click()
    await page.wait_for_function(
        "k => document.body.dataset.step === String(k)", arg=step, timeout=WAIT_MS
    )
    flown: list[str] = await page.evaluate("() => window.flown")
    return flown


async def _from_the_group(base: str, mine: str, others: str, ends: int) -> None:
    """The group's result message opens the replay in place (a direct link,
    ``startapp=r<game>_<table>``): its player sees it, anyone else is told
    what ``/replay`` tells him."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(
                viewport={"width": 390, "height": 760}, reduced_motion="reduce"
            )
            errors: list[str] = []
            page = await context.new_page()
            page.on("pageerror", lambda e: errors.append(str(e)))
            await page.goto(f"{base}/app/" + _hash(mine))
            await page.wait_for_function(
                "() => document.body.dataset.step === '0'", timeout=WAIT_MS
            )
            assert await page.locator("#seats .seat.you .name").inner_text() == "Bob"
            assert await _flies(page, ends) == []  # prefers-reduced-motion: nothing flies
            page = await context.new_page()  # a hash alone would not load it again
            page.on("pageerror", lambda e: errors.append(str(e)))
            await page.goto(f"{base}/app/" + _hash(others))
            status = page.locator("#status", has_text="Only the game's players can replay it.")
            await status.wait_for(timeout=WAIT_MS)
            assert await page.locator("#seats .seat").count() == 0
            assert not errors, errors
            await context.close()
        finally:
            await browser.close()
