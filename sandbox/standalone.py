"""The sandbox on its own (``durak sandbox``, ``python -m sandbox``): the real bot
on the fake Bot API with its web page, on ``REDIS_URL`` or an embedded
throw-away redis-server.  The fake's flood limits: ``FAKE_LIMITS`` and
``FAKE_EPHEMERAL_COUNTED`` (:func:`sandbox.page.server.sandbox_limits`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from sandbox.local_redis import LocalRedis, LocalRedisError

if TYPE_CHECKING:
    from sandbox.fake_api import RateLimits


def add_sandbox_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    parser.add_argument("--admin-url", default=None, help="link to an admin API to show")


@contextlib.contextmanager
def _redis_url() -> Iterator[str]:
    url = os.environ.get("REDIS_URL", "")
    if url:
        yield url
        return
    with LocalRedis() as server:
        yield server.url


async def _serve(redis_url: str, port: int, admin_url: str | None, limits: RateLimits) -> None:
    from sandbox.page import describe_limits, run_sandbox

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)

    fake = describe_limits(limits)

    def ready(url: str) -> None:
        print(f"Sandbox: {url}  (Ctrl-C to stop{'; ' + fake if fake else ''})", flush=True)

    await run_sandbox(
        redis_url=redis_url,
        port=port,
        admin_url=admin_url,
        on_ready=ready,
        stop=stop,
        limits=limits,
    )


def sandbox(port: int = 0, admin_url: str | None = None) -> int:
    """The sandbox on its own: ``REDIS_URL``, else an embedded throw-away
    redis-server. Prints the page's URL and runs until Ctrl-C (or SIGTERM)."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    from sandbox.page import sandbox_limits
    from telegram_bot.views.i18n import CatalogError

    try:
        limits = sandbox_limits()
    except ValueError as exc:  # FAKE_LIMITS or FAKE_EPHEMERAL_COUNTED is not 1 or 0
        sys.stderr.write(f"{exc}\n")
        return 2
    try:
        with _redis_url() as url, contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(url, port, admin_url, limits))
    except (LocalRedisError, CatalogError) as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    return 0
