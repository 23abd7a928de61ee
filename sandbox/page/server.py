"""The sandbox: the fake Bot API, the real bot polling it, and the web page.

One aiohttp server on loopback serves all three parts on one port:

* ``/``, ``/static/...``  -- the page (``static/``: plain HTML, CSS and JS);
* ``/_sandbox/config``    -- what the page needs to know (bot, admin API link);
* ``/bot<token>/<method>``, ``/_fake/...`` -- the fake Telegram
  (:mod:`sandbox.fake_api`), which the bot long-polls and the page drives.

The bot is the production one (:class:`telegram_bot.app.BotApp`: aiogram, the
table service on Redis, the publisher, timers), only its ``TELEGRAM_API_URL`` is
the fake's URL.

The fake's flood limits are off (the bot keeps Telegram's limits by itself)
unless ``FAKE_LIMITS=1``; then ``FAKE_EPHEMERAL_COUNTED`` (1 or 0) picks which
Telegram it plays -- ephemeral writes counted against the group's 20 a minute
or not (#24, :mod:`sandbox.fake_api.limits`).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import ipaddress
import json
import logging
import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from aiohttp import web

from sandbox.fake_api import FakeTelegram, RateLimits
from sandbox.fake_api.limits import EPHEMERAL_COUNTED_ENV, env_flag
from sandbox.fake_api.web_apps import THEMES
from telegram_bot.settings import Settings

log = logging.getLogger(__name__)

STATIC = Path(__file__).with_name("static")
LIMITS_ENV = "FAKE_LIMITS"

MINIAPP_PATH = "/miniapp/"
"""The Mini App's route on the bot's own HTTP server (#42): the sandbox's
``MINIAPP_URL`` is ``http://127.0.0.1:<the bot's port>`` + this."""
MINIAPP_SHORT_NAME = "table"
"""The short name the sandbox registers for the bot's Mini App (@BotFather's
``/newapp``), so a group's button is the app's direct link."""


def free_port(host: str = "127.0.0.1") -> int:
    """A port nothing listens on now (for the bot's own HTTP server)."""
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def miniapp_served() -> bool:
    """Does the bot serve its Mini App's page (the server's settings, among
    them ``TELEGRAM_WEB_APP_JS``, are there)?  Without it a Mini App button
    would open nothing."""
    return "telegram_web_app_js" in Settings.model_fields


def miniapp_settings(fake: FakeTelegram, host: str, port: int) -> dict[str, Any]:
    """What the sandbox's bot is told of its Mini App (#42): served by the bot
    itself on ``host:port`` under :data:`MINIAPP_PATH` (its HTTP server, as in
    webhook mode), registered with the fake as :data:`MINIAPP_SHORT_NAME`, and
    the fake's stand-in ``telegram-web-app.js`` instead of Telegram's."""
    url = f"http://{host}:{port}{MINIAPP_PATH}"
    fake.register_web_app(MINIAPP_SHORT_NAME, url)
    update: dict[str, Any] = {
        "miniapp_url": url,
        "miniapp_short_name": MINIAPP_SHORT_NAME,
        "webhook_host": host,
        "webhook_port": port,
    }
    if "telegram_web_app_js" in Settings.model_fields:  # the Mini App's server's setting
        update["telegram_web_app_js"] = fake.web_app_js
    return update


def sandbox_limits(environ: Mapping[str, str] | None = None) -> RateLimits:
    """The sandbox's flood limits as the environment picks them: off, unless
    ``FAKE_LIMITS=1`` -- then Telegram's, ephemeral writes counted in the group or
    not as ``FAKE_EPHEMERAL_COUNTED`` says (:meth:`RateLimits.from_env`).  Raises
    ValueError when either is not a yes or a no."""
    env = os.environ if environ is None else environ
    limits = RateLimits.from_env(env)  # read even when off: a typo is said at once
    if env_flag(LIMITS_ENV, False, env):
        return limits
    if env.get(EPHEMERAL_COUNTED_ENV, "").strip():
        log.warning(
            "%s has no effect: the sandbox's fake has no flood limits unless %s=1",
            EPHEMERAL_COUNTED_ENV,
            LIMITS_ENV,
        )
    return RateLimits.off()


def describe_limits(limits: RateLimits) -> str:
    """What the sandbox's fake counts, for the line that gives the page's URL
    (nothing when its limits are off, the default)."""
    if not limits.enabled:
        return ""
    counted = "counted" if limits.ephemeral_counted else "not counted"
    return (
        f"fake Bot API with Telegram's flood limits, ephemeral writes {counted} "
        "in the group's 20 a minute"
    )


@dataclass(frozen=True)
class SimPerson:
    """A simulated Telegram user the sandbox starts with."""

    first_name: str
    username: str
    language_code: str


DEFAULT_USERS = (
    SimPerson("Alice", "alice", "en"),
    SimPerson("Bob", "bob", "en"),
    SimPerson("Carol", "carol", "ru"),
)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class PageTelegram(FakeTelegram):
    """The fake Telegram plus the page's routes on the same server."""

    def __init__(self, *, page_config: dict[str, Any], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.page_config = page_config

    def make_app(self) -> web.Application:
        app = super().make_app()
        app.router.add_get("/", self._index)
        app.router.add_get("/_sandbox/config", self._config)
        app.router.add_get("/favicon.ico", self._favicon)  # no 404 on every load (#29)
        app.router.add_static("/static/", STATIC, show_index=False, append_version=False)
        app.middlewares.append(_no_cache)
        return app

    async def _index(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC / "index.html")

    async def _favicon(self, request: web.Request) -> web.StreamResponse:
        return web.FileResponse(STATIC / "favicon.svg", headers={"Content-Type": "image/svg+xml"})

    async def _config(self, request: web.Request) -> web.Response:
        body = {
            **self.page_config,
            "bot": self.world.bot.to_api(),
            "languages": ["en", "ru", "uk"],
            "web_app_themes": THEMES,  # the Mini App frame's light and dark (#42)
        }
        return web.json_response(body, dumps=lambda o: json.dumps(o, ensure_ascii=False))


@web.middleware
async def _no_cache(
    request: web.Request, handler: Callable[[web.Request], Any]
) -> web.StreamResponse:
    response: web.StreamResponse = await handler(request)
    if request.path == "/" or request.path.startswith(("/static/", "/_sandbox/")):
        response.headers["Cache-Control"] = "no-store"
    return response


class Sandbox:
    """The fake Telegram, the real bot on it and the page; ``async with`` or
    ``await start()`` / ``await stop()``.

    ``settings`` are the bot's (default: from the environment, like the admin
    API's, so both see the same games; token, API URL and Redis URL are
    replaced). ``limits``: the fake's flood limits (default off: the bot keeps
    Telegram's limits by itself).  ``miniapp``: the bot's Mini App on (#42,
    :func:`miniapp_settings`): its buttons open it in the page's phone frame
    (``durak sandbox`` turns it on, :func:`run_sandbox`).
    """

    def __init__(
        self,
        *,
        redis_url: str,
        host: str = "127.0.0.1",
        port: int = 0,
        admin_url: str | None = None,
        settings: Settings | None = None,
        users: tuple[SimPerson, ...] = DEFAULT_USERS,
        limits: RateLimits | None = None,
        miniapp: bool = False,
    ) -> None:
        if not is_loopback(host):
            raise ValueError(f"the sandbox serves on loopback only, not on {host!r}")
        self.redis_url = redis_url
        self.users = users
        base = settings or Settings()
        self.fake = PageTelegram(
            page_config={"admin_url": admin_url},
            limits=limits or RateLimits.off(),
            host=host,
            port=port,
        )
        self._base_settings = base
        self.host = host
        self.miniapp = miniapp
        self.app: Any = None  # telegram_bot.app.BotApp once started
        self._polling: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        """The page's address (``http://127.0.0.1:PORT/``)."""
        return self.fake.url + "/" if self.fake.url else ""

    @property
    def polling(self) -> asyncio.Task[None] | None:
        """The bot's long-polling task (done only when the bot stopped)."""
        return self._polling

    async def start(self) -> str:
        from telegram_bot.app import BotApp
        from telegram_bot.views.i18n import get_i18n

        get_i18n()  # fail early (CatalogError) when the translations are not compiled
        api_url = await self.fake.start()
        try:
            for person in self.users:
                self.fake.add_user(
                    person.first_name,
                    username=person.username,
                    language_code=person.language_code,
                )
            update: dict[str, Any] = {
                "bot_token": self.fake.token,
                "telegram_api_url": api_url,
                "redis_url": self.redis_url,
                "webhook_url": "",
            }
            if self.miniapp:  # the Mini App on the bot's own server (#42)
                update |= miniapp_settings(self.fake, self.host, free_port(self.host))
            settings = self._base_settings.model_copy(update=update)
            self.app = BotApp(settings)
            await self.app.setup()
            self._polling = asyncio.create_task(
                self.app.run_polling(handle_signals=False), name="sandbox-bot"
            )
        except BaseException:
            await self.stop()
            raise
        return self.url

    async def stop(self) -> None:
        if self.app is not None:
            if self._polling is not None:
                await self.app.stop_polling()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.wait_for(asyncio.shield(self._polling), 10)
                if not self._polling.done():
                    self._polling.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await self._polling
                self._polling = None
            await self.app.aclose()
            self.app = None
        await self.fake.stop()

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()


async def run_sandbox(
    *,
    redis_url: str,
    host: str = "127.0.0.1",
    port: int = 0,
    admin_url: str | None = None,
    on_ready: Callable[[str], Any] | None = None,
    settings: Settings | None = None,
    stop: asyncio.Event | None = None,
    limits: RateLimits | None = None,
    miniapp: bool | None = None,
) -> None:
    """Run the sandbox until ``stop`` is set or the task is cancelled.

    ``on_ready(url)`` (a function or a coroutine function) gets the page's URL
    once everything is up. Raises if the bot's polling stops by itself.
    ``limits``: the fake's (default: :func:`sandbox_limits`, from the environment).
    ``miniapp``: the bot's Mini App on (#42; default: when the bot serves it,
    :func:`miniapp_served`).
    """
    async with Sandbox(
        redis_url=redis_url,
        host=host,
        port=port,
        admin_url=admin_url,
        settings=settings,
        limits=limits or sandbox_limits(),
        miniapp=miniapp_served() if miniapp is None else miniapp,
    ) as sandbox:
        if on_ready is not None:
            result = on_ready(sandbox.url)
            if inspect.isawaitable(result):
                await result
        stopped = asyncio.create_task((stop or asyncio.Event()).wait())
        polling = sandbox.polling
        assert polling is not None
        try:
            await asyncio.wait({stopped, polling}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stopped
        if polling.done() and not (stop is not None and stop.is_set()):
            error = None if polling.cancelled() else polling.exception()
            raise RuntimeError("the sandbox bot stopped polling") from error
