"""The admin API under the real gunicorn with the launcher's options: an
over-long URL gets the app's JSON 414, a request line or header over
gunicorn's limits gets gunicorn's own answer -- JSON too, with the security
headers (:mod:`admin_api.gunicorn_worker`)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from admin_api.gunicorn_worker import OPTIONS
from durak.wiring import ADMIN_APP
from sandbox.launcher import GUNICORN_OPTIONS
from tests.admin.conftest import ADMIN

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def gunicorn(redis_url: str, redis_prefix: str) -> Iterator[int]:
    port = _free_port()
    env = dict(os.environ, REDIS_URL=redis_url, REDIS_PREFIX=redis_prefix, ADMIN_TOKEN=ADMIN)
    proc = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", ADMIN_APP,
         "--bind", f"127.0.0.1:{port}", *GUNICORN_OPTIONS],
        env=env,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            assert proc.poll() is None, "gunicorn exited"
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def raw(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as is; the status, headers and body of the answer."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(request)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


def get(port: int, target: str, extra: str = "") -> bytes:
    return f"GET {target} HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n".encode()


def check_json_error(answer: tuple[int, dict[str, str], bytes], status: int, code: str) -> None:
    got, headers, body = answer
    assert got == status, body
    assert headers["content-type"].startswith("application/json")
    assert json.loads(body)["error"]["code"] == code
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["cache-control"] == "no-store"
    assert headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"


def test_the_launcher_runs_gunicorn_with_the_api_options() -> None:
    assert " ".join(OPTIONS) in " ".join(GUNICORN_OPTIONS)


def test_limits_under_gunicorn_answer_json(gunicorn: int) -> None:
    port = gunicorn
    ok = raw(port, get(port, "/healthz"))
    assert ok[0] == 200
    # over the app's limit, under gunicorn's: the app's own JSON 414
    check_json_error(raw(port, get(port, "/api/v1/games?x=" + "a" * 5000)), 414, "uri_too_long")
    # over gunicorn's request-line limit: gunicorn's 414, in JSON
    check_json_error(raw(port, get(port, "/" + "a" * 9000)), 414, "uri_too_long")
    # a header over gunicorn's field size limit: its 431, in JSON
    big = "X-Big: " + "a" * 9000 + "\r\n"
    check_json_error(raw(port, get(port, "/healthz", big)), 431, "headers_too_large")
    # a body over MAX_CONTENT_LENGTH: the app's JSON 413
    body = b'{"to": "' + b"a" * 70_000 + b'"}'
    req = (
        b"POST /api/v1/games/x/reset HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        b"Content-Type: application/json\r\nAuthorization: Bearer " + ADMIN.encode() + b"\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    check_json_error(raw(port, req), 413, "payload_too_large")
