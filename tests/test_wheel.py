"""The package as a user gets it: the wheel (not the source tree), installed into
a fresh virtualenv, has the compiled catalogs, the sandbox's page, a working
admin API and the ``durak`` command.

It holds nothing of the test harness (``harness/``).

The wheel is built from a copy of the source without any compiled ``.mo`` file
(the build must make them).  The new virtualenv gets the project with
``--no-deps``; its dependencies are the outer environment's, through a ``.pth``
file naming the outer site-packages (appended to ``sys.path`` after the new
venv's own, and its ``.pth`` files -- the editable install -- are not run), so
nothing is downloaded but the build requirements.  The checks run with
``python -I`` in ``tmp_path`` and assert that the project is imported from the
new virtualenv.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP = shutil.ignore_patterns(
    ".git", ".venv", ".run", "build", "dist", "*.egg-info", "*.mo", "*.pyc",
    "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis",
)  # fmt: skip

HARNESS_WAS = tuple(
    f"sandbox/{name}.py" for name in ("soak", "fleet", "failover_soak", "local_cluster")
)
"""Where ``harness/`` lived in the product before #39 moved it out of the wheel."""

CHECKS = """
import sys
from pathlib import Path

import admin_api, durak, engine, sandbox, tables, telegram_bot

venv = Path(sys.prefix).resolve()
for module in (admin_api, durak, engine, sandbox, tables, telegram_bot):
    assert Path(module.__file__).resolve().is_relative_to(venv), module.__file__

from telegram_bot.views.i18n import get_i18n

assert get_i18n().gettext("Take", locale="ru") == "Беру"

from sandbox.page.server import STATIC

assert (STATIC / "index.html").is_file() and (STATIC / "sandbox.js").is_file()

from sandbox.fake_api.web_apps import STAND_IN  # the stand-in telegram-web-app.js (#42)

assert STAND_IN.is_file()

from admin_api.service import close_service
from durak.wiring import admin_app  # the product's admin API (#39: budgets wired in)

app = admin_app(
    {"TESTING": True, "ADMIN_TOKEN": "t0ken", "REDIS_URL": sys.argv[1], "REDIS_PREFIX": sys.argv[2]}
)
response = app.test_client().get("/healthz")
assert response.status_code == 200, response.data
assert response.get_json()["redis"] == "ok", response.data
close_service(app)
print("wheel checks passed")
"""


def _run(args: list[str | Path], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, f"{args}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_the_installed_wheel_speaks_serves_and_has_the_durak_command(
    tmp_path: Path, redis_url: str, redis_prefix: str
) -> None:
    src, dist, venv = tmp_path / "src", tmp_path / "dist", tmp_path / "venv"
    shutil.copytree(ROOT, src, ignore=SKIP)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", dist, src], tmp_path)
    (wheel,) = dist.glob("durak_bot-*.whl")
    # the test harness stays out of the wheel (#39): its old places too
    names = zipfile.ZipFile(wheel).namelist()
    shipped = [n for n in names if n.startswith(("harness/", *HARNESS_WAS))]
    assert not shipped, shipped
    assert "sandbox/webhook_proxy.py" in names  # the operators' proxy (README) stays

    _run([sys.executable, "-m", "venv", "--without-pip", venv], tmp_path)
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", wheel], tmp_path)  # fmt: skip
    site = _run([python, "-I", "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp_path)  # fmt: skip
    Path(site.strip(), "outer-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")

    out = _run([python, "-I", "-c", CHECKS, redis_url, redis_prefix], tmp_path)
    assert "wheel checks passed" in out

    usage = _run([venv / "bin" / "durak", "--help"], tmp_path)
    for command in ("bot", "admin", "sandbox", "run"):
        assert command in usage
