"""A master of a Redis Cluster killed mid-play: how long tables wait, on the
failed master's slots and on the healthy ones (#28).

A throw-away cluster of 3 masters, each with a replica (``cluster-node-timeout``
2 s), and the table service's store over it (``make_client``; the startup nodes
are every master).  ``--tables`` tables, spread over the masters' slots, each
do what a press does -- read the bot's state of the table (a pipeline), load
the table, compare-and-set a write -- again and again (a short pause between presses; after a refusal 0.3 s, as an impatient
player).  After a warm-up the master of the first startup node is killed
(``kill -9``); its replica is promoted by the cluster.  Prints, for the tables
on the healthy masters and for those on the failed one: the presses and how
many were refused (``ServiceUnavailable``), the longest and the median time a
press took, and the stall -- the longest time a table went without a
successful press -- longest and median over the tables; and when the replica
took over.  No asserts.

    python bench/faults.py --failover [--tables 24] [--run 12] [--stop] [--full-coverage]

``--stop``: the master is SIGSTOPped (up, answering nothing) instead;
``--full-coverage``: the cluster runs with Redis's default
``cluster-require-full-coverage yes``, under which *Redis* refuses every key,
on every master, from the moment the failed master is flagged until its
replica is promoted -- production clusters should run with ``no``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from redis.crc import key_slot

from harness.local_cluster import LocalCluster, start_cluster
from tables import LiveConfig, ServiceUnavailable
from tables.client import make_client
from tables.keys import Keys
from tables.store import Store

PREFIX = "failover:"
PAUSE = 0.05  # between two presses of a table
RETRY_AFTER_REFUSAL = 0.3


@dataclass
class TableRun:
    table: str
    master: int  # index of the master that served its slot at the start
    took: list[float] = field(default_factory=list)  # successful presses after the kill
    refused: int = 0  # ServiceUnavailable, or another error (``errors``)
    errors: list[str] = field(default_factory=list)
    presses: int = 0
    last_ok: float = 0.0
    stall: float = 0.0  # the longest time without a success after the kill


async def press(store: Store, table: str) -> None:
    """What a press does on Redis: a pipeline reading the bot's state of the
    table (as ``KeyValueStore`` does), then the table loaded and written (one
    compare-and-set)."""
    state = f"{PREFIX}{{t:{table}}}:ui"
    await store.run(lambda p: p.hgetall(state))
    raw = await store.load(table)
    current = int(raw.get(b"v", b"0"))
    await store.cas(table, current, set_fields={"n": current + 1}, ttl_ms=600_000, maxlen=8)


async def table_loop(store: Store, run: TableRun, killed: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        t0 = time.monotonic()
        after_kill = bool(killed) and t0 >= killed[0]
        try:
            await press(store, run.table)
        except Exception as e:  # noqa: BLE001 -- counted: a bug redis-py lets through
            if not isinstance(e, ServiceUnavailable):
                run.errors.append(repr(e))
            if after_kill:
                run.presses += 1
                run.refused += 1
            await asyncio.sleep(RETRY_AFTER_REFUSAL)
            continue
        t1 = time.monotonic()
        if after_kill:
            run.presses += 1
            run.took.append(t1 - t0)
            run.stall = max(run.stall, t1 - max(run.last_ok, killed[0]))
        run.last_ok = t1
        await asyncio.sleep(PAUSE)


def tables_per_master(cluster: LocalCluster, count: int) -> list[TableRun]:
    """``count`` table ids, as many on each master."""
    runs: list[TableRun] = []
    n = 0
    per = {i: 0 for i in range(cluster.masters)}
    while len(runs) < count:
        table = f"t{n}"
        n += 1
        master = cluster.ports.index(cluster.owner(key_slot(Keys(PREFIX).table(table).encode())))
        if per[master] < count // cluster.masters:
            per[master] += 1
            runs.append(TableRun(table, master))
    return runs


async def replica_took_over(cluster: LocalCluster, slot: int, dead: int) -> float:
    while True:
        with contextlib.suppress(Exception):  # no node answering yet
            if await asyncio.to_thread(cluster.owner, slot, (dead,)) != dead:
                return time.monotonic()
        await asyncio.sleep(0.05)


def describe(label: str, runs: list[TableRun]) -> None:
    took = [t for r in runs for t in r.took]
    presses = sum(r.presses for r in runs)
    refused = sum(r.refused for r in runs)
    stalls = [r.stall for r in runs]
    errors = [e for r in runs for e in r.errors]
    print(f"  {label:22} {len(runs):3} tables  presses {presses:5}  refused {refused:4}")
    if errors:
        print(f"  {'':22} {len(errors)} of them not ServiceUnavailable, e.g. {errors[0]}")
    if took:
        print(
            f"  {'':22} press took   max {max(took):5.2f} s  median {statistics.median(took):5.3f} s"
        )
    print(
        f"  {'':22} stall        max {max(stalls):5.2f} s  median {statistics.median(stalls):5.2f} s"
    )


async def scenario(
    cluster: LocalCluster, tables: int, run_s: float, urls: str, pause: bool = False
) -> None:
    config = LiveConfig(prefix=PREFIX)
    store = Store(make_client(urls, config), Keys(PREFIX), probe_timeout=config.redis_probe_timeout)
    runs = tables_per_master(cluster, tables)
    stop = asyncio.Event()
    killed: list[float] = []
    loops = [asyncio.create_task(table_loop(store, r, killed, stop)) for r in runs]
    await asyncio.sleep(3.0)  # warm: connections, slot map
    dead_port = cluster.ports[0]
    if pause:
        os.kill(cluster.procs[0].pid, signal.SIGSTOP)  # up, but answers nothing
    else:
        cluster.kill(0)
    killed.append(time.monotonic())
    took_over = asyncio.create_task(replica_took_over(cluster, 0, dead_port))
    await asyncio.sleep(run_s)
    stop.set()
    await asyncio.gather(*loops)
    over = took_over.result() - killed[0] if took_over.done() else None
    took_over.cancel()
    if pause:
        os.kill(cluster.procs[0].pid, signal.SIGCONT)
    await store.aclose()
    how = "stopped (SIGSTOP)" if pause else "killed (kill -9)"
    print(f"A master (of 3, each with a replica) {how}; {run_s:.0f} s of presses after it:")
    print(f"  replica promoted after  {over:.1f} s" if over is not None else "  not promoted")
    describe("tables on healthy slots", [r for r in runs if r.master != 0])
    describe("tables on failed slots", [r for r in runs if r.master == 0])


def run(binary: str, tables: int, run_s: float, pause: bool, full_coverage: bool) -> None:
    """The scenario on a throw-away cluster; ``REDIS_URL`` lists its masters,
    the first of which is the one that fails."""
    with tempfile.TemporaryDirectory(prefix="durak-bench-failover-") as tmp:
        cluster = start_cluster(binary, Path(tmp), 3, replicas=1, full_coverage=full_coverage)
        try:
            nodes = ",".join(f"{h}:{p}" for h, p in cluster.nodes[: cluster.masters])
            coverage = "yes" if full_coverage else "no"
            print(f"cluster-require-full-coverage {coverage}; REDIS_URL=redis+cluster://{nodes}/0")
            asyncio.run(scenario(cluster, tables, run_s, f"redis+cluster://{nodes}/0", pause))
        finally:
            cluster.stop()
