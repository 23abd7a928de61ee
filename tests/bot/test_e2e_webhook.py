"""Webhook mode end to end: the bot as ``python -m telegram_bot`` runs it with
``WEBHOOK_URL`` and ``WEBHOOK_SECRET`` set (``telegram_bot.__main__.run``: an
aiohttp server on loopback, ``setWebhook``) against the fake Bot API, which POSTs
the simulated users' updates to it, and the test Redis. A whole game is played
that way and getUpdates is never called; a POST without the right secret token
is refused and changes nothing."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import secrets
import signal
import socket
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from pydantic import ValidationError

from sandbox.fake_api import FakeTelegram, RateLimits, SimUser
from sandbox.local_redis import free_loopback_port
from telegram_bot.__main__ import run
from telegram_bot.app import BotApp
from telegram_bot.settings import Settings
from tests.bot.e2e_kit import (
    SAFETY,
    Bot,
    Harness,
    assert_no_hidden_cards,
    has_lobby_buttons,
    is_over,
    play_out,
)
from tests.bot.test_e2e_invite import invite_lobby

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
PATH = "/telegram"


class WebhookHarness(Harness):
    """:class:`Harness` with the bot in webhook mode: ``run(settings)`` of
    ``python -m telegram_bot`` in a task, serving on a loopback socket bound to a
    free port (so ``WEBHOOK_URL`` is known before ``setWebhook``)."""

    secret: str = ""
    derive_secret = False  # WEBHOOK_SECRET unset: the bot derives one from its token
    webhook_url: str = ""
    _sock: socket.socket | None = None

    def webhook_settings(self, port: int) -> Settings:
        return self.settings().model_copy(
            update={
                "webhook_url": f"http://127.0.0.1:{port}{PATH}",
                "webhook_secret": self.secret,
                "webhook_host": "127.0.0.1",
                "webhook_port": port,
                "webhook_path": PATH,
            }
        )

    async def start(self) -> Bot:
        self.secret = "" if self.derive_secret else secrets.token_urlsafe(24)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self._sock = sock
        settings = self.webhook_settings(sock.getsockname()[1])
        self.secret = settings.secret_token()
        self.webhook_url = settings.webhook_url
        app = BotApp(settings, clock=self.clock)
        task = asyncio.create_task(run(settings, app=app, sock=sock), name="webhook-bot")
        self.bot = Bot(app, task)
        world = self.fake.world
        # up once the fake has the webhook (setWebhook comes after the server listens)
        await world.wait_for(
            lambda: task.done() or world.webhook.get("url") == self.webhook_url,
            SAFETY,
            "setWebhook",
        )
        if task.done():
            task.result()  # the bot died while starting: its exception
            raise AssertionError("the bot stopped while starting")
        return self.bot

    async def stop(self) -> None:
        if self.bot is None:
            return
        task = self.bot.task
        self.bot = None
        task.cancel()  # as Ctrl-C does to asyncio.run(run(settings))
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, SAFETY)
        if self._sock is not None:
            self._sock.close()
            self._sock = None


@contextlib.asynccontextmanager
async def webhook_bot(
    redis_url: str, prefix: str, fake: FakeTelegram, *, derive_secret: bool = False, **extra: Any
) -> AsyncIterator[WebhookHarness]:
    h = WebhookHarness(fake, redis_url, prefix, extra=extra)
    h.derive_secret = derive_secret
    await h.start()
    try:
        yield h
    finally:
        await h.stop()


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def all_delivered(fake: FakeTelegram) -> None:
    """Until the fake has no update left to POST."""
    world = fake.world
    await world.wait_for(lambda: not world.updates, SAFETY, "every update delivered")


async def test_webhook_game_to_the_end(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    world = fake.world
    feed = world.subscribe()
    async with webhook_bot(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        # setWebhook: the URL, the secret token, the update types the routers use
        assert world.webhook["url"] == h.webhook_url
        assert world.webhook["secret_token"] == h.secret
        assert fake.stats.calls["setWebhook"] == 1
        assert h.bot is not None
        used = set(h.bot.app.dp.resolve_used_update_types())
        assert {"message", "callback_query", "inline_query", "my_chat_member"} <= used
        assert world.allowed_updates == used

        # /start, an invitation link, two humans play a whole game
        humans = [fake.add_user("Alice"), fake.add_user("Bob", language_code="ru")]
        tid = await invite_lobby(h, "chuvash", humans, ai=0)
        presses = await play_out(h, tid, humans, rng=random.Random(7))
        assert presses > 5
        for u in humans:
            assert is_over(await h.hand_message(u, tid))
        assert await assert_no_hidden_cards(h, tid, humans) > 5
        await all_delivered(fake)

        # every update went through the webhook, every POST was taken
        assert fake.stats.calls["getUpdates"] == 0
        assert fake.stats.calls["deleteWebhook"] == 0
        assert world.webhook["url"] == h.webhook_url
        assert "last_error_message" not in world.webhook
    world.unsubscribe(feed)
    kinds: Counter[str] = Counter()
    while not feed.empty():
        kinds[feed.get_nowait().kind] += 1
    assert kinds["update"] > presses
    assert kinds["update_delivered"] == kinds["update"]
    assert fake.stats.calls["getUpdates"] == 0
    assert not fake.stats.errors, fake.stats.error_texts


def forged_command(user: SimUser, text: str, update_id: int) -> dict[str, Any]:
    """A private-chat command from ``user`` as Telegram would POST it."""
    chat = user.chat.to_api(user.world.users)
    return {
        "update_id": update_id,
        "message": {
            "message_id": 10_000 + update_id % 10_000,
            "date": int(time.time()),
            "chat": chat,
            "from": user.user.to_api(),
            "text": text,
            "entities": [{"type": "bot_command", "offset": 0, "length": text.find(" ")}],
        },
    }


# the background loops' own keys (timer shard leases and the process registry,
# the index pruner's lease, pending-render marks): written on their schedule
HOUSEKEEPING = re.compile(rb"^(timers|tables:prune|render:)")


async def redis_state(h: Harness) -> dict[bytes, tuple[bytes | None, bool]]:
    """Every key under the test's prefix but the background loops' own: its
    serialized value, and whether it has a time to live (so it may vanish)."""
    r = h.svc.redis
    n = len(h.prefix)
    keys = [
        k
        async for k in r.scan_iter(match=f"{h.prefix}*", count=500)
        if not HOUSEKEEPING.match(k[n:])
    ]
    return {k: (await r.dump(k), await r.pttl(k) > 0) for k in sorted(keys)}


def unwritten(
    after: dict[bytes, tuple[bytes | None, bool]], before: dict[bytes, tuple[bytes | None, bool]]
) -> bool:
    """Nothing was written between the two snapshots: no key appeared or changed;
    a key that is gone had a time to live (it expired, nobody deleted it)."""
    if any(k not in before or before[k][0] != v for k, (v, _) in after.items()):
        return False
    return all(before[k][1] for k in before.keys() - after.keys())


@pytest.mark.parametrize("derive_secret", [False, True], ids=["WEBHOOK_SECRET", "derived"])
async def test_webhook_refuses_a_post_without_the_secret(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, derive_secret: bool
) -> None:
    """With WEBHOOK_SECRET, or without it (a secret derived from the bot token):
    the webhook is never open to anyone who knows its URL."""
    world = fake.world
    async with webhook_bot(
        redis_url, redis_prefix, fake, derive_secret=derive_secret, flood_limiter=False
    ) as h:
        assert h.secret
        assert world.webhook["secret_token"] == h.secret
        alice = fake.add_user("Alice")
        alice.start()
        await alice.wait_message(timeout=SAFETY)
        await all_delivered(fake)
        assert await h.svc.tables.where(alice.id) is None

        def state() -> tuple[int, int, int]:
            return world.version, fake.stats.total_calls, len(world.outbox)

        before, redis_before = state(), await redis_state(h)
        assert redis_before  # /start stored her preferences: a state that could change
        async with aiohttp.ClientSession() as session:
            for n, headers in enumerate(
                [
                    {},
                    {SECRET_HEADER: ""},
                    {SECRET_HEADER: "wrong"},
                    {SECRET_HEADER: h.secret + "x"},
                    {SECRET_HEADER: h.secret.upper() if h.secret.upper() != h.secret else "X"},
                ]
            ):
                update = forged_command(alice, "/new chuvash", 900_000 + n)
                async with session.post(h.webhook_url, json=update, headers=headers) as resp:
                    assert resp.status in (401, 403), (headers, resp.status)
            # refused before anything ran: no call to Telegram, no message, no Redis write
            assert state() == before
            assert unwritten(await redis_state(h), redis_before)
            assert await h.svc.tables.where(alice.id) is None
            assert not any(has_lobby_buttons(m) for m in alice.messages())

            # the same update with the secret is taken and acted on (so the refusals
            # above are what kept it from creating her lobby)
            update = forged_command(alice, "/new chuvash", 900_100)
            headers = {SECRET_HEADER: h.secret}
            async with session.post(h.webhook_url, json=update, headers=headers) as resp:
                assert resp.status == 200
        await alice.wait_message(has_lobby_buttons, timeout=SAFETY)
        table = await h.svc.tables.where(alice.id)
        assert table is not None
        assert table.variant == "chuvash"
        assert sum(has_lobby_buttons(m) for m in alice.messages()) == 1
        assert not unwritten(await redis_state(h), redis_before)
    assert fake.stats.calls["getUpdates"] == 0
    assert not fake.stats.errors, fake.stats.error_texts


def webhook_is(fake: FakeTelegram, url: str) -> Callable[[], bool]:
    return lambda: fake.world.webhook.get("url") == url


@pytest.mark.slow
async def test_python_m_telegram_bot_in_webhook_mode(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    """The process itself: ``python -m telegram_bot`` with WEBHOOK_* in its
    environment listens on WEBHOOK_HOST:WEBHOOK_PORT, answers through the webhook,
    refuses a POST without the secret, and stops cleanly on Ctrl-C (SIGINT)."""
    world = fake.world
    secret = secrets.token_urlsafe(24)
    log = tmp_path / "bot.log"
    proc: asyncio.subprocess.Process | None = None
    url = ""
    for _attempt in range(3):  # the free port may be taken meanwhile: try another
        port = free_loopback_port()
        url = f"http://127.0.0.1:{port}{PATH}"
        env = {
            **os.environ,
            "BOT_TOKEN": fake.token,
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": redis_prefix,
            "TELEGRAM_API_URL": fake.url,
            "WEBHOOK_URL": url,
            "WEBHOOK_SECRET": secret,
            "WEBHOOK_HOST": "127.0.0.1",
            "WEBHOOK_PORT": str(port),
            "WEBHOOK_PATH": PATH,
            "FLOOD_LIMITER": "false",
            "DEFAULT_TIMER": "0",
        }
        with log.open("wb") as out:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "telegram_bot", env=env, stdout=out, stderr=out
            )
        exited = asyncio.create_task(proc.wait())
        webhook = asyncio.create_task(world.wait_for(webhook_is(fake, url), SAFETY, "setWebhook"))
        done, _ = await asyncio.wait({exited, webhook}, return_when=asyncio.FIRST_COMPLETED)
        if webhook in done:
            exited.cancel()
            webhook.result()
            break
        webhook.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await webhook
        if "address already in use" not in log.read_text().lower():
            break
    assert proc is not None
    try:
        assert world.webhook.get("url") == url, log.read_text()
        assert world.webhook["secret_token"] == secret

        alice = fake.add_user("Alice")
        alice.start()
        welcome = await alice.wait_message(timeout=SAFETY)
        assert welcome.buttons  # the welcome's "add to a group" button
        async with aiohttp.ClientSession() as session:
            update = forged_command(alice, "/new chuvash", 900_000)
            async with session.post(url, json=update) as resp:
                assert resp.status in (401, 403)
            headers = {SECRET_HEADER: "not-" + secret}
            async with session.post(url, json=update, headers=headers) as resp:
                assert resp.status in (401, 403)
        alice.send("/new chuvash")  # the same, from Telegram with the secret
        await alice.wait_message(has_lobby_buttons, timeout=SAFETY)
        assert sum(has_lobby_buttons(m) for m in alice.messages()) == 1
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGINT)
        try:
            code = await asyncio.wait_for(proc.wait(), SAFETY)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise
    assert code == 0, log.read_text()
    assert "Webhook mode" in log.read_text()
    assert fake.stats.calls["getUpdates"] == 0
    assert not fake.stats.errors, fake.stats.error_texts


def test_the_derived_secret_token() -> None:
    """Stable per bot token (every process agrees), in Telegram's alphabet, and
    WEBHOOK_SECRET wins; a WEBHOOK_SECRET Telegram would refuse fails at start."""
    a = Settings(bot_token="123:AAA").secret_token()
    assert a == Settings(bot_token="123:AAA").secret_token()
    assert a != Settings(bot_token="123:AAB").secret_token()
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,256}", a)
    assert "123" not in a
    assert Settings(bot_token="123:AAA", webhook_secret="s3cr-t_").secret_token() == "s3cr-t_"
    with pytest.raises(ValidationError):
        Settings(bot_token="123:AAA", webhook_secret="with space")
