"""The fault-injection suite's own Redis: a ``redis-server`` that only these tests
use, so killing it never hits another test.  It keeps an append-only file
fsynced on every write (``--appendfsync always``), so a ``kill -9`` loses no
acknowledged write and a restart on the same port brings the games back."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis.crc import key_slot

from harness.local_cluster import LocalCluster, command, start_cluster
from sandbox.local_redis import find_redis_server, free_loopback_port, start_redis, stop


class FaultyRedis:
    """A redis-server the test stops and starts: :meth:`kill` (``kill -9``),
    :meth:`restart` (same port, same data), :meth:`pause` / :meth:`resume`
    (SIGSTOP / SIGCONT)."""

    def __init__(self, binary: str, workdir: Path) -> None:
        self.binary = binary
        self.workdir = workdir
        self.port = free_loopback_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None
        self.paused = False

    def start(self) -> None:
        self.proc, _url = start_redis(
            self.binary,
            self.workdir,
            persist=True,
            port=self.port,
            extra_args=("--appendfsync", "always"),
        )

    prefix = "ff:"  # the key prefix of the tests' services (the server is theirs alone)

    def kill(self, *tags: str) -> None:
        """``kill -9``: connections reset, the port refuses (every key: ``tags``,
        the hash tags a :class:`ClusterOutage` kills the masters of, are moot)."""
        assert self.proc is not None
        self.resume()
        self.proc.kill()
        self.proc.wait()
        self.proc = None

    def restart(self) -> None:
        if self.proc is not None:
            self.kill()
        self.start()

    def pause(self) -> None:
        """SIGSTOP: connections stay open, nothing answers."""
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        if self.proc is not None and self.paused:
            os.kill(self.proc.pid, signal.SIGCONT)
        self.paused = False

    def close(self) -> None:
        if self.proc is not None:
            self.resume()
            stop(self.proc)
            self.proc = None


@pytest.fixture
def faulty_redis() -> Iterator[FaultyRedis]:
    binary = find_redis_server()
    if binary is None:
        pytest.fail("no redis-server for the fault tests (see tests/conftest.py)", pytrace=False)
    with tempfile.TemporaryDirectory(prefix="durak-fault-redis-") as tmp:
        server = FaultyRedis(binary, Path(tmp))
        server.start()
        try:
            yield server
        finally:
            server.close()


@pytest.fixture(scope="session")
def shared_masters() -> Iterator[LocalCluster]:
    """A Redis Cluster of 3 masters without replicas (a dead master's slots stay
    uncovered until it is started again, with its data), one per test worker: every test that
    uses it is in the ``cluster_failover`` xdist group (one worker), heals it
    before and after (:class:`ClusterOutage`, ``masters`` in
    ``test_cluster_failover.py``) and keeps its keys under a prefix of its own."""
    binary = find_redis_server()
    if binary is None:
        pytest.fail("no redis-server for the cluster tests (see tests/conftest.py)", pytrace=False)
    with tempfile.TemporaryDirectory(prefix="durak-failover-") as tmp:
        cluster = start_cluster(binary, Path(tmp), 3, replicas=0, full_coverage=False, persist=True)
        try:
            yield cluster
        finally:
            cluster.stop()


@pytest.fixture(scope="session")
def shared_replicas() -> Iterator[LocalCluster]:
    """A Redis Cluster of 3 masters, each with a replica that never takes over
    (``cluster-replica-no-failover yes``): a dead master's slots stay down --
    its replica serves reads only (``READONLY``) -- until it is started again,
    with its data.  One per test worker, as :func:`shared_masters` (the tests
    heal it before and after, in the ``cluster_failover`` xdist group)."""
    binary = find_redis_server()
    if binary is None:
        pytest.fail("no redis-server for the cluster tests (see tests/conftest.py)", pytrace=False)
    with tempfile.TemporaryDirectory(prefix="durak-replicas-") as tmp:
        cluster = start_cluster(binary, Path(tmp), 3, replicas=1, full_coverage=False, persist=True)
        try:
            for port in cluster.ports[cluster.masters :]:
                command(port, "CONFIG", "SET", "cluster-replica-no-failover", "yes")
            # every node knows every replica (gossip): a client's slot map names them
            deadline = time.monotonic() + 20
            while not all(_replicas_known(p, cluster.masters) for p in cluster.ports):
                assert time.monotonic() < deadline, "the replicas were never known to all"
                time.sleep(0.05)
            yield cluster
        finally:
            cluster.stop()


def _replicas_known(port: int, replicas: int) -> bool:
    nodes = command(port, "CLUSTER", "NODES").splitlines()
    return sum("slave" in line.split()[2].split(",") for line in nodes) >= replicas


def cluster_url(cluster: LocalCluster) -> str:
    return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in cluster.ports) + "/0"


class ClusterOutage:
    """:class:`FaultyRedis`'s ``kill`` / ``start`` on a Redis Cluster (#40): ``kill``
    kills the masters that serve the hash tags ``tags`` (every master when none
    is given) -- their slots fail (``ClusterDownError``, connection errors),
    the other masters keep serving -- and ``start`` brings them back."""

    def __init__(self, cluster: LocalCluster) -> None:
        self.cluster = cluster
        self.url = cluster_url(cluster)
        self.prefix = f"fo:{uuid.uuid4().hex[:8]}:"

    def kill(self, *tags: str) -> None:
        ports = (
            {self.cluster.owner(key_slot(f"x{{{tag}}}".encode())) for tag in tags}
            if tags
            else set(self.cluster.ports)
        )
        for port in ports:
            self.cluster.kill(self.cluster.ports.index(port))

    def start(self) -> None:
        self.cluster.heal()

    def restart(self) -> None:
        """Every master killed and started again at once (with its data)."""
        self.kill()
        self.start()


#: pytest marks of a parameter that runs on the shared cluster
ON_CLUSTER = (pytest.mark.slow, pytest.mark.xdist_group("cluster_failover"))


@pytest.fixture(params=["redis", pytest.param("cluster", marks=ON_CLUSTER)])
def outage(request: pytest.FixtureRequest) -> Iterator[FaultyRedis | ClusterOutage]:
    """The store a test kills: its own redis-server, or masters of the shared
    cluster (the same test on both, #40)."""
    if request.param == "redis":
        yield request.getfixturevalue("faulty_redis")
        return
    cluster: LocalCluster = request.getfixturevalue("shared_masters")
    cluster.heal()
    try:
        yield ClusterOutage(cluster)
    finally:
        cluster.heal()
