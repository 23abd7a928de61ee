"""Entry point: ``python -m telegram_bot`` (placeholder until the bot exists)."""

from __future__ import annotations

import sys

_MESSAGE = """\
The Telegram bot is not built yet.

When it is, it will be started with `bash .ci/dev run` (or `python -m telegram_bot`)
and configured through environment variables:

  BOT_TOKEN         Telegram bot token from @BotFather (required)
  REDIS_URL         Redis connection URL, e.g. redis://127.0.0.1:6379/0
                    (if unset: an embedded local redis-server)
  TELEGRAM_API_URL  Bot API server base URL (default: https://api.telegram.org)
"""


def main() -> int:
    sys.stdout.write(_MESSAGE)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
