"""Bearer-token auth of ``/api/``: ``ADMIN_TOKEN`` reads and writes,
``ADMIN_READ_TOKEN`` (optional) only reads.  Tokens are compared in constant
time; the token itself is never logged or audited, only its name and role."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from flask import Flask, current_app, g, request

from admin_api.errors import WRITE_METHODS, ApiError

READ, WRITE = "read", "write"


@dataclass(frozen=True)
class Principal:
    """Who made a request: the token's name and role (``read`` or ``write``)."""

    name: str
    role: str


def _tokens() -> list[tuple[bytes, Principal]]:
    cfg = current_app.config
    tokens = [(cfg["ADMIN_TOKEN"].encode(), Principal("admin", WRITE))]
    if cfg.get("ADMIN_READ_TOKEN"):
        tokens.append((cfg["ADMIN_READ_TOKEN"].encode(), Principal("reader", READ)))
    return tokens


def identify(header: str) -> Principal | None:
    """The principal of an ``Authorization`` header value, or None."""
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    given = token.encode()
    found = None
    for secret, principal in _tokens():  # compare with every token, always
        if hmac.compare_digest(given, secret) and found is None:
            found = principal
    return found


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, headers={"WWW-Authenticate": "Bearer"})


def check_auth() -> None:
    """``before_request`` for ``/api/``: 401 without or with a wrong token, 403 for a
    read-only token on a write."""
    if not request.path.startswith("/api/"):
        return
    header = request.headers.get("Authorization", "")
    if not header:
        raise _unauthorized("an 'Authorization: Bearer <token>' header is required")
    principal = identify(header)
    if principal is None:
        raise _unauthorized("the bearer token is not valid")
    g.principal = principal
    if request.method in WRITE_METHODS and principal.role != WRITE:
        raise ApiError(403, "forbidden", "this token may only read")


def init_app(app: Flask) -> None:
    app.before_request(check_auth)
