"""The ``durak`` command and the bare ``python -m telegram_bot``: what each says
and exits with when something it needs is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

DURAK = str(Path(sys.executable).with_name("durak"))


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BOT_TOKEN", "REDIS_URL")}
    env.update(extra)
    return env


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)


def test_durak_help_lists_the_commands() -> None:
    done = _run([DURAK, "--help"], _env())
    assert done.returncode == 0, done.stderr
    for command in ("bot", "admin", "sandbox", "run"):
        assert command in done.stdout


@pytest.mark.slow
def test_bare_bot_without_redis_url_says_to_set_it_or_use_durak_bot() -> None:
    done = _run([sys.executable, "-m", "telegram_bot"], _env(BOT_TOKEN="123:fake"))
    assert done.returncode == 2
    assert "REDIS_URL" in done.stderr
    assert "durak bot" in done.stderr


def test_bot_without_token_explains_how_to_get_one() -> None:
    for args in ([DURAK, "bot"], [sys.executable, "-m", "telegram_bot"]):
        done = _run(args, _env())
        assert done.returncode == 2
        assert "@BotFather" in done.stderr


@pytest.mark.slow
def test_the_fakes_switches_take_a_yes_or_a_no() -> None:
    """FAKE_LIMITS and FAKE_EPHEMERAL_COUNTED (#24): anything but a yes or a no
    is said at once, before any Redis is started."""
    for name in ("FAKE_LIMITS", "FAKE_EPHEMERAL_COUNTED"):
        done = _run([DURAK, "sandbox"], _env(**{name: "maybe"}))
        assert done.returncode == 2, done.stderr
        assert f"{name}='maybe': expected 1 or 0" in done.stderr
        assert "Traceback" not in done.stderr
