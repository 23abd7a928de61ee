"""Benchmark of an arena (#27) through the fake Bot API (Telegram's flood limits
ON, real clock) and a throw-away redis-server: ``--players`` members of one
group join an arena of ``--seats`` players a table by pressing *Join* on its
message; each plays every game the arena seats him at, pressing random useful
buttons of his hand message in his private chat (``--think`` seconds before
each press), until the arena's ``--minutes`` are over and its last games are
finished.

Printed:

* pairing delay: from a game's end to its players' next table (p50, p95, max,
  how many), as the service clock recorded both (the game's result, the table's
  pairing) -- the wait for a partner included;
* the group's writes (the bot's sends and edits in it: the arena's message, the
  tables' messages, the podium) per minute: mean and the busiest minute, against
  Telegram's 20 a minute in a group;
* Redis round trips of an arena's wake (repair, pairing, tick) and of making one
  table (lobby, joins, start), from the service's own count;
* the 429s the fake answered (any chat), games played, presses.

No asserts: figures.  ``--processes N`` runs N bot processes on the one Redis
(each its own client; polling goes to one of them, the timers are split by the
shards' leases).

    python bench/arena.py [--players 200] [--seats 2] [--minutes 10] [--think 0.5,2]
                          [--processes 1] [--seed 27] [--stop-after SECONDS]

``--stop-after``: cancel the arena after that many seconds (a quick look; the
games being played are left unfinished).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bot import Figures, player
from sandbox.fake_api import FakeTelegram, Message, RateLimits, SimUser
from sandbox.local_redis import LocalRedis
from tables.arena_runner import Woken
from telegram_bot.app import BotApp
from telegram_bot.settings import Settings

PREFIX = "bench-arena:"


class Meter:
    """What the bench counts, by hooks where it happens."""

    def __init__(self, group: int) -> None:
        self.group = group
        self.group_writes: Counter[int] = Counter()  # minute -> writes in the group
        self.seated: dict[int, list[int]] = {}  # user -> the times (ms) he was seated
        self.wake_trips: list[float] = []
        self.table_trips: list[float] = []
        self.tables = 0

    def watch_fake(self, fake: FakeTelegram) -> None:
        world = fake.world
        record = world.record_outgoing

        def on_record(message: Message, kind: str) -> None:
            record(message, kind)
            if message.chat_id == self.group and message.ephemeral_message_id is None:
                self.group_writes[int(time.monotonic() // 60)] += 1

        world.record_outgoing = on_record  # type: ignore[method-assign]

    def watch_app(self, app: BotApp) -> None:
        runner = app.svc.timers.arenas
        assert runner is not None
        store = app.svc.store
        wake = runner.wake
        make = runner._make

        async def on_wake(arena_id: str) -> Woken:
            before = store.round_trips
            woken = await wake(arena_id)
            self.wake_trips.append(store.round_trips - before)
            at = {p.table: p.at for p in woken.arena.playing}
            for r in woken.started:
                for u in r.table.humans():
                    self.seated.setdefault(u, []).append(at.get(r.table_id, 0))
            return woken

        async def on_make(*args: Any, **kwargs: Any) -> Any:
            before = store.round_trips
            try:
                return await make(*args, **kwargs)
            finally:
                self.table_trips.append(store.round_trips - before)
                self.tables += 1

        runner.wake = on_wake  # type: ignore[method-assign]
        runner._make = on_make  # type: ignore[method-assign]


def pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def play_arena(
    app: BotApp,
    fake: FakeTelegram,
    user: SimUser,
    rng: random.Random,
    figs: Figures,
    pace: tuple[float, float],
    over: asyncio.Event,
) -> None:
    """One member: every table the arena seats him at, until it is over."""
    svc = app.svc
    last = ""
    while not over.is_set():
        table = await svc.tables.where(user.id)
        if table is None or table.id == last:
            await asyncio.sleep(0.2)
            continue
        last = table.id
        await player(
            svc, app.ui, fake, table.id, user, rng, [10**6], [time.monotonic()], figs, think=pace
        )


async def run(args: argparse.Namespace) -> None:
    low, high = (float(x) for x in args.think.split(","))
    pace = (low, high)
    with LocalRedis() as redis:
        async with FakeTelegram(limits=RateLimits.from_env()) as fake:
            settings = Settings(
                bot_token=fake.token,
                redis_url=redis.url,
                redis_prefix=PREFIX,
                telegram_api_url=fake.url,
                set_commands=False,
                ai_workers=0,
            )
            apps = [BotApp(settings) for _ in range(args.processes)]
            for app in apps:
                await app.setup()
            polls = [
                asyncio.create_task(a.run_polling(handle_signals=False, polling_timeout=5))
                for a in apps
            ]
            app = apps[0]
            users = [fake.add_user(f"Player {i}", language_code="en") for i in range(args.players)]
            owner = users[0]
            group = owner.create_group("Arena bench", *users[1:])
            owner.add_bot_to(group)
            meter = Meter(group.id)
            meter.watch_fake(fake)
            for a in apps:
                meter.watch_app(a)
            for u in users:
                u.start()
            await asyncio.sleep(2)
            print("players started the bot; the arena opens", file=sys.stderr, flush=True)
            arena = await app.svc.arenas.create(
                group.id, owner.id, args.variant, seats=args.seats, minutes=args.minutes
            )
            await app.arena_boards.post(arena, "en")
            board = await owner.wait_message("Arena", group, timeout=60)
            fake.stats.reset()
            t0 = time.monotonic()
            for u in users:  # the join storm: everybody presses Join
                await u.press("Join", message=board, chat=group).wait_answer(120)
            joined = time.monotonic() - t0
            print(f"joined in {joined:.1f} s", file=sys.stderr, flush=True)
            over = asyncio.Event()
            figs = Figures()
            rng = random.Random(args.seed)
            players = [
                asyncio.create_task(
                    play_arena(app, fake, u, random.Random(rng.random()), figs, pace, over)
                )
                for u in users
            ]
            while not (now := await app.svc.arenas.get(arena.id)).over:
                if args.stop_after and time.monotonic() - t0 > args.stop_after and not now.over:
                    await app.svc.arenas.cancel(arena.id, "bench --stop-after")
                await asyncio.sleep(1)
            over.set()
            wall = time.monotonic() - t0
            print(f"arena over after {wall:.0f} s", file=sys.stderr, flush=True)
            for task in players:  # between tables, or (--stop-after) in a game left unfinished
                task.cancel()
            await asyncio.gather(*players, return_exceptions=True)
            final = await app.svc.arenas.get(arena.id)
            games = await app.svc.arenas.games(arena.id, 0, 100_000)
            for a in apps:
                await a.stop_polling()
            await asyncio.gather(*polls, return_exceptions=True)
            for a in apps:
                await a.aclose()

    ends: dict[int, list[int]] = {}
    for g in games:
        for u in g["users"]:
            ends.setdefault(u, []).append(int(g["at"]))
    delays: list[float] = []
    for user, seats in meter.seated.items():
        for end in ends.get(user, []):
            later = [s for s in seats if s >= end]
            if later:
                delays.append((min(later) - end) / 1000)
    minutes = sorted(meter.group_writes.items())[1:-1] or sorted(meter.group_writes.items())
    per_minute = [n for _m, n in minutes]
    print(
        f"arena benchmark (#27): {args.players} players, {args.seats} a table, "
        f"{args.variant}, {args.minutes} min, {args.processes} bot process(es), "
        f"think {pace[0]}-{pace[1]} s, seed {args.seed}"
    )
    print(
        f"ran {wall:.0f} s (join storm {joined:.1f} s); games {final.games}, "
        f"tables made {meter.tables}, presses {figs.presses}"
    )
    print(
        f"pairing delay after a game's end: p50 {pct(delays, 0.5):.1f} s, "
        f"p95 {pct(delays, 0.95):.1f} s, max {max(delays, default=0):.1f} s "
        f"({len(delays)} pairings; goal p95 <= 15 s)"
    )
    print(
        f"group writes per minute: mean {statistics.fmean(per_minute or [0]):.1f}, "
        f"busiest {max(per_minute, default=0)} (Telegram: 20 a minute in a group)"
    )
    print(
        f"Redis round trips: an arena's wake p50 {pct(meter.wake_trips, 0.5):.0f} "
        f"(max {max(meter.wake_trips, default=0)}), making a table p50 "
        f"{pct(meter.table_trips, 0.5):.0f}"
    )
    print(f"429s: {fake.stats.retry_after} (goal 0)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--players", type=int, default=200)
    ap.add_argument("--seats", type=int, default=2)
    ap.add_argument("--minutes", type=int, default=10)
    ap.add_argument("--variant", default="chuvash")
    ap.add_argument("--think", default="0.5,2")
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument(
        "--stop-after", type=float, default=0, help="cancel the arena after this many seconds"
    )
    asyncio.run(run(ap.parse_args()))


if __name__ == "__main__":
    main()
