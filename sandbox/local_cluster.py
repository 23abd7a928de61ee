"""A throw-away Redis Cluster on loopback, for tests and benchmarks.

:func:`start_cluster` starts ``masters`` redis-servers (no replicas, no
persistence) with ``--cluster-enabled yes``, each in its own folder under
``workdir`` and on a free port, spreads the 16,384 hash slots over them
(``CLUSTER ADDSLOTSRANGE``), introduces them to each other (``CLUSTER MEET``)
and waits until every node reports ``cluster_state:ok`` and knows every other.
No ``redis-cli`` needed: only the server binary, spoken to in raw RESP (the
table service is the only code that uses the redis client).
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.local_redis import LocalRedisError, start_redis, stop

SLOTS = 16384
READY_TIMEOUT_S = 20.0


@dataclass
class LocalCluster:
    """The running nodes; ``url`` (``redis://host:port/0`` of the first node) is
    a startup node for ``redis.asyncio.RedisCluster.from_url``."""

    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    @property
    def nodes(self) -> list[tuple[str, int]]:
        return [("127.0.0.1", p) for p in self.ports]

    def stop(self) -> None:
        for proc in self.procs:
            stop(proc)
        self.procs.clear()


def slot_ranges(masters: int) -> list[tuple[int, int]]:
    """The slots of each master: ``masters`` contiguous ranges covering 0..16383."""
    bounds = [SLOTS * i // masters for i in range(masters + 1)]
    return [(bounds[i], bounds[i + 1] - 1) for i in range(masters)]


def start_cluster(binary: str, workdir: Path, masters: int = 3) -> LocalCluster:
    """Start a cluster of ``masters`` nodes (see the module docstring).  Raise
    :class:`LocalRedisError` when it does not come up."""
    cluster = LocalCluster()
    try:
        for i in range(masters):
            node_dir = workdir / f"node{i}"
            node_dir.mkdir(parents=True, exist_ok=True)
            proc, url = start_redis(
                binary,
                node_dir,
                extra_args=(
                    "--cluster-enabled", "yes",
                    "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", "2000",
                ),
            )  # fmt: skip
            cluster.procs.append(proc)
            cluster.ports.append(int(url.rsplit(":", 1)[1].split("/")[0]))
        _form(cluster.ports)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def command(port: int, *args: str | int) -> str:
    """One command to the node on ``port`` in raw RESP; its simple or bulk string
    reply.  Raise :class:`LocalRedisError` on an error reply."""
    parts = [str(a).encode() for a in args]
    request = b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
        conn.sendall(request)
        reader = conn.makefile("rb")
        head = reader.readline().rstrip(b"\r\n")
        if head.startswith(b"$"):
            size = int(head[1:])
            return "" if size < 0 else reader.read(size + 2)[:size].decode()
        if head.startswith(b"-"):
            raise LocalRedisError(f"port {port}: {head[1:].decode()}")
        return head[1:].decode()


def _form(ports: Sequence[int]) -> None:
    for port, (first, last) in zip(ports, slot_ranges(len(ports)), strict=True):
        command(port, "CLUSTER", "ADDSLOTSRANGE", first, last)
    for port in ports[1:]:
        command(ports[0], "CLUSTER", "MEET", "127.0.0.1", port)
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if all(_ready(p, len(ports)) for p in ports):
            return
        time.sleep(0.05)
    raise LocalRedisError(f"the Redis Cluster on ports {list(ports)} did not form")


def _ready(port: int, masters: int) -> bool:
    fields = dict(
        line.split(":", 1) for line in command(port, "CLUSTER", "INFO").split() if ":" in line
    )
    return fields.get("cluster_state") == "ok" and fields.get("cluster_known_nodes") == str(masters)
