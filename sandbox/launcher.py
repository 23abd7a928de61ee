"""``durak run`` (what ``bash .ci/dev run`` runs; also ``python -m
sandbox.launcher``): the whole product on one machine.

* Redis: ``REDIS_URL``, or an embedded ``redis-server`` whose data stays in
  ``.run/redis`` (so games survive a restart of the product); one per data folder
  (``.run/redis/redis.lock``), restarted if it dies;
* the admin API under gunicorn on ``127.0.0.1:$ADMIN_PORT`` (default 8000), with
  ``ADMIN_TOKEN`` from the environment or generated once into ``.run/admin_token``
  (mode 0600; the token is never printed, only where it is) -- the app the caller
  names: ``durak run`` names the product's (``durak.wiring:admin_app()``, the
  bot's flood budgets wired in), ``python -m sandbox.launcher`` the bare
  ``admin_api:create_app()`` (its ``/flood/budgets`` lists none);
* with ``BOT_TOKEN``: the bot (long polling, or webhook mode with ``WEBHOOK_URL``);
  without it: the local sandbox -- the real bot on the bundled fake Bot API with a
  Telegram-like web page -- and one URL to open (the fake's flood limits:
  ``FAKE_LIMITS``, ``FAKE_EPHEMERAL_COUNTED``, :func:`sandbox.page.server.sandbox_limits`).

SIGTERM, SIGHUP and SIGINT (Ctrl-C) stop the bot or the sandbox, then gunicorn,
then the embedded redis-server (a signal inherited as ignored, as under
``nohup``, stays ignored).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

from telegram_bot.settings import Settings

RUN_DIR = Path(os.environ.get("DURAK_RUN_DIR", ".run"))


def say(text: str) -> None:
    print(text, flush=True)


@contextlib.contextmanager
def redis_url(settings: Settings) -> Iterator[str]:
    if settings.redis_url:
        say(f"Redis: {settings.redis_url} (REDIS_URL)")
        yield settings.redis_url
        return
    from sandbox.local_redis import LocalRedis, LocalRedisError, LocalRedisLocked

    try:
        server = LocalRedis(data_dir=(RUN_DIR / "redis").resolve())
        with server:
            server.supervise()
            say(
                f"Redis: embedded redis-server (pid {server.pid}) at {server.url}, "
                f"data in {server.data_dir} (set REDIS_URL to use your own)"
            )
            yield server.url
    except LocalRedisLocked as e:
        raise SystemExit(f"{e}") from None
    except LocalRedisError as e:
        raise SystemExit(
            f"{e}\nInstall redis-server (apt-get install redis-server) or set REDIS_URL."
        ) from None


def admin_token() -> tuple[str, str]:
    """The token and where it comes from (never printed: only its place is)."""
    token = os.environ.get("ADMIN_TOKEN", "")
    if token:
        return token, "ADMIN_TOKEN"
    path = RUN_DIR / "admin_token"
    if path.exists():
        return path.read_text().strip(), str(path)
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token, f"{path} (mode 0600)"


GUNICORN_OPTIONS = [
    "--workers", "1",
    "--log-level", "warning",
    # gunicorn's own errors (414, 431, 400) in the API's JSON format
    "--worker-class", "admin_api.gunicorn_worker.JsonErrorWorker",
    # the request line may be 8190 bytes (gunicorn's maximum): the app's own limit on
    # path + query (ADMIN_MAX_URL, 4000) answers first, so over-long URLs get a JSON 414
    "--limit-request-line", "8190",
    "--limit-request-fields", "50",
    "--limit-request-field_size", "8190",
]  # fmt: skip
"""Options of the admin API's gunicorn (``--bind`` comes on top)."""

ADMIN_APP = "admin_api:create_app()"
"""The admin API app without the bot's flood budgets (``python -m sandbox.launcher``);
``durak run`` passes the product's own (:mod:`durak.wiring`)."""


def _port_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


ADMIN_DOCS = "/openapi/swagger"
"""The admin API's interactive docs (flask-openapi3's Swagger UI under its
``doc_prefix``): what the sandbox page's *Admin API* button opens -- the API's
``/`` is a JSON 404 (issue 13)."""


@contextlib.contextmanager
def admin_api(url: str, prefix: str, app: str = ADMIN_APP) -> Iterator[str | None]:
    port = int(os.environ.get("ADMIN_PORT", "8000"))
    if not _port_free(port):
        say(f"Admin API: port {port} is taken, not started (set ADMIN_PORT)")
        yield None
        return
    token, where = admin_token()
    env = dict(os.environ, REDIS_URL=url, REDIS_PREFIX=prefix, ADMIN_TOKEN=token)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", app,
         "--bind", f"127.0.0.1:{port}", *GUNICORN_OPTIONS],
        env=env,
        start_new_session=True,  # stopped by us after the bot, not by the terminal's Ctrl-C
    )  # fmt: skip
    try:  # from here on a signal (see _StopSignals) still stops gunicorn
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None and _port_free(port):
            time.sleep(0.1)
        if proc.poll() is not None:
            say("Admin API: gunicorn exited; see its messages above")
            yield None
            return
        say(
            f"Admin API: {base}/api/v1  docs {base}{ADMIN_DOCS}  "
            f"(gunicorn pid {proc.pid}; Bearer token in {where})"
        )
        yield base
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


async def _sandbox(url: str, admin_url: str | None) -> None:
    from sandbox.page import describe_limits, run_sandbox, sandbox_limits

    limits = sandbox_limits()
    fake = describe_limits(limits)

    def ready(page: str) -> None:
        say(f"\nSandbox (no BOT_TOKEN set): open {page}\n" + (f"({fake})\n" if fake else ""))

    await run_sandbox(redis_url=url, admin_url=admin_url, on_ready=ready, limits=limits)


class Stopped(KeyboardInterrupt):
    """SIGTERM / SIGHUP / SIGINT in the main thread: unwinds the context managers,
    which stop the bot or sandbox, gunicorn and Redis (see :class:`_StopSignals`)."""


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


class _StopSignals:
    """SIGTERM, SIGHUP and SIGINT stop the launcher once; later ones are ignored so
    that the shutdown is not interrupted, and a signal inherited as ignored
    (``nohup``, a background job's SIGINT) stays ignored.

    Python runs a handler in the main thread at whatever bytecode it is on, so the
    handler raises :class:`Stopped` only before the event loop runs (Redis and
    gunicorn starting: plain code under context managers).  Raised inside the running
    loop, the exception can land in the loop's own bookkeeping -- a task's wake-up is
    lost, and ``asyncio.run`` waits for that task forever while cancelling the rest
    -- or in a weakref callback or a ``__del__``, where Python drops it ("Exception
    ignored in ..."): either way the launcher never got to stop gunicorn and
    redis-server, which outlived it.  So while the loop runs a signal cancels the
    main task (from the loop: ``call_soon_threadsafe``), and from there on it is only
    noted: the launcher is on its way out; :meth:`run` raises :class:`Stopped` once
    the loop is closed."""

    def __init__(self) -> None:
        self.received = ""  # the first stop signal's name
        self.raising = True  # until the event loop starts
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None

    def install(self) -> None:
        for sig in STOP_SIGNALS:
            if signal.getsignal(sig) is not signal.SIG_IGN:
                signal.signal(sig, self._handler)

    def _handler(self, signum: int, _frame: object) -> None:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        self.received = signal.Signals(signum).name
        if self._loop is not None and self._task is not None:
            self._loop.call_soon_threadsafe(self._task.cancel)
        elif self.raising:
            raise Stopped(self.received)

    def run(self, main: Coroutine[Any, Any, None]) -> None:
        """``asyncio.run(main)``, its task cancelled by a stop signal; then
        :class:`Stopped` if one came (even before, its exception lost in a finalizer)."""
        self.raising = False
        asyncio.run(self._cancelled_by_signals(main))
        if self.received:
            raise Stopped(self.received)

    async def _cancelled_by_signals(self, main: Coroutine[Any, Any, None]) -> None:
        self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()
        try:
            if self.received:  # came while the loop started
                main.close()
                return
            await main
        except asyncio.CancelledError:
            if not self.received:
                raise
        finally:
            self._loop = self._task = None


def main(admin_app: str = ADMIN_APP) -> int:
    """The whole product; ``admin_app``: the admin API gunicorn serves (its
    ``module:call()`` spelling)."""
    stop = _StopSignals()
    stop.install()
    logging.basicConfig(
        level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    settings = Settings()
    from telegram_bot.views.i18n import CatalogError, get_i18n

    try:
        get_i18n()
    except CatalogError as e:
        sys.stderr.write(f"{e}\n")
        return 2
    if not settings.bot_token:
        from sandbox.page import sandbox_limits

        try:  # FAKE_LIMITS, FAKE_EPHEMERAL_COUNTED: 1 or 0, said before Redis starts
            sandbox_limits()
        except ValueError as e:
            sys.stderr.write(f"{e}\n")
            return 2
    try:
        with redis_url(settings) as url, admin_api(url, settings.redis_prefix, admin_app) as admin:
            settings = settings.model_copy(update={"redis_url": url})
            if settings.bot_token:
                from telegram_bot.__main__ import run

                logging.getLogger().setLevel(logging.INFO)
                say("Bot: connecting to " + settings.telegram_api_url)
                stop.run(run(settings))
            else:
                stop.run(_sandbox(url, admin + ADMIN_DOCS if admin else None))
    except KeyboardInterrupt as stopped:  # Stopped, or a Ctrl-C before our handler
        say(f"Stopped ({stopped or 'SIGINT'}): the bot or sandbox, gunicorn and Redis are down")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
