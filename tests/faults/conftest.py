"""The fault-injection suite's own Redis: a ``redis-server`` that only these tests
use, so killing it never hits another test.  It keeps an append-only file
fsynced on every write (``--appendfsync always``), so a ``kill -9`` loses no
acknowledged write and a restart on the same port brings the games back."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

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

    def kill(self) -> None:
        """``kill -9``: connections reset, the port refuses."""
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
