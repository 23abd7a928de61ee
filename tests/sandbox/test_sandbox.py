"""The sandbox's entry points without a browser: ``run_sandbox`` serves the page
and stops when asked; ``python -m sandbox`` prints one URL and stops
cleanly on SIGTERM; only loopback addresses are served."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import aiohttp
import pytest

from sandbox.fake_api import RateLimits
from sandbox.page import Sandbox, describe_limits, run_sandbox, sandbox_limits
from telegram_bot.settings import Settings


async def test_run_sandbox_serves_the_page_and_stops(redis_url: str, redis_prefix: str) -> None:
    stop = asyncio.Event()
    seen: dict[str, str] = {}

    async def ready(url: str) -> None:
        async with aiohttp.ClientSession() as http:
            for path in ("", "static/sandbox.js", "static/sandbox.css", "_sandbox/config"):
                async with http.get(url + path) as response:
                    assert response.status == 200, path
                    seen[path] = await response.text()
            async with http.get(url + "favicon.ico") as response:  # not a 404 each load (#29)
                assert response.status == 200
                assert response.content_type == "image/svg+xml"
            body = {"action": "start", "user_id": 100001}
            async with http.post(url + "_fake/act", json=body) as response:
                assert (await response.json())["ok"]
        seen["url"] = url
        stop.set()

    await asyncio.wait_for(
        run_sandbox(
            redis_url=redis_url,
            on_ready=ready,
            stop=stop,
            settings=Settings(redis_prefix=redis_prefix),
            admin_url="http://127.0.0.1:1/docs",
        ),
        60,
    )
    assert seen["url"].startswith("http://127.0.0.1:")
    assert "<title>" in seen[""]
    assert "sandbox.js" in seen[""]
    # each user's app language is labelled where it shows (#29: Carol starts in
    # Russian, and nothing said so)
    assert '<span class="lang-name">App language</span>' in seen[""]
    assert '"username": "durak_test_bot"' in seen["_sandbox/config"]
    assert "http://127.0.0.1:1/docs" in seen["_sandbox/config"]


async def test_the_bot_answers_in_the_sandbox(redis_url: str, redis_prefix: str) -> None:
    async with Sandbox(redis_url=redis_url, settings=Settings(redis_prefix=redis_prefix)) as sb:
        alice = sb.fake.sim(
            next(u for u in sb.fake.world.users.values() if u.first_name == "Alice")
        )
        alice.start()
        welcome = await alice.wait_message("Welcome", timeout=30)
        assert welcome.parse_mode == "HTML"


def test_only_loopback(redis_url: str) -> None:
    with pytest.raises(ValueError, match="loopback"):
        Sandbox(redis_url=redis_url, host="0.0.0.0")


@pytest.mark.slow
def test_python_m_prints_one_url_and_stops_on_sigterm(redis_url: str, redis_prefix: str) -> None:
    env = {**os.environ, "REDIS_URL": redis_url, "REDIS_PREFIX": redis_prefix}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandbox"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("Sandbox: http://127.0.0.1:"), line
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "http" not in out  # one URL only
    assert "Traceback" not in err


def test_the_environment_picks_the_sandboxs_telegram() -> None:
    """The sandbox's fake has no flood limits unless FAKE_LIMITS=1; then
    FAKE_EPHEMERAL_COUNTED picks which Telegram it plays (#24)."""
    assert not sandbox_limits({}).enabled
    assert not sandbox_limits({"FAKE_EPHEMERAL_COUNTED": "0"}).enabled
    counted = sandbox_limits({"FAKE_LIMITS": "1"})
    assert counted.enabled
    assert counted.ephemeral_counted
    assert "writes counted in the group's 20 a minute" in describe_limits(counted)
    free = sandbox_limits({"FAKE_LIMITS": "yes", "FAKE_EPHEMERAL_COUNTED": "0"})
    assert free.enabled
    assert not free.ephemeral_counted
    assert "writes not counted" in describe_limits(free)
    assert free == RateLimits(ephemeral_counted=False)
    assert describe_limits(sandbox_limits({})) == ""
    with pytest.raises(ValueError, match="FAKE_LIMITS"):
        sandbox_limits({"FAKE_LIMITS": "2"})
    assert not RateLimits.from_env({"FAKE_EPHEMERAL_COUNTED": "off"}).ephemeral_counted
    assert RateLimits.from_env({}, per_group_burst=10).per_group_burst == 10
