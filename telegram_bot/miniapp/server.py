"""The Mini App's HTTP side (#42): an aiohttp application the bot's own
process serves -- on the webhook's server under ``MINIAPP_PATH``, or with
long polling on a port of its own (``MINIAPP_PORT``, :mod:`telegram_bot.__main__`).

``<path>/``            the page (``static/index.html``)
``<path>/static/<f>``  its files, shipped in the wheel (package data)
``<path>/live``        its live channel, a WebSocket (:mod:`.session`)
``<path>/api/<read>``  its reads: a replay, the player page (:mod:`.api`)

Every answer carries the security headers (:func:`security_headers`): scripts
only from our own origin and Telegram's ``telegram-web-app.js`` (its
configured URL), no inline script, nothing else loaded from elsewhere, and
the page may be framed only by Telegram's web clients (and the sandbox's
page when configured)."""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Middleware

STATIC = Path(__file__).parent / "static"

TELEGRAM_FRAMERS = (
    "https://web.telegram.org",
    "https://webk.telegram.org",
    "https://webz.telegram.org",
    "https://webweb.telegram.org",
)
"""Telegram's web clients, which show a Mini App in an iframe."""

STATIC_FILES = frozenset(
    {"table.js", "cards.js", "board.js", "reads.js", "viewer.js", "player.js", "table.css"}
)
"""The page's files (anything else under ``static/`` is 404)."""


def origin_of(url: str) -> str:
    """``scheme://host[:port]`` of ``url`` ("" when it has none)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


def content_security_policy(web_app_js: str, framers: Iterable[str] = ()) -> str:
    """The page's CSP: its own scripts and ``web_app_js`` (a full URL: only that
    script of its host), its own styles and connections (the live channel),
    images of its own and ``data:`` URLs (cards drawn as SVG), no plugins, no
    base or form targets; framed only by Telegram's web clients and ``framers``."""
    ancestors = " ".join(dict.fromkeys((*TELEGRAM_FRAMERS, *(f for f in framers if f))))
    return "; ".join(
        (
            "default-src 'none'",
            f"script-src 'self' {web_app_js}",
            "style-src 'self'",
            "img-src 'self' data:",
            "connect-src 'self'",
            "font-src 'self'",
            "base-uri 'none'",
            "form-action 'none'",
            "object-src 'none'",
            f"frame-ancestors {ancestors}",
        )
    )


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def security_headers(csp: str) -> Middleware:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            response = await handler(request)
        except web.HTTPException as e:  # a 404 carries them too
            response = e
        if not response.prepared:  # a WebSocket's upgrade is sent by its handler
            response.headers["Content-Security-Policy"] = csp
            response.headers["X-Content-Type-Options"] = "nosniff"
            response.headers["Referrer-Policy"] = "no-referrer"
            response.headers["Cross-Origin-Opener-Policy"] = "same-origin"
            response.headers.setdefault("Cache-Control", "no-cache")
        if isinstance(response, web.HTTPException):
            raise response
        return response

    return middleware


def miniapp_application(
    live: Handler,
    *,
    web_app_js: str,
    framers: Iterable[str] = (),
    reads: Mapping[str, Handler] | None = None,
) -> web.Application:
    """The Mini App's routes (mount it under ``MINIAPP_PATH``: ``add_subapp``);
    ``live``: the WebSocket handler (:meth:`.session.PageChannel.handle`);
    ``reads``: ``api/<name>`` GET handlers (:meth:`.api.PageReads.routes`)."""
    app = web.Application(
        middlewares=[security_headers(content_security_policy(web_app_js, framers))]
    )
    page = (
        (STATIC / "index.html")
        .read_text(encoding="utf-8")
        .replace("{{TELEGRAM_WEB_APP_JS}}", html.escape(web_app_js))
    )

    async def index(_request: web.Request) -> web.Response:
        return web.Response(text=page, content_type="text/html")

    async def static(request: web.Request) -> web.FileResponse:
        name = request.match_info["name"]
        if name not in STATIC_FILES:
            raise web.HTTPNotFound()
        return web.FileResponse(STATIC / name)

    app.router.add_get("/", index)
    app.router.add_get("/static/{name}", static)
    app.router.add_get("/live", live)
    for name, read in (reads or {}).items():
        app.router.add_get(f"/api/{name}", read)
    return app


def mount(root: web.Application, path: str, miniapp: web.Application) -> None:
    """The Mini App under ``path`` of ``root``: ``<path>/`` the page."""
    root.add_subapp(path, miniapp)
