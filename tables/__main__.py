"""Command line of the table service: ``python -m tables recompute-ratings``
replays the ratings log (every counted rated game it keeps, #38) and compares
the result with the stored ratings (#25, :meth:`tables.ratings.Ratings.recompute`).
Prints the games replayed, the players and each mismatch; exits 0 when every
stored rating is reproduced exactly, 1 otherwise, 2 when Redis cannot be
reached.  ``python -m tables migrate-ratings [--keep]`` moves the rating data
of before #38 (one ``{rt}`` slot) to each player's slot, once, fills each
player's recent opponents (the opponent-diversity guard) from the games
recorded in its window (:mod:`tables.migrate`), and prints what it moved and
filled.  ``REDIS_URL`` (default ``redis://127.0.0.1:6379/0``) and
``REDIS_PREFIX`` (default ``durak:``) name the data, as for the bot."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from tables.model import LiveConfig, LiveError, ServiceUnavailable
from tables.service import TableService


async def _recompute(url: str, prefix: str) -> int:
    svc = TableService.from_url(url, LiveConfig(prefix=prefix))
    try:
        out = await svc.ratings.recompute()
    finally:
        await svc.aclose()
    report = {
        "games": out.games,
        "players": out.players,
        "mismatches": [
            {"user": u, "variant": v, "stored": have.public(), "replayed": want.public()}
            for u, v, have, want in out.mismatches
        ],
    }
    json.dump(report, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 1 if out.mismatches else 0


async def _migrate(url: str, prefix: str, keep: bool) -> int:
    from tables.migrate import migrate_ratings

    svc = TableService.from_url(url, LiveConfig(prefix=prefix))
    try:
        out = await migrate_ratings(svc, keep=keep)
    finally:
        await svc.aclose()
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tables", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("recompute-ratings", help="replay the ratings log and compare")
    r.add_argument("--redis", default=os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0")
    r.add_argument("--prefix", default=os.environ.get("REDIS_PREFIX") or "durak:")
    m = sub.add_parser(
        "migrate-ratings",
        help="move the ratings of before #38 to per-player slots, fill recent opponents",
    )
    m.add_argument("--redis", default=os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0")
    m.add_argument("--prefix", default=os.environ.get("REDIS_PREFIX") or "durak:")
    m.add_argument("--keep", action="store_true", help="keep the old keys once copied")
    args = p.parse_args(argv)
    try:
        if args.command == "migrate-ratings":
            return asyncio.run(_migrate(args.redis, args.prefix, args.keep))
        return asyncio.run(_recompute(args.redis, args.prefix))
    except (LiveError, ServiceUnavailable) as e:
        print(f"error: {e.code}: {e.message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
