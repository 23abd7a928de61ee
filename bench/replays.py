"""Replay and verify benchmark (issue #16; prints figures, asserts nothing).

* the cost a game's end pays for keeping its record: Redis round trips of the
  write that ends the game, and the record's size (MEMORY USAGE), per variant;
* the time to show one replay step (load the record, replay to the step, render:
  what each ◀ ▶ press costs), at the first and the last step;
* the deal and commitment: deals per second (SHA-256 Fisher-Yates).

Runs against its own throw-away redis-server (``sandbox.local_redis``):

    python bench/replays.py
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis.asyncio as aredis

from engine import new_game
from engine.replay import replay_step
from sandbox.local_redis import LocalRedis
from tables import LiveConfig, TableService
from telegram_bot.views.replay import render_replay


async def finished_game(svc: TableService, variant: str, ais: int, seed: int) -> tuple[str, int]:
    """A game of one human and ``ais`` AI seats played out by the AI; the round
    trips of the write that ended it."""
    svc.games.new_seed = lambda: seed
    r = await svc.lobbies.create_lobby(  # against the AI: casual, no timer (#38)
        1, "Bench", chat=-1, variant=variant, timer=0, rated=False
    )
    for _ in range(ais):
        await svc.lobbies.add_ai(r.table_id, 1)
    await svc.games.start(r.table_id, 1)
    before = svc.store.round_trips
    await svc.admin.admin_hand_to_ai(r.table_id, 0, kind="heuristic")
    return r.table_id, svc.store.round_trips - before


async def main() -> None:
    with LocalRedis() as server:
        client = aredis.Redis.from_url(server.url)
        svc = TableService(client, LiveConfig(prefix="bench:"))
        try:
            print(f"redis: {server.binary} at {server.url}")
            print("\n== the write that ends a game (admin hand-to-AI: AI plays it out)")
            for n, (variant, ais) in enumerate(
                (("chuvash", 1), ("chuvash", 5), ("shchelkovsky", 3))
            ):
                tid, trips = await finished_game(svc, variant, ais, 7_000 + n)
                key = svc.keys.record(tid, 1)
                size = await client.memory_usage(key, samples=0)
                record = await svc.replays.record(tid, 1)
                table, _state, _v = await svc.tables.get(tid)
                loaded = await svc.tables.load(tid)
                assert loaded.result is not None
                before = svc.store.round_trips
                await svc.replays.save(table, record["previous_loser"], loaded.result)
                keep = svc.store.round_trips - before  # saving again is idempotent
                print(
                    f"  {variant:<12} {ais + 1} players: {trips} round trips "
                    f"({keep} of them keep the record), record {size} B, "
                    f"{len(record['actions'])} moves"
                )
                for label, step in (("first", 0), ("last", 10**6)):
                    t0 = time.perf_counter()
                    runs = 20
                    for _ in range(runs):
                        s = replay_step(await svc.replays.record(tid, 1), step)
                        render_replay(s, locale="en")
                    ms = (time.perf_counter() - t0) / runs * 1000
                    print(f"      replay step ({label}): {ms:.2f} ms (load, replay, render)")
            print("\n== deals (SHA-256 Fisher-Yates + commitment)")
            t0 = time.perf_counter()
            k = 2000
            rng = random.Random(1)
            for _ in range(k):
                new_game("shchelkovsky", 6, rng.randrange(2**62), {"decks": 4})
            dt = time.perf_counter() - t0
            print(f"  shchelkovsky 6 players, 4 decks: {k / dt:.0f} deals/s")
        finally:
            await client.aclose()


if __name__ == "__main__":
    asyncio.run(main())
