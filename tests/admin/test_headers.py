"""Issue #17: security headers on every response, errors included."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskClient

from sandbox.launcher import ADMIN_DOCS
from tables import SyncTableService
from tests.admin.conftest import READER, auth, new_table

SECURITY = {
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
}
STRICT_CSP = "default-src 'none'; frame-ancestors 'none'"


def check_headers(r: object, csp: str | None = STRICT_CSP) -> None:
    headers = r.headers  # type: ignore[attr-defined]
    for k, v in SECURITY.items():
        assert headers.get(k) == v, (k, headers)
    if csp is not None:
        assert headers.get("Content-Security-Policy") == csp


def test_security_headers_on_every_route_and_error(
    app: Flask, client: FlaskClient, svc: SyncTableService
) -> None:
    tid = new_table(svc)
    lobby = new_table(svc, first_user=20, start=False)
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith("/openapi") or rule.rule.startswith("/static"):
            continue
        url = rule.rule.replace("<game_id>", tid).replace("<lobby_id>", lobby)
        url = url.replace("<int:user_id>", "1").replace("<int:seat>", "0")
        url = url.replace("<user_id>", "1").replace("<seat>", "0")
        for method in sorted((rule.methods or set()) - {"OPTIONS", "HEAD"}):
            for headers in (auth(), auth(READER), {}):
                r = client.open(url, method=method, headers=headers, json={})
                check_headers(r)
    check_headers(client.get("/nope"))  # 404
    check_headers(client.post("/healthz"))  # 405
    check_headers(client.get("/api/v1/games"))  # 401
    check_headers(client.post(f"/api/v1/games/{tid}/end", headers=auth(READER)))  # 403
    check_headers(client.get("/openapi/openapi.json"))
    page = client.get("/openapi/swagger")
    check_headers(page, csp=None)
    csp = page.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "*" not in csp
    assert "http" not in csp


def test_the_sandbox_admin_link_opens_the_interactive_docs(client: FlaskClient) -> None:
    """The sandbox page's *Admin API* button opens ``ADMIN_DOCS`` (issue 13: it
    opened ``/``, a JSON 404): Swagger UI, served by the app itself."""
    assert client.get("/").status_code == 404
    page = client.get(ADMIN_DOCS)
    assert page.status_code == 200
    assert page.mimetype == "text/html"
    assert b"swagger" in page.data.lower()
