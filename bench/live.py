"""Table service benchmark (prints figures, asserts nothing).

* moves per second through ``svc.games.apply`` with 1, 10 and 100 games
  played concurrently (4 human seats each, turn timer on; the driver keeps a
  local engine mirror, so each move is exactly one ``apply``);
* Redis round trips per move (counted by the service's store; cross-checked
  with the server's ``total_commands_processed``), for human-only tables and for
  one human against three AI seats (the AI replies ride in the same write);
* Redis memory per table (``MEMORY USAGE ... SAMPLES 0`` of all its keys) at
  the start and in the middle of a game, per variant.

Runs against its own throw-away redis-server (``sandbox.local_redis``):

    python bench/live.py
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis.asyncio as aredis

from engine import Action, GameState, new_game
from sandbox.local_redis import LocalRedis
from tables import MOVE_KINDS, LiveConfig, TableService, WriteResult


def follow(mirror: GameState, result: WriteResult) -> None:
    for e in result.events:
        if e.kind in MOVE_KINDS:
            mirror.apply(Action.from_text(e.seat, e.text))


class Game:
    """A table plus the driver's mirror of its state."""

    def __init__(self, tid: str, mirror: GameState, version: int, users: list[int | None]) -> None:
        self.tid = tid
        self.mirror = mirror
        self.version = version
        self.users = users


async def open_game(
    svc: TableService,
    user0: int,
    humans: int,
    ais: int,
    variant: str = "chuvash",
    options: dict[str, Any] | None = None,
    timer: int = 60,
) -> Game:
    r = await svc.lobbies.create_lobby(
        user0, f"U{user0}", chat=-1, variant=variant, options=options, timer=timer
    )
    tid = r.table_id
    for u in range(user0 + 1, user0 + humans):
        await svc.lobbies.join(tid, u, f"U{u}")
    for _ in range(ais):
        await svc.lobbies.add_ai(tid, user0, "random")
    r = await svc.games.start(tid, user0)
    mirror = new_game(r.table.variant, len(r.table.seats), r.table.seed, r.table.options)
    follow(mirror, r)
    return Game(tid, mirror, r.version, [s.user for s in r.table.seats])


async def move(svc: TableService, g: Game, rng: random.Random) -> None:
    seats = [s for s in g.mirror.to_act() if g.users[s] is not None]
    seat = rng.choice(seats)
    action = rng.choice(g.mirror.legal_actions(seat))
    user = g.users[seat]
    assert user is not None
    r = await svc.games.apply(g.tid, user, action.text(), g.version)
    g.version = r.version
    follow(g.mirror, r)


async def throughput(svc: TableService, games: int, seconds: float, base: int) -> float:
    """Moves per second with ``games`` concurrent games."""
    rng = random.Random(games)
    counter = [0]

    async def player(i: int) -> None:
        user0 = base + i * 10
        g = await open_game(svc, user0, 4, 0)
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            if g.mirror.over:
                for u in g.users:
                    if u is not None:
                        await svc.redis.delete(svc.keys.user(u))
                g = await open_game(svc, user0, 4, 0)
                continue
            await move(svc, g, rng)
            counter[0] += 1

    t0 = time.perf_counter()
    await asyncio.gather(*(player(i) for i in range(games)))
    elapsed = time.perf_counter() - t0
    return counter[0] / elapsed


async def round_trips(
    svc: TableService, humans: int, ais: int, base: int
) -> tuple[float, float, int]:
    """(service round trips per human move, server commands per human move, moves)."""
    rng = random.Random(5)
    g = await open_game(svc, base, humans, ais)
    info: Any = await svc.redis.info("stats")
    cmds0 = int(info["total_commands_processed"])
    rt0 = svc.store.round_trips
    moves = 0
    while not g.mirror.over and moves < 300:
        await move(svc, g, rng)
        moves += 1
    info = await svc.redis.info("stats")
    cmds = int(info["total_commands_processed"]) - cmds0 - 1  # the INFO itself
    return (svc.store.round_trips - rt0) / moves, cmds / moves, moves


async def memory(
    svc: TableService, variant: str, players: int, options: dict[str, Any] | None, base: int
) -> tuple[int, int, int, int]:
    """(bytes at start, bytes mid-game, ply mid, ply total) for one seeded game."""

    async def usage(tid: str) -> int:
        total = 0
        for key in svc.keys.table_keys(tid):
            n = await svc.redis.memory_usage(key, samples=0)
            total += int(n or 0)
        return total

    async def play(stop_at: int | None, user0: int) -> tuple[Game, int, int]:
        svc.games.new_seed = lambda: 12345
        rng = random.Random(1)
        g = await open_game(svc, user0, players, 0, variant, options)
        start = await usage(g.tid)
        while not g.mirror.over and (stop_at is None or g.mirror.ply < stop_at):
            await move(svc, g, rng)
        return g, start, g.mirror.ply

    g, start, total = await play(None, base)
    g, _, mid_ply = await play(total // 2, base + 100)
    return start, await usage(g.tid), mid_ply, total


async def main() -> None:
    with LocalRedis() as server:
        client = aredis.Redis.from_url(server.url)
        svc = TableService(client, LiveConfig(prefix="bench:"))
        try:
            print(f"redis: {server.binary} at {server.url}")
            print("\n== moves per second through svc.games.apply (4 humans/game, timer on)")
            for i, games in enumerate((1, 10, 100)):
                mps = await throughput(svc, games, 4.0, 1_000_000 * (i + 1))
                print(f"  {games:>3} concurrent games: {mps:8.0f} moves/s")
            print("\n== Redis round trips per move")
            for humans, ais in ((4, 0), (1, 3)):
                rt, cmds, moves = await round_trips(svc, humans, ais, 9_000_000 + humans)
                print(
                    f"  {humans} human(s) + {ais} AI: {rt:.2f} round trips/human move, "
                    f"{cmds:.2f} server commands/human move ({moves} moves)"
                )
            print("\n== Redis memory per table (MEMORY USAGE, all its keys)")
            cases: list[tuple[str, int, dict[str, Any] | None, str]] = [
                ("chuvash", 2, None, ""),
                ("chuvash", 6, None, "goal <= 4 KB"),
                ("shchelkovsky", 2, {"decks": 2}, ""),
                ("shchelkovsky", 6, {"decks": 2}, ""),
                ("shchelkovsky", 10, {"decks": 4}, "goal <= 12 KB"),
            ]
            for n, (variant, players, options, goal) in enumerate(cases):
                start, mid, ply, total = await memory(
                    svc, variant, players, options, 20_000_000 + 1000 * n
                )
                deck = f", {options['decks']} decks" if options else ""
                print(
                    f"  {variant:<12} {players:>2} players{deck:<9}: start {start:>6} B, "
                    f"mid-game {mid:>6} B (ply {ply} of {total})  {goal}"
                )
        finally:
            await client.aclose()


if __name__ == "__main__":
    asyncio.run(main())
