"""What one wake of a large arena costs (#38, point 16): Redis round trips and
milliseconds, for arenas of 20, 100 and 200 players.

    python bench/arena_wake.py [--players 20,100,200] [--seats 2] [--wakes 10]

A throw-away ``redis-server`` (``sandbox.local_redis``) and the table service on
a test clock; no bot, no Telegram -- the arena's own work only, through its
public seam (:meth:`tables.arena_runner.ArenaRunner.wake`, what the timers call
when the arena's hint is due) and the store's own count of round trips
(``Store.round_trips``).  For each size:

* **join**: round trips of one *Join* (mean);
* **seating**: the wakes it takes to seat every player at the start, the most
  round trips and the longest of them (ms) -- one wake holds the timer tick
  it runs in;
* **steady**: every table seated a minute ago and being played, ``--wakes``
  wakes in a row, as a stream of joins and scored games makes them: round
  trips and ms per wake (mean and max).  Before #38 each of them loaded every
  such table, one round trip each; after, the tables are checked in one round
  trip at most once a ``repair_after`` (60 s), and the other wakes load none.

No asserts: figures.  Run it on two commits to compare (it uses only what both
have).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox.local_redis import LocalRedis
from tables import LiveConfig, TableService


class WakeClock:
    """The service's clock, moved by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


async def measure(url: str, players: int, seats: int, wakes: int) -> dict[str, float]:
    clock = WakeClock()
    config = LiveConfig(prefix=f"bench-arena-wake:{players}:{time.time_ns()}:")
    if "arena_max_players" in LiveConfig.__dataclass_fields__:
        config = LiveConfig(prefix=config.prefix, arena_max_players=max(200, players))
    svc = TableService.from_url(url, config, clock=clock)
    runner = svc.timers.arenas
    assert runner is not None
    store = svc.store
    try:
        arena = await svc.arenas.create(-1, 1, "chuvash", seats=seats, minutes=180)
        t0 = store.round_trips
        for u in range(1, players + 1):
            await svc.arenas.join(arena.id, u, f"P{u}")
        join_trips = (store.round_trips - t0) / players

        seat_trips: list[int] = []
        seat_ms: list[float] = []
        for _ in range(players):
            before, start = store.round_trips, time.perf_counter()
            await runner.wake(arena.id)
            seat_ms.append((time.perf_counter() - start) * 1000)
            seat_trips.append(store.round_trips - before)
            current = await svc.arenas.get(arena.id)
            if not any(p.waiting for p in current.players):
                break

        clock.now += 61  # every table seated a minute ago: due for its check
        trips: list[int] = []
        ms: list[float] = []
        for _ in range(wakes):
            before, start = store.round_trips, time.perf_counter()
            await runner.wake(arena.id)
            ms.append((time.perf_counter() - start) * 1000)
            trips.append(store.round_trips - before)
            clock.now += 1  # the next join or score, a second later
        await svc.arenas.cancel(arena.id, "bench")
        return {
            "join": join_trips,
            "seat_wakes": len(seat_trips),
            "seat_trips_max": max(seat_trips),
            "seat_ms_max": max(seat_ms),
            "trips_mean": statistics.mean(trips),
            "trips_max": max(trips),
            "ms_mean": statistics.mean(ms),
            "ms_max": max(ms),
        }
    finally:
        await svc.aclose()


async def run(args: argparse.Namespace) -> None:
    sizes = [int(n) for n in args.players.split(",")]
    print(
        f"arena wake cost: chuvash, {args.seats} a table, {args.wakes} steady wakes, "
        "one local redis-server"
    )
    header = (
        f"{'players':>7} {'join rt':>7} {'seat wakes':>10} {'seat rt max':>11} "
        f"{'seat ms max':>11} {'wake rt mean':>12} {'wake rt max':>11} "
        f"{'wake ms mean':>12} {'wake ms max':>11}"
    )
    print(header)
    with LocalRedis() as server:
        for n in sizes:
            r = await measure(server.url, n, args.seats, args.wakes)
            print(
                f"{n:>7} {r['join']:>7.1f} {r['seat_wakes']:>10.0f} {r['seat_trips_max']:>11.0f} "
                f"{r['seat_ms_max']:>11.1f} {r['trips_mean']:>12.1f} {r['trips_max']:>11.0f} "
                f"{r['ms_mean']:>12.1f} {r['ms_max']:>11.1f}"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", default="20,100,200")
    parser.add_argument("--seats", type=int, default=2)
    parser.add_argument("--wakes", type=int, default=10)
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
