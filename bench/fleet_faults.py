"""The fleet's faults (#28), for ``bench/faults.py --soak`` and ``--broadcast``:

* ``--soak``: rolling restarts -- 3 bot processes, ``--games`` live private
  games against the AI, one random process stopped and started again every 30 s
  for ``--minutes`` (>= 10), once with SIGTERM and once with SIGKILL
  (:mod:`harness.soak`); on a 3-master Redis Cluster with ``--cluster``.
* ``--broadcast``: every update to each of 2 bot processes on a 3-master
  Redis Cluster, ``--lobbies`` group games of 3 humans opened and played to the
  end (:func:`harness.soak.broadcast_fleet`).

* ``--fleet-failover`` (#40): 3 bot processes on a cluster of 3 masters and 3
  replicas, ``--games`` group games of 3 careless players with a turn timer;
  the first startup node's master killed (-9) mid-game, later a bot process
  killed (-9) and restarted (:mod:`harness.failover_soak`).

All print the counts table of :class:`harness.soak.SoakReport`.  No asserts
(the suite's ``tests/bot/test_soak.py`` and ``tests/bot/test_e2e_fleet.py``
assert the same, shorter)."""

from __future__ import annotations

import asyncio
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from harness.failover_soak import fleet_failover
from harness.local_cluster import start_cluster
from harness.soak import SoakReport, broadcast_fleet, soak
from sandbox.local_redis import start_redis, stop


@contextmanager
def throwaway(binary: str, cluster: bool) -> Iterator[str]:
    """A throw-away redis-server (or 3-master cluster): its service URL."""
    with tempfile.TemporaryDirectory(prefix="durak-bench-") as tmp:
        if cluster:
            c = start_cluster(binary, Path(tmp), 3)
            try:
                yield "redis+cluster://" + c.url.split("://", 1)[1]
            finally:
                c.stop()
        else:
            proc, url = start_redis(binary, Path(tmp))
            try:
                yield url
            finally:
                stop(proc)


def print_report(title: str, report: SoakReport, details: int = 10) -> None:
    print(f"\n{title}\n{'-' * len(title)}\n{report.table()}", flush=True)
    for line in report.details[:details]:
        print(f"  {line}")


def run_soak(binary: str, games: int, minutes: float, seed: int, cluster: bool) -> None:
    for kill in ("SIGTERM", "SIGKILL"):
        with throwaway(binary, cluster) as url:
            report = asyncio.run(
                soak(url, f"soak:{uuid.uuid4().hex[:8]}:", kill=kill, games=games,
                     seconds=minutes * 60, seed=seed)
            )  # fmt: skip
        where = "a 3-master cluster" if cluster else "one redis-server"
        print_report(f"Rolling restarts every 30 s by {kill} ({where}, seed {seed})", report)


def run_broadcast(binary: str, lobbies: int, seed: int) -> None:
    with throwaway(binary, cluster=True) as url:
        report = asyncio.run(
            broadcast_fleet(url, f"bcast:{uuid.uuid4().hex[:8]}:", lobbies=lobbies, seed=seed)
        )
    print_report(f"Every update to both of 2 processes, 3-master cluster (seed {seed})", report)


def run_fleet_failover(
    binary: str, games: int, seed: int, node_timeout_ms: int = 2000, keep: Path | None = None
) -> None:
    report = asyncio.run(
        fleet_failover(
            binary=binary,
            games=games,
            seed=seed,
            prefix=f"ff:{uuid.uuid4().hex[:8]}:",
            node_timeout_ms=node_timeout_ms,
            keep=keep,
        )
    )
    title = f"A master and a bot process killed (-9) mid-game, {games} group games (seed {seed})"
    print_report(title, report, details=60)  # every game's first presses after the death
    print(
        f"\nfaults that must be 0 (lost, twice, unanswered, 429, backwards, stale, "
        f"wasted, tracebacks, stuck): {report.faults}"
    )
