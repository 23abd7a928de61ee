"""Ratings benchmark (#25): what settling a finished game costs, and whether the
ratings tell the AI levels apart.

``python bench/ratings.py [--games 2000] [--workers 2] [--seed 25]``

A throw-away ``redis-server`` is started.  Accounts of each AI level (easy,
normal, hard; ``--accounts`` each) play ``--games`` games of 2 to 4 players
(both games, random seats) in a process pool; each finished game is settled
through the real :class:`tables.ratings.Ratings` in the order the games were
dealt, six hours apart on the games' clock (so the farming guard, 5 counted
games of the same two a day, never drops one).  Printed:

* the cost of one settlement: Redis round trips, and ms (p50 / p95);
* at each quarter of the games, every level's mean rating and whether the
  order easy < normal < hard holds -- and whether it held at every quarter
  from the first (stable);
* each account's final rating.

No asserts: figures.  ``--quick`` plays 120 games.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.ai import LEVELS, make_player
from engine.selfplay import play_game
from engine.setup import new_game
from sandbox.local_redis import LocalRedis
from tables import GameResult, LiveConfig, TableService

LEVEL_ORDER = ("easy", "normal", "hard")
T0 = 1_800_000_000_000
SPACING_MS = 6 * 3_600_000


@dataclass(frozen=True)
class Deal:
    index: int
    variant: str
    accounts: tuple[int, ...]  # account ids, by seat
    seed: str


@dataclass(frozen=True)
class Played:
    index: int
    places: tuple[int, ...]
    loser: int | None
    draw: bool
    seconds: float


def level_of(account: int, per_level: int) -> str:
    return LEVEL_ORDER[(account - 1) // per_level]


def play(deal: Deal, per_level: int) -> Played:
    """One game of AI players (in a worker process)."""
    start = time.perf_counter()
    n = len(deal.accounts)
    state = new_game(deal.variant, n, deal.seed)
    players = [
        make_player(LEVELS[level_of(a, per_level)], f"{deal.seed}:{s}")
        for s, a in enumerate(deal.accounts)
    ]
    out = play_game(state, players, random.Random(deal.seed))
    places = {s: i + 1 for i, s in enumerate(out.out)}
    if out.loser is not None:
        places[out.loser] = n
    return Played(
        deal.index,
        tuple(places.get(s, n) for s in range(n)),
        out.loser,
        out.draw,
        time.perf_counter() - start,
    )


def deals(games: int, accounts: int, seed: int) -> list[Deal]:
    rng = random.Random(seed)
    out = []
    for g in range(games):
        n = rng.choice((2, 2, 3, 3, 4))
        out.append(
            Deal(
                g,
                rng.choice(("chuvash", "shchelkovsky")),
                tuple(rng.sample(range(1, accounts + 1), n)),
                f"{seed}:{g}",
            )
        )
    return out


async def settle_all(
    url: str, todo: list[Deal], played: dict[int, Played], per_level: int, quarters: set[int]
) -> tuple[list[int], list[float], list[tuple[int, dict[str, dict[str, float]]]], dict[int, str]]:
    svc = TableService.from_url(url, LiveConfig(prefix="bench-ratings:"))
    trips: list[int] = []
    ms: list[float] = []
    snapshots: list[tuple[int, dict[str, dict[str, float]]]] = []
    try:
        for d in todo:
            p = played[d.index]
            result = GameResult(
                table="bench",
                game=d.index,
                variant=d.variant,
                chat=None,
                places=p.places,
                loser=p.loser,
                draw=p.draw,
                seats=tuple((a, f"{level_of(a, per_level)}-{a}") for a in d.accounts),
                at=T0 + d.index * SPACING_MS,
                rated=True,
            )
            before = svc.store.round_trips
            t = time.perf_counter()
            s = await svc.ratings.settle(result)
            ms.append((time.perf_counter() - t) * 1000)
            trips.append(svc.store.round_trips - before)
            assert s is not None
            if d.index + 1 in quarters:
                snapshots.append((d.index + 1, await level_means(svc, per_level)))
        labels = {}
        for a in range(1, 3 * per_level + 1):
            me = await svc.ratings.of(a)
            labels[a] = ", ".join(
                f"{v} {r.label} ({r.games} games)" for v, r in sorted(me.ratings.items())
            )
        check = await svc.ratings.recompute()
        print(
            f"recompute from the log: {check.games} games, {check.players} players, "
            f"{len(check.mismatches)} mismatches"
        )
    finally:
        await svc.aclose()
    return trips, ms, snapshots, labels


async def level_means(svc: TableService, per_level: int) -> dict[str, dict[str, float]]:
    """Per variant, per level: the mean shown rating of its accounts."""
    out: dict[str, dict[str, float]] = {}
    for variant in ("chuvash", "shchelkovsky"):
        got = await svc.ratings.many(range(1, 3 * per_level + 1), variant)
        out[variant] = {
            level: statistics.fmean(got[a].shown for a in got if level_of(a, per_level) == level)
            for level in LEVEL_ORDER
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--accounts", type=int, default=3, help="accounts per level")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--quick", action="store_true", help="120 games")
    args = ap.parse_args()
    games = 120 if args.quick else args.games
    per_level = args.accounts
    todo = deals(games, 3 * per_level, args.seed)
    print(
        f"ratings benchmark (#25): seed {args.seed}, {games} games of 2-4 AI players, "
        f"{per_level} accounts per level, {args.workers} worker(s)"
    )
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        played = {p.index: p for p in pool.map(play, todo, [per_level] * len(todo), chunksize=4)}
    wall = time.perf_counter() - start
    print(
        f"played in {wall:.0f} s (game p50 {statistics.median(p.seconds for p in played.values()):.2f} s)"
    )
    quarters = {max(1, games * q // 4) for q in (1, 2, 3, 4)}
    with LocalRedis() as redis:
        trips, ms, snapshots, labels = asyncio.run(
            settle_all(redis.url, todo, played, per_level, quarters)
        )
    q = statistics.quantiles(ms, n=20)
    print(
        f"settling one game: Redis round trips p50 {statistics.median(trips):.0f} "
        f"(max {max(trips)}), {statistics.median(ms):.2f} ms p50 / {q[18]:.2f} ms p95"
    )
    stable = True
    print("| games | game | easy | normal | hard | easy < normal < hard |")
    print("|---|---|---|---|---|---|")
    for n, means in snapshots:
        for variant, m in means.items():
            ordered = m["easy"] < m["normal"] < m["hard"]
            stable &= ordered
            print(
                f"| {n} | {variant} | {m['easy']:.0f} | {m['normal']:.0f} | {m['hard']:.0f} | "
                f"{'yes' if ordered else 'NO'} |"
            )
    print(f"ordering held at every quarter, both games: {'yes' if stable else 'NO'}")
    for a, label in labels.items():
        print(f"  account {a} ({level_of(a, per_level)}): {label}")


if __name__ == "__main__":
    main()
