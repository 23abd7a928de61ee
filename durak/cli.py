"""The ``durak`` command: the product's programs, each with the local comforts.

    durak bot        the bot (``python -m telegram_bot``); with REDIS_URL unset it
                     starts an embedded throw-away redis-server first
    durak admin      the admin API under gunicorn (``python -m admin_api``, with the
                     bot's flood budgets wired in: :mod:`durak.wiring`)
    durak sandbox    the real bot on the fake Bot API with its web page
                     (``python -m sandbox``); REDIS_URL, else an embedded server
    durak run        the whole product on this machine (:mod:`sandbox.launcher`,
                     what ``bash .ci/dev run`` runs)

This package sits on top of everything: ``telegram_bot`` and ``admin_api`` know
nothing of it (nor of each other), and the embedded Redis and the fake Telegram
are wired in here from the sandbox, the bot's flood budgets into the admin API
in :mod:`durak.wiring`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from sandbox.local_redis import LocalRedis, LocalRedisError
from sandbox.standalone import add_sandbox_arguments, sandbox


def build_parser(prog: str = "durak") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Chuvash Rooster and Durak Shchelkovsky on Telegram: the bot, "
        "its admin API, and a local sandbox to play it without Telegram.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub.add_parser(
        "bot",
        help="run the bot (BOT_TOKEN; an embedded redis-server when REDIS_URL is unset)",
    )
    sub.add_parser("admin", help="run the admin API under gunicorn (ADMIN_TOKEN, REDIS_URL)")
    add_sandbox_arguments(
        sub.add_parser("sandbox", help="play the bot in a browser, without Telegram")
    )
    sub.add_parser(
        "run", help="the whole product: Redis, the admin API, and the bot or the sandbox"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command: str = args.command
    if command == "bot":
        return bot()
    if command == "admin":
        return admin()
    if command == "sandbox":
        return sandbox(args.port, args.admin_url)
    from durak.wiring import ADMIN_APP
    from sandbox.launcher import main as run_product

    return run_product(admin_app=ADMIN_APP)


def bot() -> int:
    """``python -m telegram_bot``, with an embedded redis-server when REDIS_URL is
    unset (its data is lost when the bot stops)."""
    from telegram_bot.__main__ import main as bot_main
    from telegram_bot.settings import Settings

    settings = Settings()
    if settings.redis_url or not settings.bot_token:
        return bot_main(settings)
    try:
        server = LocalRedis()
    except LocalRedisError as e:
        sys.stderr.write(f"{e}\nInstall redis-server or set REDIS_URL.\n")
        return 2
    with server:
        print(
            f"REDIS_URL is not set: using an embedded redis-server at {server.url} "
            "(its data is lost when the bot stops; set REDIS_URL to keep games).",
            flush=True,
        )
        return bot_main(settings.model_copy(update={"redis_url": server.url}))


def admin() -> int:
    """``python -m admin_api``; gunicorn is looked up next to this Python first, so
    ``.venv/bin/durak admin`` works without an activated virtualenv."""
    from admin_api.__main__ import main as admin_main
    from durak.wiring import ADMIN_APP, admin_app

    bindir = str(Path(sys.executable).parent)
    os.environ["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])
    return admin_main(ADMIN_APP, admin_app)


if __name__ == "__main__":
    raise SystemExit(main())
