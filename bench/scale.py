"""Capacity of the bot, scaled out (issue #12; prints figures, asserts nothing):
1 and 2 real bot processes (``python -m telegram_bot`` in webhook mode behind
:mod:`sandbox.webhook_proxy`, round robin) on one Redis node and on a 3-master
Redis Cluster, the fake Bot API with Telegram's flood limits on.  Each row
opens ``--games`` group games of 3 players (through Telegram: /new, Join,
Start), then the players press random useful buttons with a human think time
(2-5 s) for ``--seconds``; per row:

* actions/s sustained, p50/p99 delay from a press to the presser's updated
  message, messages (sends + edits) per action, 429s;
* Redis commands per action (``INFO commandstats`` deltas summed over the
  nodes; the bench's own reads are a few per cent of them) -- all, and net of
  the fleet's idle traffic (timer loops, leases: ``idle/s``, measured for 5 s
  with nobody pressing) -- the share of the
  busiest node, Redis CPU per action (``used_cpu_*``: the node's capacity is
  about 1 s / that), and memory per live game (``used_memory`` delta / games).

    python bench/scale.py [--games 10] [--seconds 60] [--quick] [--verbose]

``--idle`` (#39) measures only the idle traffic, with nobody pressing: 1 and 2
processes, with no table and with ``--idle-tables`` started group games
(turn timers of 2 minutes on, none due in the window: the row says
how long the games took to open), on one node and on
the cluster, for ``--idle-seconds``; ``--verbose`` adds the commands by name.

    python bench/scale.py --idle [--idle-tables 100] [--idle-seconds 30] [--verbose]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import redis

from bench.bot import MESSAGES, Figures, player
from harness.fleet import BotFleet, open_group_game
from harness.local_cluster import start_cluster
from sandbox.fake_api import FakeTelegram, RateLimits
from sandbox.local_redis import find_redis_server, start_redis, stop
from telegram_bot.state.chat_state import TableUi

PLAYERS = 3
THINK = (2.0, 5.0)
OWN = {"cmdstat_info", "cmdstat_config|resetstat"}  # the bench's INFO calls


@dataclass
class NodeStats:
    commands: int
    cpu: float
    memory: int
    hot: dict[str, int]  # calls by command


def node_stats(ports: list[int]) -> list[NodeStats]:
    out = []
    for port in ports:
        with redis.Redis(port=port) as r:
            cs = r.info("commandstats")
            hot = {k: int(v["calls"]) for k, v in cs.items() if k not in OWN}
            cpu = r.info("cpu")
            out.append(
                NodeStats(
                    sum(hot.values()),
                    float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]),
                    int(r.info("memory")["used_memory"]),
                    hot,
                )
            )
    return out


class HandIds:
    """The players' hand message ids, read once after the start (so the bench's
    players do not add a Redis read per look at their chat)."""

    def __init__(self, hands: dict[str, TableUi]) -> None:
        self.hands = hands

    async def table(self, table_id: str) -> TableUi:
        return self.hands[table_id]


async def row(
    url: str, ports: list[int], processes: int, games: int, seconds: float, n: int
) -> str:
    prefix = f"scale{n}:"
    async with (
        FakeTelegram(limits=RateLimits.from_env()) as fake,
        BotFleet(fake, url, prefix, count=processes) as fleet,
    ):
        before = node_stats(ports)
        humans = [
            [fake.add_user(f"G{g}P{i}", language_code="en") for i in range(PLAYERS)]
            for g in range(games)
        ]
        opened = await asyncio.gather(
            *(open_group_game(fleet, hs, title=f"Group {g}") for g, hs in enumerate(humans))
        )
        opened_at = node_stats(ports)
        await asyncio.sleep(IDLE)  # the fleet's own traffic with nobody pressing
        live = node_stats(ports)
        idle = sum(a.commands - b.commands for a, b in zip(live, opened_at, strict=True)) / IDLE
        memory = (sum(s.memory for s in live) - sum(s.memory for s in before)) / games
        hands = HandIds({tid: await fleet.ui.table(tid) for tid, _g in opened})
        fake.stats.reset()
        figs, rng = Figures(), random.Random(n)
        trips = fleet.svc.store.round_trips
        t0 = time.monotonic()
        until = t0 + seconds
        await asyncio.gather(
            *(
                player(
                    fleet.svc,
                    hands,
                    fake,
                    tid,
                    u,
                    random.Random(rng.random()),
                    [10**9],
                    pulse,
                    figs,
                    think=THINK,
                    until=until,
                )
                for (tid, _g), hs in zip(opened, humans, strict=True)
                for pulse in [[time.monotonic()]]
                for u in hs
            )
        )
        elapsed = time.monotonic() - t0
        after = node_stats(ports)
        own = fleet.svc.store.round_trips - trips
    done = [a.commands - b.commands for a, b in zip(after, live, strict=True)]
    cpu = sum(a.cpu - b.cpu for a, b in zip(after, live, strict=True))
    acts = max(figs.actions, 1)
    lat = sorted(figs.latencies) or [0.0]
    p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
    msgs = sum(fake.stats.calls[m] for m in MESSAGES)
    share = max(done) / max(sum(done), 1)
    line = (
        f"{'3-node cluster' if len(ports) > 1 else 'one node':14} {processes:>5} "
        f"{figs.actions / elapsed:9.2f} {statistics.median(lat) * 1000:8.0f} "
        f"{p99 * 1000:8.0f} {msgs / acts:9.2f} {fake.stats.retry_after:5} "
        f"{sum(done) / acts:9.1f} {(sum(done) - idle * elapsed) / acts:8.1f} {idle:7.0f} "
        f"{100 * share:6.0f} % {1000 * cpu / acts:8.2f} {memory / 1024:9.1f}"
    )
    if VERBOSE:
        line += f"\n    per node: {done}; bench's own round trips: {own}; actions: {figs.actions}"
        if len(ports) > 1:
            busiest = max(range(len(ports)), key=done.__getitem__)
            hot = {
                k: after[busiest].hot.get(k, 0) - live[busiest].hot.get(k, 0)
                for k in after[busiest].hot
            }
            top = sorted(hot.items(), key=lambda kv: -kv[1])[:6]
            line += f"\n    busiest node's commands: {top}"
    return line


async def idle_row(
    url: str, ports: list[int], processes: int, tables: int, seconds: float, n: int
) -> str:
    """#39: the fleet's Redis commands a second with nobody pressing, after
    ``tables`` group games were started (their turn timers not due)."""
    prefix = f"idle{n}:"
    async with (
        FakeTelegram(limits=RateLimits.off()) as fake,
        BotFleet(fake, url, prefix, count=processes, env={"DEFAULT_TIMER": "120"}) as fleet,
    ):
        humans = [
            [fake.add_user(f"I{n}G{g}P{i}", language_code="en") for i in range(PLAYERS)]
            for g in range(tables)
        ]
        t0 = time.monotonic()
        for start in range(0, tables, 20):  # not all at once: the start's renders
            await asyncio.gather(
                *(
                    open_group_game(fleet, hs, title=f"Group {g}")
                    for g, hs in enumerate(humans[start : start + 20], start)
                )
            )
        opening = time.monotonic() - t0
        await asyncio.sleep(IDLE)  # the starts' renders settle
        before = node_stats(ports)
        await asyncio.sleep(seconds)
        after = node_stats(ports)
    rate = sum(a.commands - b.commands for a, b in zip(after, before, strict=True)) / seconds
    line = (
        f"{'3-node cluster' if len(ports) > 1 else 'one node':14} {processes:>5} {tables:>7}"
        f" {rate:9.1f} {opening:10.0f}"
    )
    if VERBOSE:
        by: dict[str, int] = {}
        for a, b in zip(after, before, strict=True):
            for k, v in a.hot.items():
                by[k] = by.get(k, 0) + v - b.hot.get(k, 0)
        top = sorted(
            ((k.removeprefix("cmdstat_"), v) for k, v in by.items() if v), key=lambda kv: -kv[1]
        )
        line += "\n    per s: " + ", ".join(f"{k} {v / seconds:.2f}" for k, v in top[:10])
    return line


async def idle_rows(
    args: argparse.Namespace, single: str, port: int, curl: str, ports: list[int]
) -> None:
    print(f"idle traffic, nobody pressing, {args.idle_seconds:.0f} s per row", flush=True)
    print("redis          procs  tables    cmds/s  opened in s", flush=True)
    n = 0
    for url, nodes in ((single, [port]), (curl, ports)):
        for processes in (1, 2):
            for tables in (0, args.idle_tables):
                n += 1
                print(
                    await idle_row(url, nodes, processes, tables, args.idle_seconds, n), flush=True
                )


HEADER = (
    "redis          procs actions/s   p50 ms   p99 ms  msgs/act  429s  cmds/act  net/act"
    "  idle/s  busiest  cpu ms/act KiB/game"
)
IDLE = 5.0
"""Seconds with nobody pressing: the fleet's idle traffic, told from the actions'."""
VERBOSE = False


async def main() -> None:
    global VERBOSE
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=10, help="group games per row")
    parser.add_argument("--seconds", type=float, default=60.0, help="measured play per row")
    parser.add_argument("--quick", action="store_true", help="4 games, 20 s per row")
    parser.add_argument("--verbose", action="store_true", help="per node; the busiest's commands")
    parser.add_argument("--idle", action="store_true", help="#39: only the idle traffic")
    parser.add_argument("--idle-tables", type=int, default=100, help="--idle: games started")
    parser.add_argument("--idle-seconds", type=float, default=30.0, help="--idle: seconds measured")
    args = parser.parse_args()
    VERBOSE = args.verbose
    if args.quick:
        args.games, args.seconds = 4, 20.0
    logging.basicConfig(level=logging.ERROR)
    binary = find_redis_server()
    assert binary, "no redis-server"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "single").mkdir()
        proc, single = start_redis(binary, Path(tmp) / "single")
        cluster = start_cluster(binary, Path(tmp) / "cluster")
        curl = "redis+cluster://" + cluster.url.split("://", 1)[1]
        port = int(single.rsplit(":", 1)[1].split("/")[0])
        try:
            if args.idle:
                await idle_rows(args, single, port, curl, cluster.ports)
                return
            print(
                f"{args.games} group games x {PLAYERS} players, think time 2-5 s, "
                f"{args.seconds:.0f} s per row, Telegram's limits on",
                flush=True,
            )
            print(HEADER, flush=True)
            n = 0
            for url, ports in ((single, [port]), (curl, cluster.ports)):
                for processes in (1, 2):
                    n += 1
                    print(await row(url, ports, processes, args.games, args.seconds, n), flush=True)
        finally:
            cluster.stop()
            stop(proc)


if __name__ == "__main__":
    asyncio.run(main())
