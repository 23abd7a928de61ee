"""The flood limiter's worst case against Telegram's windows (#28): ``--processes``
limiters (bot processes) on a redis-server of their own, one manual clock,
seeded bursts to many chats and a few groups for ``--seconds`` of that clock,
as the bot makes them: many calls of a process at once (a lease in flight while
others are refused by their chat and give their entries back), some refunded
(a no-op edit, an overtaken update: they do not go out), lulls longer than the
windows.  A message counts when its tokens are taken (the leased overall
entries up to ``lease_ttl`` earlier) and reaches Telegram up to ``--late``
seconds after (a prepaid token's hold, the HTTP call; uniform).  Prints the
most messages in any second fleet-wide (Telegram: 30), in any minute to one
group (20), in any 3 s to one chat (the fake Bot API: 3), and the fleet's
messages a second.  No asserts.

    python bench/flood.py [--processes 3] [--seconds 120] [--seed 1] [--late 0.3]
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
from bisect import bisect_left
from collections import defaultdict
from pathlib import Path

from sandbox.fake_api import ManualClock
from sandbox.local_redis import find_redis_server, start_redis, stop
from tables import LiveConfig, TableService
from telegram_bot.delivery.flood.limiter import FloodConfig, FloodLimiter


def most_in_a_window(times: list[float], seconds: float) -> int:
    times = sorted(times)
    return max((bisect_left(times, t + seconds) - i for i, t in enumerate(times)), default=0)


async def drive(url: str, processes: int, seconds: float, seed: int, late: float) -> None:
    rng = random.Random(seed)
    clock = ManualClock()
    services = [TableService.from_url(url, LiveConfig(prefix="bench:")) for _ in range(processes)]
    fleet = [FloodLimiter(svc.kv, FloodConfig(), clock=clock) for svc in services]
    groups = [-100 - i for i in range(5)]
    chats = [*groups, *range(1, 500)]
    sent: list[tuple[float, int]] = []

    async def call(limiter: FloodLimiter, chat: int) -> None:
        if await limiter.acquire(chat) != 0:
            return
        if rng.random() < 0.1:  # did not go out: its entries go back
            await limiter.refund(chat, held=rng.choice([0.0, 0.1]))
        else:
            sent.append((clock.now + rng.uniform(0.0, late), chat))

    try:
        end = clock.now + seconds
        while clock.now < end:
            burst = rng.choice([0, 0, 1, 3, 10, 60])
            await asyncio.gather(
                *(
                    call(
                        rng.choice(fleet),
                        rng.choice(groups) if rng.random() < 0.4 else rng.choice(chats),
                    )
                    for _ in range(burst)
                )
            )
            clock.advance(0.1 if rng.random() < 0.98 else 2.0)
    finally:
        for svc in services:
            await svc.aclose()
    by_chat: dict[int, list[float]] = defaultdict(list)
    for at, chat in sent:
        by_chat[chat].append(at)
    print(f"seed {seed}, {processes} processes, {seconds:.0f} s of the clock, late <= {late} s")
    print(f"{'window':<28}{'most':>6}{'Telegram':>10}")
    rows = [
        ("any 1 s, fleet-wide", most_in_a_window([t for t, _ in sent], 1.0), 30),
        ("any 60 s, one group", max(most_in_a_window(by_chat[g], 60.0) for g in groups), 20),
        ("any 3 s, one chat", max(most_in_a_window(t, 3.0) for t in by_chat.values()), 3),
    ]
    for name, most, limit in rows:
        print(f"{name:<28}{most:>6}{limit:>10}")
    print(f"messages a second, fleet-wide: {len(sent) / seconds:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--late", type=float, default=0.3)
    args = parser.parse_args()
    binary = find_redis_server()
    if binary is None:
        sys.exit("no redis-server found")
    with tempfile.TemporaryDirectory(prefix="bench-flood-") as tmp:
        proc, url = start_redis(binary, Path(tmp))
        try:
            asyncio.run(drive(url, args.processes, args.seconds, args.seed, args.late))
        finally:
            stop(proc)


if __name__ == "__main__":
    main()
