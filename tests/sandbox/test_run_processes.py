"""Issue #17: the run command's processes. A signal to ``durak run`` (or to
``bash .ci/dev run``) stops every child; a second run on the same data folder is
refused; the embedded redis-server is restarted when it dies; the admin token is
not printed. Each test starts real processes: all are ``slow``."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sandbox.local_redis import answers_ping, free_loopback_port

ROOT = Path(__file__).resolve().parents[2]
DURAK = str(Path(sys.executable).with_name("durak"))
WAIT_S = float(os.environ.get("DURAK_TEST_WAIT_S", "60"))

pytestmark = pytest.mark.slow


def _env(run_dir: Path, port: int) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("BOT_TOKEN", "REDIS_URL", "ADMIN_TOKEN")
    }
    env.update(ADMIN_PORT=str(port), DURAK_RUN_DIR=str(run_dir), PYTHONUNBUFFERED="1")
    return env


def _start(run_dir: Path, cmd: list[str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        cmd or [DURAK, "run"],
        env=_env(run_dir, free_loopback_port()),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )


def _read_until(proc: subprocess.Popen[str], pattern: str, seen: list[str]) -> re.Match[str]:
    assert proc.stdout is not None
    for line in proc.stdout:  # ends when the process does: no timer needed
        seen.append(line)
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"launcher exited without printing {pattern!r}:\n{''.join(seen)}")


def _poll(condition: Callable[[], bool], what: str) -> None:
    """Bounded polling for ``condition`` (no timed assertion: the bound only keeps
    a broken build from hanging the suite)."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never happened: {what}")
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _descendants(pid: int) -> dict[int, str]:
    """Every live descendant of ``pid`` by ``/proc``: pid -> command line."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rpartition(")")[2].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        parents.setdefault(ppid, []).append(int(entry.name))
    found: dict[int, str] = {}
    todo = list(parents.get(pid, []))
    while todo:
        child = todo.pop()
        try:
            cmdline = (Path(f"/proc/{child}/cmdline").read_bytes()).replace(b"\0", b" ")
        except OSError:
            continue
        found[child] = cmdline.decode(errors="replace")
        todo.extend(parents.get(child, []))
    return found


def _children_of_interest(pid: int) -> dict[int, str]:
    """Poll until the launcher's descendants include redis-server and gunicorn."""
    seen: dict[int, str] = {}

    def both() -> bool:
        seen.clear()
        seen.update(_descendants(pid))
        cmds = " ".join(seen.values())
        return "redis-server" in cmds and "gunicorn" in cmds

    _poll(both, "redis-server and gunicorn among the launcher's descendants")
    return seen


def _stop(proc: subprocess.Popen[str], seen: list[str]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        out, _ = proc.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired as e:  # or a leftover child holds the pipe open
        proc.kill()
        proc.wait()
        out = e.output.decode() if isinstance(e.output, bytes) else (e.output or "")
    seen.append(out or "")


@pytest.fixture
def launched(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    proc = _start(tmp_path / "run")
    seen: list[str] = []
    try:
        _read_until(proc, r"open (http://127\.0\.0\.1:\d+/)", seen)
        yield proc, seen
    finally:
        _stop(proc, seen)


def _redis_pid(pid: int) -> int:
    return next(p for p, cmd in _children_of_interest(pid).items() if "redis-server" in cmd)


@pytest.mark.parametrize(
    ("signum", "via_ci"),
    [(signal.SIGTERM, False), (signal.SIGHUP, False), (signal.SIGTERM, True)],
    ids=["durak-SIGTERM", "durak-SIGHUP", "ci-dev-SIGTERM"],
)
def test_a_signal_stops_every_child(tmp_path: Path, signum: int, via_ci: bool) -> None:
    cmd = ["bash", str(ROOT / ".ci" / "dev"), "run"] if via_ci else None
    proc = _start(tmp_path / "run", cmd)
    seen: list[str] = []
    try:
        _read_until(proc, r"open (http://127\.0\.0\.1:\d+/)", seen)
        children = _children_of_interest(proc.pid)
        proc.send_signal(signum)
        _stop(proc, seen)
        _poll(
            lambda: not any(_alive(p) for p in children),
            f"every child gone: {children}",
        )
    finally:
        _stop(proc, seen)
        for pid in _descendants(proc.pid):  # a failed run: leave nothing behind
            os.kill(pid, signal.SIGKILL)


# Python runs a signal's handler in the main thread at the next bytecode boundary,
# wherever that is: inside a weakref callback or a ``__del__`` (asyncio's own WeakSet
# of tasks runs one each time a task is freed), or inside the event loop's
# bookkeeping. Each script runs ``durak run`` (sandbox.launcher.main) and, once the
# page is up and the test has seen the children (a line on stdin), has the process
# signal itself there: ``signal.raise_signal`` runs the handler on the spot.
_SIGNAL_INSIDE = {
    "a-finalizer": """
def signal_now():
    class Doomed:
        pass

    doomed = Doomed()
    ref = weakref.ref(doomed, lambda _ref: signal.raise_signal(signal.SIGTERM))
    del doomed  # the callback runs here, the handler inside it
    assert ref() is None
""",
    "the-event-loop": """
def signal_now():
    call_soon = asyncio.BaseEventLoop.call_soon

    def signalled_call_soon(self, callback, *args, **kwargs):
        task = getattr(callback, "__self__", None)
        if (  # the bot's polling task being woken up
            getattr(callback, "__name__", "") == "task_wakeup"
            and isinstance(task, asyncio.Task)
            and task.get_name() == "sandbox-bot"
        ):
            asyncio.BaseEventLoop.call_soon = call_soon
            signal.raise_signal(signal.SIGTERM)
        return call_soon(self, callback, *args, **kwargs)

    asyncio.BaseEventLoop.call_soon = signalled_call_soon
""",
}
_SIGNALLED_RUN = """
import asyncio, signal, sys, weakref
import sandbox.launcher as launcher
from durak.wiring import ADMIN_APP
{signal_now}
say = launcher.say

def say_then_signal(text):
    say(text)
    if "open http" in text:  # in the sandbox's task, the event loop running
        sys.stdin.readline()
        signal_now()

launcher.say = say_then_signal
sys.exit(launcher.main(admin_app=ADMIN_APP))  # as durak run
"""


@pytest.mark.parametrize("where", sorted(_SIGNAL_INSIDE))
def test_a_signal_stops_every_child_wherever_it_lands(tmp_path: Path, where: str) -> None:
    script = _SIGNALLED_RUN.format(signal_now=_SIGNAL_INSIDE[where])
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        env=_env(tmp_path / "run", free_loopback_port()),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    seen: list[str] = []
    try:
        _read_until(proc, r"open (http://127\.0\.0\.1:\d+/)", seen)
        children = _children_of_interest(proc.pid)
        # no signal from here: the one it sends itself must stop it
        with contextlib.suppress(subprocess.TimeoutExpired):
            seen.append(proc.communicate("signal now\n", timeout=WAIT_S)[0])
        _poll(
            lambda: not any(_alive(p) for p in children),
            f"every child gone: {children}\n{''.join(seen)}",
        )
        assert proc.returncode == 0, "".join(seen)
        assert "Stopped (SIGTERM)" in "".join(seen), "".join(seen)
    finally:  # a failed run: leave nothing behind (the launcher first: it restarts Redis)
        leftovers = _descendants(proc.pid)
        _stop(proc, seen)
        for pid in leftovers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        assert proc.stdout is not None
        proc.stdout.close()


def test_a_second_run_on_the_same_folder_is_refused(
    tmp_path: Path, launched: tuple[subprocess.Popen[str], list[str]]
) -> None:
    first, _ = launched
    second = _start(tmp_path / "run")
    try:
        out, _ = second.communicate(timeout=WAIT_S)
    finally:
        if second.poll() is None:
            for pid in _descendants(second.pid):
                os.kill(pid, signal.SIGKILL)
            second.kill()
            second.wait()
    assert second.returncode != 0, out
    assert "lock" in out, out
    assert f"pid {first.pid}" in out, out


def _healthz_ok(base: str) -> bool:
    try:
        with urllib.request.urlopen(base + "/healthz", timeout=5) as resp:
            return bool(json.load(resp)["redis"] == "ok")
    except (OSError, ValueError, urllib.error.URLError):
        return False


def test_the_embedded_redis_comes_back_after_sigkill(
    launched: tuple[subprocess.Popen[str], list[str]],
) -> None:
    proc, seen = launched
    text = "".join(seen)
    port = int(re.search(r"redis://127\.0\.0\.1:(\d+)/", text).group(1))  # type: ignore[union-attr]
    base = re.search(r"Admin API: (http://127\.0\.0\.1:\d+)/api/v1", text).group(1)  # type: ignore[union-attr]
    assert _healthz_ok(base)
    old = _redis_pid(proc.pid)
    os.kill(old, signal.SIGKILL)
    _poll(lambda: not _alive(old), "the killed redis-server gone")
    _poll(lambda: answers_ping(port), "the embedded Redis answers PING again")
    _poll(lambda: _healthz_ok(base), "the admin API's /healthz reports redis ok again")
    assert _redis_pid(proc.pid) != old


def test_the_admin_token_is_not_printed(
    tmp_path: Path, launched: tuple[subprocess.Popen[str], list[str]]
) -> None:
    proc, seen = launched
    path = tmp_path / "run" / "admin_token"
    token = path.read_text().strip()
    assert path.stat().st_mode & 0o777 == 0o600
    _stop(proc, seen)
    out = "".join(seen)
    assert token not in out
    assert str(path) in out or "admin_token" in out
