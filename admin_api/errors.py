"""JSON errors: every error the API answers is ``{"error": {"code", "message"}}``
with a stable ``code`` -- HTTP errors (404, 405, 415, ...), malformed JSON,
validation errors, refusals of the table service, a dead Redis (503) and
unexpected failures (500, never a stack trace)."""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import unquote

from flask import Flask, Response, current_app, request
from pydantic import ValidationError
from werkzeug.exceptions import HTTPException

from engine.errors import EngineError
from tables import LiveError, ServiceUnavailable

log = logging.getLogger(__name__)

HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    411: "length_required",
    412: "precondition_failed",
    413: "payload_too_large",
    414: "uri_too_long",
    415: "unsupported_media_type",
    422: "validation_error",
    428: "precondition_required",
    429: "too_many_requests",
    431: "headers_too_large",
    500: "internal_error",
    501: "not_implemented",
    503: "unavailable",
}

LIVE_STATUS = {
    "no_table": 404,
    "no_record": 404,
    "no_arena": 404,
    "bad_seat": 404,
    "stale_version": 409,
    "busy": 409,
    "not_allowed": 409,
    "not_owner": 403,
    "not_open": 409,
    "no_game": 409,
    "game_over": 409,
    "ai_controlled": 409,
}
"""HTTP status of a table-service refusal by its code (others: 400)."""

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MAX_JSON_DEPTH = 32
"""Request bodies nested deeper are refused (400) before they are parsed."""
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


class ApiError(Exception):
    """An error answered as JSON with ``status``, a stable ``code`` and a message."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        headers: dict[str, str] | None = None,
        **info: Any,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers or {}
        self.info = info


def error_response(
    status: int,
    code: str,
    message: str,
    headers: dict[str, str] | None = None,
    **info: Any,
) -> Response:
    body: dict[str, Any] = {"code": code, "message": message}
    body.update({k: v for k, v in info.items() if v is not None})
    resp = Response(
        json.dumps({"error": body}, ensure_ascii=False, default=str),
        status=status,
        mimetype="application/json",
    )
    for k, v in (headers or {}).items():
        resp.headers[k] = v
    return resp


def live_status(e: EngineError) -> int:
    return LIVE_STATUS.get(e.code, 400)


def validation_error(e: ValidationError) -> Response:
    """flask-openapi3's validation callback: a 422 in our format, with the
    failing fields (``loc``, ``msg``, ``type``; never the input values)."""
    details = [
        {"loc": [str(p) for p in err["loc"]], "msg": err["msg"], "type": err["type"]}
        for err in e.errors(include_url=False, include_input=False, include_context=False)
    ]
    return error_response(422, "validation_error", "the request is not valid", details=details)


def _http_error(e: HTTPException) -> Response:
    if e.response is not None:  # flask-openapi3's abort(validation response)
        return e.response  # type: ignore[return-value]
    status = e.code or 500
    headers = {k: v for k, v in e.get_headers() if k.lower() not in ("content-type",)}
    message = e.description or e.name
    if status == 405:
        message = f"{request.method} is not allowed here"
    if status == 400 and "JSON" in (e.description or ""):
        return error_response(400, "malformed_json", "the request body is not valid JSON")
    return error_response(status, HTTP_CODES.get(status, f"http_{status}"), message, headers)


def _api_error(e: ApiError) -> Response:
    return error_response(e.status, e.code, e.message, e.headers, **e.info)


def _live_error(e: EngineError) -> Response:
    info = dict(getattr(e, "info", {}))
    return error_response(live_status(e), e.code, e.message, **info)


def _redis_error(e: Exception) -> Response:
    log.warning("Redis is unavailable: %s", e)
    return error_response(
        503, "redis_unavailable", "the game store (Redis) is unavailable; try again later"
    )


def _unexpected(e: Exception) -> Response:
    log.exception("unhandled error on %s %s", request.method, request.path)
    return error_response(500, "internal_error", "internal error; it has been logged")


def check_json_body() -> None:
    """On a write: a body must be JSON (415 otherwise) and parse (400)."""
    if request.method not in WRITE_METHODS:
        return
    has_body = (
        bool(request.content_length)
        or "chunked" in request.headers.get("Transfer-Encoding", "").lower()
    )
    if not has_body:
        return
    if not request.is_json:
        raise ApiError(
            415, "unsupported_media_type", "a request body must be JSON (application/json)"
        )
    body = request.get_data(cache=True)  # over MAX_CONTENT_LENGTH: a JSON 413
    if _depth(body) > MAX_JSON_DEPTH:
        raise ApiError(400, "malformed_json", "the request body is nested too deeply")
    try:
        json.loads(body)
    except (ValueError, RecursionError):
        raise ApiError(400, "malformed_json", "the request body is not valid JSON") from None


def _depth(body: bytes) -> int:
    """An upper bound of the nesting depth of a JSON text (brackets in strings
    count too: a body that only looks deep is refused, never parsed deeply)."""
    depth = top = 0
    for c in body.translate(None, _NOT_BRACKETS):
        depth += 1 if c in b"[{" else -1
        top = max(top, depth)
    return top


def check_url_length() -> None:
    """``before_request``: a path plus query longer than ``MAX_URL_LENGTH``
    characters is a JSON 414 (gunicorn refuses longer request lines itself, see
    docs/ADMIN_API.md).  Counted decoded, so the figure does not depend on which
    characters a client chose to percent-encode."""
    limit = current_app.config["MAX_URL_LENGTH"]
    query = unquote(request.query_string.decode("latin-1"))
    if len(request.path) + len(query) > limit:
        raise ApiError(414, "uri_too_long", f"the URL is longer than {limit} characters")


def check_query_repeats() -> None:
    """``before_request``: every query parameter of the API takes one value; one
    given more than once (``?user=1&user=2``) is a 422 naming it -- taking the
    first and ignoring the rest would answer a question nobody asked."""
    repeated = sorted(k for k, values in request.args.lists() if len(values) > 1)
    if repeated:
        details = [
            {"loc": ["query", k], "msg": "given more than once", "type": "repeated"}
            for k in repeated
        ]
        raise ApiError(422, "validation_error", "the request is not valid", details=details)


def init_app(app: Flask) -> None:
    app.register_error_handler(HTTPException, _http_error)
    app.register_error_handler(ApiError, _api_error)
    app.register_error_handler(LiveError, _live_error)  # ServiceUnavailable: 503 (below)
    app.register_error_handler(EngineError, _live_error)
    app.register_error_handler(ServiceUnavailable, _redis_error)
    app.register_error_handler(Exception, _unexpected)
