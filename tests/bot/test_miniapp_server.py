"""The Mini App's HTTP side (#42): the page and its files served with security
headers that let only our origin and Telegram's script run, and only
Telegram's web clients (and a configured origin: the sandbox) frame it."""

from __future__ import annotations

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from telegram_bot.miniapp.server import STATIC_FILES, miniapp_application, mount

SCRIPT = "https://telegram.org/js/telegram-web-app.js"


async def _live(_request: web.Request) -> web.Response:
    return web.Response(text="live")


def client(**options: object) -> TestClient[web.Request, web.Application]:
    root = web.Application()
    web_app_js = str(options.get("web_app_js", SCRIPT))
    framers = [str(f) for f in options.get("framers", ())]  # type: ignore[attr-defined]
    mount(root, "/app", miniapp_application(_live, web_app_js=web_app_js, framers=framers))
    return TestClient(TestServer(root))


def directives(csp: str) -> dict[str, list[str]]:
    return {d.split()[0]: d.split()[1:] for d in csp.split("; ")}


async def test_the_page_and_its_files_carry_the_security_headers() -> None:
    async with client(framers=["http://127.0.0.1:8081"]) as http:
        page = await http.get("/app/?t=abc")
        assert page.status == 200
        html = await page.text()
        assert f'<script src="{SCRIPT}"></script>' in html
        assert '<script type="module" src="static/table.js"></script>' in html
        csp = directives(page.headers["Content-Security-Policy"])
        assert csp["default-src"] == ["'none'"]
        assert csp["script-src"] == ["'self'", SCRIPT]  # no inline script, no other host
        assert csp["connect-src"] == ["'self'"]
        assert csp["frame-ancestors"] == [
            "https://web.telegram.org",
            "https://webk.telegram.org",
            "https://webz.telegram.org",
            "https://webweb.telegram.org",
            "http://127.0.0.1:8081",
        ]
        assert "X-Frame-Options" not in page.headers  # frame-ancestors decides
        assert page.headers["X-Content-Type-Options"] == "nosniff"
        assert page.headers["Referrer-Policy"] == "no-referrer"
        for name in STATIC_FILES:
            got = await http.get(f"/app/static/{name}")
            assert got.status == 200, name
            assert got.headers["Content-Security-Policy"] == page.headers["Content-Security-Policy"]
        assert "script" in (await http.get("/app/static/table.js")).content_type


async def test_nothing_else_is_served() -> None:
    async with client() as http:
        for path in ("/app/static/../server.py", "/app/static/auth.py", "/app/static/x.js"):
            got = await http.get(path)
            assert got.status == 404, path
        missing = await http.get("/app/static/nothing.css")
        assert "frame-ancestors" in missing.headers["Content-Security-Policy"]


async def test_the_configured_script_is_the_one_loaded_and_allowed() -> None:
    stand_in = "http://127.0.0.1:9999/telegram-web-app.js"
    async with client(web_app_js=stand_in) as http:
        page = await http.get("/app/")
        assert f'<script src="{stand_in}"></script>' in await page.text()
        assert directives(page.headers["Content-Security-Policy"])["script-src"] == [
            "'self'",
            stand_in,
        ]
