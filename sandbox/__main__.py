"""``python -m sandbox [--port N] [--admin-url URL]``: the sandbox on its own
(``durak sandbox``, :func:`sandbox.standalone.sandbox`).

Uses ``REDIS_URL`` when set, else starts an embedded throw-away redis-server
(:mod:`sandbox.local_redis`). Prints the page's URL and runs until Ctrl-C (or
SIGTERM), then stops cleanly.
"""

from __future__ import annotations

import argparse

from sandbox.standalone import add_sandbox_arguments, sandbox


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox", description="Play the bot in a browser, without Telegram."
    )
    add_sandbox_arguments(parser)
    args = parser.parse_args(argv)
    return sandbox(args.port, args.admin_url)


if __name__ == "__main__":
    raise SystemExit(main())
