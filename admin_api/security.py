"""Security headers on every response, errors included: ``nosniff``,
``Cache-Control: no-store`` (the API answers every hand), ``Referrer-Policy:
no-referrer`` and a Content-Security-Policy -- ``default-src 'none';
frame-ancestors 'none'`` everywhere but the HTML pages of the Swagger docs
(``/openapi/``), which get a self-only policy whose inline scripts are allowed
by their hash only."""

from __future__ import annotations

import base64
import hashlib
import re

from flask import Flask, Response, request

STRICT_CSP = "default-src 'none'; frame-ancestors 'none'"
DOCS_CSP = (
    "default-src 'self'; script-src 'self'{hashes}; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
}
DOCS_PREFIX = "/openapi/"
_INLINE_SCRIPT = re.compile(rb"<script>(.*?)</script>", re.DOTALL)


def docs_csp(page: bytes) -> str:
    """The docs page's policy: self only, plus the hashes of its inline scripts."""
    hashes = "".join(
        f" 'sha256-{base64.b64encode(hashlib.sha256(s).digest()).decode()}'"
        for s in _INLINE_SCRIPT.findall(page)
    )
    return DOCS_CSP.format(hashes=hashes)


def add_headers(resp: Response) -> Response:
    """``after_request``: the security headers of every response."""
    for k, v in HEADERS.items():
        resp.headers[k] = v
    csp = STRICT_CSP
    if (
        request.path.startswith(DOCS_PREFIX)
        and resp.mimetype == "text/html"
        and not resp.direct_passthrough
    ):
        csp = docs_csp(resp.get_data())
    resp.headers["Content-Security-Policy"] = csp
    return resp


def init_app(app: Flask) -> None:
    app.after_request(add_headers)
