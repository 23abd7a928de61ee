"""A throw-away Redis Cluster on loopback, for tests and benchmarks.

:func:`start_cluster` starts ``masters`` redis-servers (no persistence) with
``--cluster-enabled yes``, each in its own folder under ``workdir`` and on a
free port, spreads the 16,384 hash slots over them (``CLUSTER ADDSLOTSRANGE``),
introduces them to each other (``CLUSTER MEET``) and waits until every node
reports ``cluster_state:ok`` and knows every other.  With ``replicas=1`` each
master gets a replica (``CLUSTER REPLICATE``) that the cluster promotes when
its master fails (``cluster-node-timeout``: 2 s unless told) -- the failover tests and
``bench/faults.py --failover`` kill a master of such a cluster (#28).
No ``redis-cli`` needed: only the server binary, spoken to in raw RESP (the
table service is the only code that uses the redis client).
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.local_redis import LocalRedisError, start_redis, stop

SLOTS = 16384
READY_TIMEOUT_S = 20.0


@dataclass
class LocalCluster:
    """The running nodes; ``url`` (``redis://host:port/0`` of the first node) is
    a startup node for ``redis.asyncio.RedisCluster.from_url``.  The first
    ``masters`` nodes start as masters, the others as replicas (node
    ``masters + i`` replicates master ``i``)."""

    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)
    ports: list[int] = field(default_factory=list)
    masters: int = 0
    binary: str = ""
    workdir: Path = Path()
    args: tuple[str, ...] = ()

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

    def kill(self, index: int) -> None:
        """``kill -9`` node ``index`` (its replica takes over its slots)."""
        self.procs[index].kill()
        self.procs[index].wait()

    def replicated(self, port: int, timeout: float = 30.0) -> None:
        """Wait until a replica of the master on ``port`` has every write the
        master has now (its offset): ``WAIT`` on a connection of its own knows
        none of the others' writes, and a replica still reconnecting after its
        master's restart serves stale data meanwhile (#40: a test that read
        the replica saw writes missing)."""
        goal = int(_info(port, "replication")["master_repl_offset"])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for other in self.ports:
                if other == port:
                    continue
                with contextlib.suppress(OSError, LocalRedisError):
                    fields = _info(other, "replication")
                    if (
                        fields.get("master_port") == str(port)
                        and fields.get("master_link_status") == "up"
                        and int(fields.get("slave_repl_offset", "-1")) >= goal
                    ):
                        return
            time.sleep(0.05)
        raise LocalRedisError(f"no replica of port {port} caught up in {timeout} s")

    def is_master(self, index: int) -> bool:
        """Does node ``index`` call itself a master now (a replica promoted)?"""
        with contextlib.suppress(OSError, LocalRedisError):
            return _info(self.ports[index], "replication").get("role") == "master"
        return False

    def restart(self, index: int) -> None:
        """Start node ``index`` again on its port with its ``nodes.conf``: it
        rejoins the cluster (a master that was failed over as a replica)."""
        stop(self.procs[index])
        self.procs[index], _url = start_redis(
            self.binary, self.workdir / f"node{index}", port=self.ports[index], extra_args=self.args
        )

    def heal(self) -> None:
        """Start every node that is down again (:meth:`restart`) and wait until
        every node sees the whole cluster well: each slot served, no node
        failing -- so that one cluster serves test after test, each killing
        nodes of its own.  A master failed over stays its replica's replica
        (roles are not swapped back)."""
        for index, proc in enumerate(self.procs):
            if proc.poll() is not None:
                self.restart(index)
        _wait(lambda: all(_healthy(p, len(self.ports)) for p in self.ports), self.ports)

    def owner(self, slot: int, skip: Sequence[int] = ()) -> int:
        """The port of the master serving ``slot`` now, as the first node that
        answers (not one of the ports ``skip``) sees it."""
        for port in self.ports:
            if port in skip or self.procs[self.ports.index(port)].poll() is not None:
                continue
            with contextlib.suppress(OSError, LocalRedisError):
                for line in command(port, "CLUSTER", "NODES").splitlines():
                    parts = line.split()
                    if "master" not in parts[2] or "fail" in parts[2]:
                        continue
                    for rng in parts[8:]:
                        first, _, last = rng.partition("-")
                        if rng[0].isdigit() and int(first) <= slot <= int(last or first):
                            return int(parts[1].split("@")[0].rsplit(":", 1)[1])
        raise LocalRedisError(f"no live master serves slot {slot}")


def slot_ranges(masters: int) -> list[tuple[int, int]]:
    """The slots of each master: ``masters`` contiguous ranges covering 0..16383."""
    bounds = [SLOTS * i // masters for i in range(masters + 1)]
    return [(bounds[i], bounds[i + 1] - 1) for i in range(masters)]


def start_cluster(
    binary: str,
    workdir: Path,
    masters: int = 3,
    *,
    replicas: int = 0,
    full_coverage: bool = True,
    persist: bool = False,
    node_timeout_ms: int = 2000,
) -> LocalCluster:
    """Start a cluster of ``masters`` nodes, each with ``replicas`` replicas (see
    the module docstring).  ``full_coverage=False``: ``cluster-require-full-coverage
    no``, the masters that are up keep serving their slots while another one's
    are not covered (#28).  ``persist``: each node keeps an append-only file
    fsynced on every write, so a node killed and restarted comes back with its
    data (as a promoted replica would hold it).  ``node_timeout_ms``: the
    ``cluster-node-timeout`` (a dead master's replica is promoted a second or
    two later than it after the death: 3.5 s at 2000 ms).  Raise :class:`LocalRedisError`
    when it does not come up."""
    args: tuple[str, ...] = (
        "--cluster-enabled", "yes",
        "--cluster-config-file", "nodes.conf",
        "--cluster-node-timeout", str(node_timeout_ms),
        "--cluster-require-full-coverage", "yes" if full_coverage else "no",
    )  # fmt: skip
    if persist:
        args += ("--appendonly", "yes", "--appendfsync", "always")
    cluster = LocalCluster(masters=masters, binary=binary, workdir=workdir, args=args)
    try:
        for i in range(masters * (1 + replicas)):
            node_dir = workdir / f"node{i}"
            node_dir.mkdir(parents=True, exist_ok=True)
            proc, url = start_redis(binary, node_dir, extra_args=args)
            cluster.procs.append(proc)
            cluster.ports.append(int(url.rsplit(":", 1)[1].split("/")[0]))
        _form(cluster.ports, masters)
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


def _form(ports: Sequence[int], masters: int) -> None:
    for port, (first, last) in zip(ports, slot_ranges(masters), strict=False):
        command(port, "CLUSTER", "ADDSLOTSRANGE", first, last)
    for port in ports[1:]:
        command(ports[0], "CLUSTER", "MEET", "127.0.0.1", port)
    _wait(lambda: all(_known(p, len(ports)) for p in ports), ports)
    ids = [command(p, "CLUSTER", "MYID") for p in ports[:masters]]
    for i, port in enumerate(ports[masters:]):
        command(port, "CLUSTER", "REPLICATE", ids[i % masters])
    _wait(lambda: all(_ready(p, len(ports)) for p in ports) and _synced(ports[masters:]), ports)


def _wait(done: Callable[[], bool], ports: Sequence[int]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if done():
            return
        time.sleep(0.05)
    raise LocalRedisError(f"the Redis Cluster on ports {list(ports)} did not form")


def _info(port: int, *section: str) -> dict[str, str]:
    reply = command(port, *section) if section[0] == "CLUSTER" else command(port, "INFO", *section)
    return dict(line.split(":", 1) for line in reply.split() if ":" in line)


def _known(port: int, nodes: int) -> bool:
    return _info(port, "CLUSTER", "INFO").get("cluster_known_nodes") == str(nodes)


def _ready(port: int, nodes: int) -> bool:
    fields = _info(port, "CLUSTER", "INFO")
    return fields.get("cluster_state") == "ok" and fields.get("cluster_known_nodes") == str(nodes)


def _healthy(port: int, nodes: int) -> bool:
    """``port`` sees every node and every slot served, none failing."""
    fields = _info(port, "CLUSTER", "INFO")
    return (
        _ready(port, nodes)
        and fields.get("cluster_slots_ok") == str(SLOTS)
        and fields.get("cluster_slots_pfail") == "0"
        and fields.get("cluster_slots_fail") == "0"
    )


def _synced(replicas: Sequence[int]) -> bool:
    """Every replica is linked to its master (it can be promoted)."""
    return all(_info(p, "replication").get("master_link_status") == "up" for p in replicas)
