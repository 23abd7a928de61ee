"""Table service on one Redis and on a 3-master Redis Cluster (prints figures,
asserts nothing):

* Redis round trips per move (the store's count) for a game with a turn timer
  and one without, on each;
* the share of the cluster run's commands each node processed
  (``total_commands_processed``), with the timer hints in K shards.

Runs against its own throw-away redis-server and cluster (``sandbox``):

    python bench/cluster.py
"""

from __future__ import annotations

import asyncio
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis

from harness.local_cluster import start_cluster
from sandbox.local_redis import find_redis_server, start_redis, stop
from tables import LiveConfig, TableService
from tables.client import make_client

GAMES = 20


async def play(url: str, timer: int, rng: random.Random) -> tuple[int, int]:
    """(moves, round trips) of GAMES two-player games played out by random moves."""
    config = LiveConfig(prefix=f"bench:{time.time_ns()}:")
    svc = TableService(make_client(url, config), config, owns_client=True)
    moves = trips = 0
    try:
        for g in range(GAMES):
            # no timer: a casual game (a rated one always has a timer, #38)
            r = await svc.lobbies.create_lobby(
                2 * g + 1, "A", chat=-1, timer=timer, rated=bool(timer)
            )
            await svc.lobbies.join(r.table_id, 2 * g + 2, "B")
            await svc.games.start(r.table_id, 2 * g + 1)
            while True:
                table, state, version = await svc.tables.get(r.table_id)
                assert state is not None
                if state.over:
                    break
                seat = rng.choice(state.to_act())
                action = rng.choice(state.legal_actions(seat)).text()
                user = table.seats[seat].user
                assert user is not None
                before = svc.store.round_trips
                await svc.games.apply(r.table_id, user, action, version)
                trips += svc.store.round_trips - before
                moves += 1
    finally:
        await svc.aclose()
    return moves, trips


def processed(ports: list[int]) -> list[int]:
    out = []
    for port in ports:
        with redis.Redis(port=port) as r:
            out.append(int(r.info("stats")["total_commands_processed"]))
    return out


def main() -> None:
    binary = find_redis_server()
    assert binary, "no redis-server"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "single").mkdir()
        proc, single = start_redis(binary, Path(tmp) / "single")
        cluster = start_cluster(binary, Path(tmp) / "cluster")
        curl = "redis+cluster://" + cluster.url.split("://", 1)[1]
        try:
            for name, url in (("one server", single), ("3-master cluster", curl)):
                for timer in (30, 0):
                    before = processed(cluster.ports)
                    moves, trips = asyncio.run(play(url, timer, random.Random(1)))
                    label = f"timer {timer} s" if timer else "no timer"
                    print(f"{name:17} {label:10} {trips / moves:.2f} round trips per move")
                    if url == curl:
                        done = [
                            a - b for a, b in zip(processed(cluster.ports), before, strict=True)
                        ]
                        shares = ", ".join(f"{100 * d / sum(done):.0f} %" for d in done)
                        print(f"{'':17} {'':10} commands per node: {shares}")
        finally:
            cluster.stop()
            stop(proc)


if __name__ == "__main__":
    main()
