"""A gunicorn worker whose own error pages are JSON.

Gunicorn answers requests it cannot parse -- a request line over
``--limit-request-line`` (414), headers over ``--limit-request-field_size`` or
``--limit-request-fields`` (431), malformed HTTP (400) -- itself, before the app
sees them, with an HTML page.  :class:`JsonErrorWorker` (``--worker-class
admin_api.gunicorn_worker.JsonErrorWorker``) swaps gunicorn's ``util.write_error``
in its process for one writing the API's ``{"error": {"code", "message"}}`` body
with the same security headers as the app.  It patches a gunicorn internal: if a
gunicorn release renames it, :func:`install` raises at worker start rather than
silently answering HTML."""

from __future__ import annotations

import json
import socket
from typing import Any

from gunicorn import util  # type: ignore[import-untyped]
from gunicorn.workers.sync import SyncWorker  # type: ignore[import-untyped]

from admin_api.errors import HTTP_CODES
from admin_api.security import HEADERS, STRICT_CSP

OPTIONS = [
    "--worker-class", "admin_api.gunicorn_worker.JsonErrorWorker",
    "--limit-request-line", "8190",
    "--limit-request-fields", "50",
    "--limit-request-field_size", "8190",
]  # fmt: skip
"""gunicorn options of ``python -m admin_api`` and ``durak run``: JSON error pages;
a request line of up to 8190 bytes (gunicorn's maximum; the app's own limit on
path + query, ``ADMIN_MAX_URL``, answers first with a JSON 414); 50 headers of
up to 8190 bytes each."""


def write_json_error(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """gunicorn's ``util.write_error``, answering the API's JSON error body."""
    code = HTTP_CODES.get(status_int, f"http_{status_int}")
    body = json.dumps({"error": {"code": code, "message": mesg or reason}}).encode()
    headers = {
        **HEADERS,
        "Content-Security-Policy": STRICT_CSP,
        "Connection": "close",
        "Content-Type": "application/json",
        "Content-Length": str(len(body)),
    }
    head = f"HTTP/1.1 {status_int} {reason}\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in headers.items()
    )
    util.write_nonblock(sock, head.encode("latin1") + b"\r\n" + body)


def install() -> None:
    if not callable(getattr(util, "write_error", None)):
        raise RuntimeError("gunicorn.util.write_error is gone: JSON error pages cannot be set")
    util.write_error = write_json_error


class JsonErrorWorker(SyncWorker):
    """gunicorn's sync worker with JSON error pages."""

    def init_process(self, *args: Any, **kwargs: Any) -> None:
        install()
        super().init_process(*args, **kwargs)
