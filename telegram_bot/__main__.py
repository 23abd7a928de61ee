"""``python -m telegram_bot``: run the bot.

Long polling by default; webhook mode (an aiohttp server on ``WEBHOOK_HOST``:
``WEBHOOK_PORT``, Telegram's secret token checked) when ``WEBHOOK_URL`` is set.
SIGTERM (a deploy, a rolling restart) and SIGINT stop it gracefully within
``SHUTDOWN_TIMEOUT`` seconds: no new updates are taken, the ones in hand finish,
the turn timers are handed over to the other processes, pending edits go out
(#28).
Without ``BOT_TOKEN`` it explains how to get one and exits with 2; without
``REDIS_URL`` it says so and exits with 2 (``durak bot``, :mod:`durak.cli`,
starts an embedded ``redis-server`` then).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import sys
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from telegram_bot.settings import Settings

if TYPE_CHECKING:
    from telegram_bot.app import BotApp

log = logging.getLogger(__name__)

NO_TOKEN = """\
BOT_TOKEN is not set, so the bot cannot connect to Telegram.

To get a token:
  1. open Telegram and talk to @BotFather (https://t.me/BotFather);
  2. send /newbot, choose a name and a username ending in "bot";
  3. copy the token it gives you (looks like 123456789:AA...);
  4. optional, for the Share button: send /setinline to @BotFather and pick your bot.
Then run:
  BOT_TOKEN=123456789:AA... bash .ci/dev run

Other settings (environment variables): REDIS_URL (`durak bot` starts an
embedded local redis-server when it is unset), TELEGRAM_API_URL (default
https://api.telegram.org), WEBHOOK_URL and WEBHOOK_SECRET (webhook mode instead of
long polling); see the README.
"""

NO_REDIS = """\
REDIS_URL is not set, so the bot has no Redis to keep its games in.

Set REDIS_URL (e.g. REDIS_URL=redis://127.0.0.1:6379/0), or run `durak bot`
instead: it starts an embedded redis-server when REDIS_URL is unset.
"""


async def run(
    settings: Settings, *, app: BotApp | None = None, sock: socket.socket | None = None
) -> None:
    """The bot until cancelled: webhook mode when ``WEBHOOK_URL`` is set, else long
    polling. ``app`` (default: a new one) is closed at the end; ``sock``: see
    :func:`run_webhook`."""
    from telegram_bot.app import BotApp

    if app is None:
        app = BotApp(settings)
    terminate = _on_sigterm(asyncio.current_task())
    try:
        await app.setup()
        if settings.webhook_url:
            await run_webhook(app, settings, sock=sock)
        else:
            async with serve_miniapp(app, settings):
                await app.wait_for_redis()  # no update taken before Redis answers (#28)
                await app.bot.delete_webhook(drop_pending_updates=False)
                await app.run_polling()
    finally:
        terminate()
        await app.aclose()


@contextlib.asynccontextmanager
async def serve_miniapp(app: BotApp, settings: Settings) -> AsyncIterator[None]:
    """Long polling has no web server: the Mini App's (#42) gets one of its own
    on ``MINIAPP_HOST``:``MINIAPP_PORT`` while the bot runs (none when the
    Mini App is off or the port is 0; in webhook mode the webhook's server
    serves it, :func:`run_webhook`)."""
    if app.page_server is None or not settings.miniapp_port:
        yield
        return
    from aiohttp import web

    from telegram_bot.miniapp.server import mount

    root = web.Application()
    mount(root, settings.miniapp_path, app.page_server.web_app())
    runner = web.AppRunner(root, shutdown_timeout=min(5.0, settings.shutdown_timeout / 4))
    await runner.setup()
    try:
        site = web.TCPSite(runner, settings.miniapp_host, settings.miniapp_port)
        await site.start()
        log.info("Mini App: %s -> %s%s/", settings.miniapp_url, site.name, settings.miniapp_path)
        yield
    finally:
        await runner.cleanup()


def _on_sigterm(task: asyncio.Task[object] | None) -> Callable[[], None]:
    """SIGTERM cancels ``task`` (the bot's), as Ctrl-C does to ``asyncio.run``'s
    task, so its ``finally`` stops it gracefully (#28); the returned function
    puts the default back.  Nothing where signals cannot be handled (not the
    main thread, not a Unix event loop)."""
    loop = asyncio.get_running_loop()
    if task is None:
        return lambda: None
    try:
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    except (NotImplementedError, RuntimeError, ValueError):
        return lambda: None

    def restore() -> None:
        loop.remove_signal_handler(signal.SIGTERM)

    return restore


async def run_webhook(
    app: BotApp, settings: Settings, *, sock: socket.socket | None = None
) -> None:
    """Webhook mode until cancelled: an aiohttp server on ``WEBHOOK_HOST``:
    ``WEBHOOK_PORT`` (or on ``sock``, a bound socket) takes Telegram's POSTs at
    ``WEBHOOK_PATH`` -- refusing those without the secret token (401;
    ``WEBHOOK_SECRET``, or one derived from the bot token) -- and
    ``setWebhook`` registers ``WEBHOOK_URL`` with that secret and the update types
    the routers use (as long polling asks for).

    ``GET /healthz`` answers 200 while Redis answers, 503 otherwise.  A process
    started while Redis cannot be reached serves it at once, answers Telegram's
    POSTs with 503 (Telegram delivers them again later) and calls ``setWebhook``
    only once Redis answered (:meth:`BotApp.wait_for_redis`, #28)."""
    from aiogram.webhook.aiohttp_server import SimpleRequestHandler, setup_application

    class _Handler(SimpleRequestHandler):
        async def close(self) -> None:
            """aiogram would close the bot's HTTP session as the web app shuts down,
            before the updates in hand finish and pending edits are flushed;
            ``app.aclose`` closes it at the very end instead."""

    from aiohttp import web

    from tables import ServiceUnavailable

    @web.middleware
    async def until_ready(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path == settings.webhook_path and not app.ready.is_set():
            return web.Response(status=503, text="not ready: Redis does not answer yet")
        response: web.StreamResponse = await handler(request)
        return response

    async def healthz(_request: web.Request) -> web.Response:
        if not app.ready.is_set():
            return web.json_response({"ready": False}, status=503)
        try:
            await app.svc.admin.ping()
        except ServiceUnavailable as e:
            return web.json_response({"ready": True, "redis": str(e)}, status=503)
        return web.json_response({"ready": True, "redis": "ok"})

    web_app = web.Application(middlewares=[until_ready])
    web_app.router.add_get("/healthz", healthz)
    if app.page_server is not None:  # #42: the Mini App behind the same HTTPS host
        from telegram_bot.miniapp.server import mount

        mount(web_app, settings.miniapp_path, app.page_server.web_app())
    secret = settings.secret_token()
    handler = _Handler(app.dp, app.bot, secret_token=secret)
    handler.register(web_app, path=settings.webhook_path)
    setup_application(web_app, app.dp, bot=app.bot)
    # a request is short (aiogram handles the update in a task of its own)
    runner = web.AppRunner(web_app, shutdown_timeout=min(5.0, settings.shutdown_timeout / 4))
    await runner.setup()
    try:
        site: web.BaseSite
        if sock is not None:
            site = web.SockSite(runner, sock)
        else:
            site = web.TCPSite(runner, settings.webhook_host, settings.webhook_port)
        await site.start()
        await app.wait_for_redis()
        await app.bot.set_webhook(
            settings.webhook_url,
            secret_token=secret,
            allowed_updates=app.dp.resolve_used_update_types(),
        )
        app.start_background()
        print(
            f"Webhook mode: {settings.webhook_url} -> {site.name}{settings.webhook_path}",
            flush=True,
        )
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()  # no new updates from here on
        await app.stop_background()  # lets the updates in hand finish first


def main(settings: Settings | None = None) -> int:
    """The bot with ``settings`` (default: from the environment) until Ctrl-C."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if settings is None:
        settings = Settings()
    if not settings.bot_token:
        sys.stderr.write(NO_TOKEN)
        return 2
    from telegram_bot.views.i18n import CatalogError, get_i18n

    try:
        get_i18n()
    except CatalogError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    if not settings.redis_url:
        sys.stderr.write(NO_REDIS)
        return 2
    # Ctrl-C: KeyboardInterrupt; SIGTERM: the bot's task cancelled (_on_sigterm)
    with contextlib.suppress(KeyboardInterrupt, asyncio.CancelledError):
        asyncio.run(run(settings))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
