"""The README's run command (``durak run``, the console script): with no
BOT_TOKEN it brings up Redis, the admin API and the sandbox, prints their URLs, and
stops everything on Ctrl-C; the embedded Redis keeps its data across restarts."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
import redis

from sandbox.launcher import ADMIN_DOCS
from sandbox.local_redis import LocalRedis, free_loopback_port


def test_embedded_redis_keeps_data_across_restarts(tmp_path: Path) -> None:
    with LocalRedis(data_dir=tmp_path / "redis") as server:
        client = redis.Redis.from_url(server.url)
        client.set("durak:test:kept", "yes")
        client.close()
    with LocalRedis(data_dir=tmp_path / "redis") as server:
        client = redis.Redis.from_url(server.url)
        assert client.get("durak:test:kept") == b"yes"
        client.close()


def _read_until(proc: subprocess.Popen[str], pattern: str, seen: list[str]) -> re.Match[str]:
    assert proc.stdout is not None
    for line in proc.stdout:  # ends when the process does: no timer needed
        seen.append(line)
        found = re.search(pattern, line)
        if found:
            return found
    raise AssertionError(f"launcher exited without printing {pattern!r}:\n{''.join(seen)}")


@pytest.mark.slow
def test_run_command_without_token_starts_admin_api_and_sandbox(tmp_path: Path) -> None:
    port = free_loopback_port()
    env = {
        k: v for k, v in os.environ.items() if k not in ("BOT_TOKEN", "REDIS_URL", "ADMIN_TOKEN")
    }
    env.update(ADMIN_PORT=str(port), DURAK_RUN_DIR=str(tmp_path / "run"), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [str(Path(sys.executable).with_name("durak")), "run"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    seen: list[str] = []
    try:
        redis_line = _read_until(proc, r"Redis: embedded redis-server \(pid \d+\) at (\S+)", seen)
        assert str(tmp_path / "run") in redis_line.string
        admin = _read_until(
            proc, r"Admin API: (http://127\.0\.0\.1:\d+)/api/v1 .*token in (\S+) ", seen
        )
        page = _read_until(proc, r"open (http://127\.0\.0\.1:\d+/)", seen)
        assert admin.group(2) == str(tmp_path / "run" / "admin_token")
        token = (tmp_path / "run" / "admin_token").read_text().strip()
        with urllib.request.urlopen(admin.group(1) + "/healthz", timeout=30) as resp:
            assert json.load(resp)["redis"] == "ok"
        request = urllib.request.Request(
            admin.group(1) + "/api/v1/stats", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as resp:
            assert resp.status == 200
        with urllib.request.urlopen(page.group(1), timeout=30) as resp:
            assert b"<html" in resp.read().lower()
        # the page's Admin API button opens the interactive docs, not a JSON 404
        with urllib.request.urlopen(page.group(1) + "_sandbox/config", timeout=30) as resp:
            link = json.load(resp)["admin_url"]
        assert link == admin.group(1) + ADMIN_DOCS
        with urllib.request.urlopen(link, timeout=30) as resp:
            assert resp.status == 200
            assert b"swagger" in resp.read().lower()
    finally:
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        seen.append(out)
    assert proc.returncode == 0, "".join(seen)
