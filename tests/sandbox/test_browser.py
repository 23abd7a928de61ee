"""The sandbox in a real browser: two people and an AI play a whole group game.

Headless Chromium (Debian's ``chromium`` package, ``/usr/bin/chromium``) is
driven by Playwright's Python package; Playwright never downloads a browser of
its own here. ``bash .ci/dev test`` installs the package when it runs as root
with apt-get; otherwise this test FAILS (never skips) and says how to install it.

Every wait is on a DOM condition (a message's version, an answer counter, the
page's world version); the timeouts are only safety nets against a hang.
With ``SANDBOX_SCREENSHOT=docs/sandbox.png`` it saves the README's screenshot
there (otherwise into the test's temporary folder, and the page is checked to
render one).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine import view
from sandbox.page import Sandbox
from telegram_bot.buttons.callbacks import parse_game
from telegram_bot.settings import Settings
from telegram_bot.views.cards import card_label, group_hand

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
INSTALL_HELP = f"""\
The browser test needs Chromium at {CHROMIUM} (or set CHROMIUM=/path/to/chromium).
Install Debian's package:  sudo apt-get update && sudo apt-get install -y chromium
(`bash .ci/dev test` does this by itself when it runs as root.)
Playwright's own browser download (`playwright install`) is not used."""
SCREENSHOT_ENV = "SANDBOX_SCREENSHOT"
WAIT_MS = 30_000  # safety net for one step (the bot answers in milliseconds)
MAX_PRESSES = 1500


def chromium_path() -> str:
    found = CHROMIUM if os.access(CHROMIUM, os.X_OK) else shutil.which(CHROMIUM)
    if not found:
        pytest.fail(INSTALL_HELP, pytrace=False)
    return found


@pytest.fixture
async def sandbox(redis_url: str, redis_prefix: str) -> AsyncIterator[Sandbox]:
    settings = Settings(
        redis_prefix=redis_prefix,
        default_timer=0,  # no turn timer but a rated lobby's 60 s a move (#38): none runs out
        soon_delay=0.05,
        later_delay=0.1,
        table_delay=0.2,
    )
    async with Sandbox(redis_url=redis_url, settings=settings) as running:
        yield running


@pytest.fixture
async def page(sandbox: Sandbox) -> AsyncIterator[Any]:
    path = chromium_path()
    try:
        from playwright.async_api import async_playwright
    except ImportError:
        pytest.fail("the browser test needs Playwright: pip install -e '.[dev]'", pytrace=False)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(viewport={"width": 1340, "height": 860})
            tab = await context.new_page()
            errors: list[str] = []
            tab.on("pageerror", lambda error: errors.append(str(error)))
            await tab.goto(sandbox.url)
            await tab.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
            yield tab
            assert not errors, f"JavaScript errors on the page: {errors}"
            await context.close()
        finally:
            await browser.close()


# ---------------------------------------------------------------- reading the page
def column(page: Any, name: str) -> Any:
    return page.locator(f".column[data-user='{name}']")


async def open_chat(col: Any, title: str) -> None:
    await col.locator(".tab", has_text=title).click()
    await col.locator(".tab.active", has_text=title).wait_for(timeout=WAIT_MS)


async def send(col: Any, text: str) -> None:
    box = col.locator(".composer .input")
    await box.fill(text)
    await box.press("Enter")


def bot_messages(col: Any) -> Any:
    return col.locator(".messages .msg[data-from='bot']")


def hand_message(col: Any) -> Any:
    """His hand message: the bot's message with game buttons (g:...) or greyed
    (disabled) cards, while he can play none."""
    hand = ".kb-btn[data-callback^='g:'], .kb-btn[disabled]"
    return bot_messages(col).filter(has=col.page.locator(hand)).last


async def buttons(message: Any) -> list[tuple[str, str]]:
    found: list[list[str]] = await message.locator(".kb-btn").evaluate_all(
        "bs => bs.map(b => [b.dataset.callback || '', b.textContent])"
    )
    return [(data, text) for data, text in found]


def payload(data: str) -> str:
    cb = parse_game(data)
    return cb.payload if cb is not None else ""


def choose(found: list[tuple[str, str]], refused: set[str]) -> str | None:
    """What a simple player presses: a choice offered for a card, Play, the first
    playable card (marked •), Take, Done/Pass."""
    options = [(d, t) for d, t in found if d.startswith("g:") and d not in refused]
    pays = {payload(d): d for d, _ in options}
    if "b" in pays:  # a card with several moves: take the first one offered
        for d, _ in options:
            if payload(d)[:1] in ("C", "L", "T", "R", "S"):
                return d
    if "go" in pays:
        return pays["go"]
    for d, text in options:
        if payload(d).startswith("c") and text.startswith("•"):
            return d
    return pays.get("K") or pays.get("P")


async def press(page: Any, col: Any, message: Any, data: str) -> bool:
    """Press a button of ``message``; wait until the bot answered and the message
    changed or an answer was shown. False when the press was refused (alert)."""
    mid = await message.get_attribute("data-message-id")
    version = await message.get_attribute("data-version")
    answers = int(await col.get_attribute("data-answers") or 0)
    user = await col.get_attribute("data-user")
    clicked = await page.evaluate(
        """([user, mid, data]) => {
            const col = document.querySelector(`.column[data-user='${user}']`);
            const msg = col.querySelector(`.msg[data-message-id='${mid}']`);
            const button = msg && [...msg.querySelectorAll('.kb-btn')]
                .find(b => b.dataset.callback === data);
            if (!button) return false;
            button.click();
            return true;
        }""",
        [user, mid, data],
    )
    if not clicked:  # re-rendered meanwhile: look again
        return True
    await page.wait_for_function(
        """([user, mid, version, answers]) => {
            const col = document.querySelector(`.column[data-user='${user}']`);
            if (col.dataset.pending !== '0') return false;
            const msg = col.querySelector(`.msg[data-message-id='${mid}']`);
            return !msg || msg.dataset.version !== version
                || Number(col.dataset.answers) > answers;
        }""",
        arg=[user, mid, version, answers],
        timeout=WAIT_MS,
    )
    alert = col.locator(".alert:not([hidden])")
    if await alert.count():
        await alert.locator(".alert-ok").click()
        return False
    return True


async def start_bot(col: Any) -> None:
    """He presses Start in his chat with the bot; the welcome arrives."""
    await col.locator(".start-bot").click()
    await bot_messages(col).filter(has_text="Welcome").wait_for(timeout=WAIT_MS)


async def world_changed(page: Any, since: str) -> None:
    await page.wait_for_function(
        "v => document.body.dataset.version !== v", arg=since, timeout=WAIT_MS
    )


# ---------------------------------------------------------------- the test
@pytest.mark.slow
async def test_a_group_game_in_the_browser(sandbox: Sandbox, page: Any, tmp_path: Path) -> None:
    screenshot = Path(os.environ.get(SCREENSHOT_ENV) or tmp_path / "sandbox.png")
    alice, bob, carol = (column(page, n) for n in ("Alice", "Bob", "Carol"))

    # Alice and Bob open their chats with the bot, so their hands come there (a
    # member who never did plays in the group: tests/bot/test_e2e_ephemeral.py).
    await start_bot(alice)  # one after the other: a page update may swallow a click
    await start_bot(bob)

    # A group with all three; the bot is added and greets.
    await page.locator("#new-group").click()
    await page.locator("#modal input[name='title']").fill("Game night")
    for box in await page.locator("#modal input[name='member']").all():
        await box.check()
    await page.locator("#modal-ok").click()
    for col in (alice, bob, carol):
        await col.locator(".tab.active", has_text="Game night").wait_for(timeout=WAIT_MS)
    await bot_messages(alice).first.wait_for(timeout=WAIT_MS)

    # /new chuvash: the lobby message; Alice is seated, Bob presses Join.
    await send(alice, "/new chuvash")
    lobby = bot_messages(alice).filter(has=page.locator(".kb-btn[data-callback$=':j:']")).last
    await lobby.wait_for(timeout=WAIT_MS)
    bob_lobby = bot_messages(bob).filter(has=page.locator(".kb-btn[data-callback$=':j:']")).last
    await bob_lobby.locator(".kb-btn[data-callback$=':j:']").click()
    await lobby.filter(has_text="Bob").wait_for(timeout=WAIT_MS)
    await lobby.locator(".kb-btn[data-callback$=':a:']").click()  # Add AI
    await lobby.filter(has_text="AI").wait_for(timeout=WAIT_MS)
    await lobby.locator(".kb-btn[data-callback$=':go:']").click()  # Start

    # Each player's hand arrives in his private chat.
    await open_chat(alice, "Durak Bot")
    await open_chat(bob, "Durak Bot")
    hands = {"Alice": hand_message(alice), "Bob": hand_message(bob)}
    for message in hands.values():
        await message.wait_for(timeout=WAIT_MS)

    # What each one sees: his own cards and nobody else's.
    shown_now = [d for m in hands.values() for d, _ in await buttons(m)]
    first = next(d for d in shown_now if d.startswith("g:"))
    game_id = first.split(":")[1]
    table, state, _version = await sandbox.app.svc.tables.get(game_id)
    assert state is not None
    seat = {s.name: i for i, s in enumerate(table.seats)}
    views = {name: view(state, seat[name]) for name in ("Alice", "Bob")}
    held = {name: v["hand"] for name, v in views.items()}
    for name, message in hands.items():
        shown = await buttons(message)
        cards = {payload(d)[1:] for d, _ in shown if payload(d).startswith("c")}
        # greyed cards carry no data: told by their label
        hand = group_hand(held[name], views[name]["trump"])
        labels = {card_label(c, "en", n): c for c, n in hand}  # the sandbox's users: English
        cards |= {labels[t] for d, t in shown if not d}
        assert cards == set(held[name]), (name, cards, held[name])
        other = "Bob" if name == "Alice" else "Alice"
        assert not cards & set(held[other])

    # The group's table message: the public view, no card buttons.
    table_msg = bot_messages(carol).filter(has=page.locator(".kb-btn[data-url]")).last
    await table_msg.wait_for(timeout=WAIT_MS)
    assert not [d for d, _ in await buttons(table_msg) if d.startswith("g:")]
    for name in ("Alice", "Bob"):
        assert name in await table_msg.inner_text()

    # Play: each presses what a simple player would, until the game is over.
    over = bot_messages(carol).filter(has_text="Game over")
    refused: set[str] = set()
    presses = 0
    shot = False
    while not await over.count():
        assert presses < MAX_PRESSES, "the game did not end"
        version = await page.get_attribute("body", "data-version") or ""
        acted = False
        for name, col in (("Alice", alice), ("Bob", bob)):
            message = hands[name]
            if not await message.count():
                continue
            data = choose(await buttons(message), refused)
            if data is None:
                continue
            acted = True
            presses += 1
            if not await press(page, col, message, data):
                refused.add(data)
            if presses == 12 and not shot:
                shot = True
                await page.screenshot(path=str(screenshot))
        if not acted:
            if await over.count():
                break
            await world_changed(page, version)

    # Game over: in the group and in each player's chat, with a Rematch button.
    await over.last.locator(".kb-btn[data-callback*=':re:']").wait_for(timeout=WAIT_MS)
    result = await over.last.inner_text()
    assert "Alice" in result
    assert "Bob" in result
    for col in (alice, bob):
        done = bot_messages(col).filter(has_text="Game over").last
        await done.locator(".kb-btn[data-callback*=':re:']").wait_for(timeout=WAIT_MS)
    assert not await hand_message(alice).count()
    assert not await hand_message(bob).count()
    assert shot
    assert (await asyncio.to_thread(screenshot.read_bytes)).startswith(b"\x89PNG")
