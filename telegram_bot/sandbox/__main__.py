"""``python -m telegram_bot.sandbox [--port N]``: the sandbox on its own.

Uses ``REDIS_URL`` when set, else starts an embedded throw-away redis-server
(:mod:`engine.live.local_redis`). Prints the page's URL and runs until Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Iterator

from telegram_bot.sandbox.server import run_sandbox


@contextlib.contextmanager
def _redis_url() -> Iterator[str]:
    url = os.environ.get("REDIS_URL", "")
    if url:
        yield url
        return
    from engine.live.local_redis import LocalRedis

    with LocalRedis() as server:
        yield server.url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m telegram_bot.sandbox",
        description="Play the bot in a browser, without Telegram.",
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    parser.add_argument("--admin-url", default=None, help="link to an admin API to show")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    def ready(url: str) -> None:
        print(f"Sandbox: {url}  (Ctrl-C to stop)", flush=True)

    from engine.live.local_redis import LocalRedisError
    from telegram_bot.i18n import CatalogError

    try:
        with _redis_url() as url, contextlib.suppress(KeyboardInterrupt):
            asyncio.run(
                run_sandbox(redis_url=url, port=args.port, admin_url=args.admin_url, on_ready=ready)
            )
    except (LocalRedisError, CatalogError) as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
