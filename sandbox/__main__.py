"""``python -m sandbox [--port N]``: the sandbox on its own.

Uses ``REDIS_URL`` when set, else starts an embedded throw-away redis-server
(:mod:`sandbox.local_redis`). Prints the page's URL and runs until Ctrl-C (or SIGTERM), then stops cleanly.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Iterator

from sandbox.page import run_sandbox


async def _serve(redis_url: str, port: int, admin_url: str | None) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)

    def ready(url: str) -> None:
        print(f"Sandbox: {url}  (Ctrl-C to stop)", flush=True)

    await run_sandbox(
        redis_url=redis_url, port=port, admin_url=admin_url, on_ready=ready, stop=stop
    )


@contextlib.contextmanager
def _redis_url() -> Iterator[str]:
    url = os.environ.get("REDIS_URL", "")
    if url:
        yield url
        return
    from sandbox.local_redis import LocalRedis

    with LocalRedis() as server:
        yield server.url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox",
        description="Play the bot in a browser, without Telegram.",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    parser.add_argument("--admin-url", default=None, help="link to an admin API to show")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    from sandbox.local_redis import LocalRedisError
    from telegram_bot.i18n import CatalogError

    try:
        with _redis_url() as url, contextlib.suppress(KeyboardInterrupt):
            asyncio.run(_serve(url, args.port, args.admin_url))
    except (LocalRedisError, CatalogError) as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
