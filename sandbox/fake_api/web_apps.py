"""Mini Apps in the fake (#42): what a Telegram app does when a user opens one.

A ``web_app`` button (private chats only, :func:`sandbox.fake_api.text.check_private_only`),
the private chat's menu button (``setChatMenuButton`` with a ``web_app``), or
a direct link ``https://t.me/<bot>/<short name>?startapp=<param>`` to an app
registered for the bot (what @BotFather's ``/newapp`` does:
:meth:`World.register_web_app <sandbox.fake_api.world.World.register_web_app>`)
opens the app's URL with its launch parameters in the URL's hash, as
Telegram's clients pass them (Telegram's Mini Apps docs, "Initializing Mini
Apps"): ``tgWebAppData`` (the init data), ``tgWebAppVersion``,
``tgWebAppPlatform``, ``tgWebAppThemeParams`` (JSON) and, for a direct link,
``tgWebAppStartParam``.

The init data is signed here, server-side, exactly as Telegram signs it: the
fields but ``hash`` sorted by name, each ``name=value`` (decoded) joined by
``\\n`` -- the data-check-string --, signed by HMAC-SHA256 with the key
HMAC-SHA256(key="WebAppData", message=<bot token>); ``hash`` is its hex
digest.  So the page's stand-in script (``/telegram-web-app.js``,
:data:`STAND_IN`) does no crypto, and a bot checks the data as it would
Telegram's (``aiogram.utils.web_app.safe_parse_webapp_init_data``).  Fields:
``user`` (JSON), ``auth_date``, ``hash``; from a direct link also
``chat_type``, ``chat_instance`` and ``start_param``.  Not simulated: the
``query_id`` of ``answerWebAppQuery`` and the third-party ``signature``
(Ed25519, Telegram's own key).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

if TYPE_CHECKING:
    from sandbox.fake_api.models import Chat, User
    from sandbox.fake_api.world import World

STAND_IN = Path(__file__).with_name("telegram-web-app.js")
"""The stand-in of Telegram's ``telegram-web-app.js``, served at
:data:`SCRIPT_PATH`."""
SCRIPT_PATH = "/telegram-web-app.js"

VERSION = "9.1"
"""The Bot API version of Mini Apps the fake's "app" supports (``tgWebAppVersion``)."""
PLATFORM = "weba"
"""``tgWebAppPlatform``: Telegram's web client (the sandbox page is one)."""

THEMES: dict[str, dict[str, str]] = {
    "light": {
        "bg_color": "#ffffff",
        "text_color": "#000000",
        "hint_color": "#999999",
        "link_color": "#2481cc",
        "button_color": "#2481cc",
        "button_text_color": "#ffffff",
        "secondary_bg_color": "#efeff3",
        "header_bg_color": "#ffffff",
        "accent_text_color": "#2481cc",
        "section_bg_color": "#ffffff",
        "section_header_text_color": "#6d6d71",
        "subtitle_text_color": "#999999",
        "destructive_text_color": "#ff3b30",
        "bottom_bar_bg_color": "#e4e4e4",
    },
    "dark": {
        "bg_color": "#212121",
        "text_color": "#ffffff",
        "hint_color": "#aaaaaa",
        "link_color": "#8774e1",
        "button_color": "#8774e1",
        "button_text_color": "#ffffff",
        "secondary_bg_color": "#0f0f0f",
        "header_bg_color": "#212121",
        "accent_text_color": "#8774e1",
        "section_bg_color": "#212121",
        "section_header_text_color": "#aaaaaa",
        "subtitle_text_color": "#aaaaaa",
        "destructive_text_color": "#e53935",
        "bottom_bar_bg_color": "#181818",
    },
}
"""``themeParams`` of a light and a dark Telegram (the frame's toggle)."""

START_PARAM = re.compile(r"^[A-Za-z0-9_-]{1,512}$")
"""A direct link's ``startapp``: up to 512 of ``A-Za-z0-9_-``."""
_DIRECT = re.compile(r"^/([A-Za-z0-9_]{5,32})/([A-Za-z0-9_]{3,30})/?$")


def sign_init_data(token: str, fields: Mapping[str, str]) -> str:
    """``fields`` as Telegram's init data: URL-encoded, with their ``hash``."""
    check = "\n".join(f"{k}={v}" for k, v in sorted(fields.items()) if k != "hash")
    secret = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    digest = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode([*((k, v) for k, v in fields.items() if k != "hash"), ("hash", digest)])


@dataclass(frozen=True)
class Launch:
    """A Mini App as a Telegram app opens it."""

    url: str
    """The app's URL with the launch parameters in its hash (the frame's ``src``)."""
    init_data: str
    """``Telegram.WebApp.initData``."""
    start_param: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "init_data": self.init_data, "start_param": self.start_param}


def user_json(user: User) -> str:
    """The ``user`` field: compact JSON, as Telegram writes it."""
    data: dict[str, Any] = {"id": user.id, "first_name": user.first_name}
    if user.last_name:
        data["last_name"] = user.last_name
    if user.username:
        data["username"] = user.username
    if user.language_code:
        data["language_code"] = user.language_code
    data["allows_write_to_pm"] = True
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def launch(
    world: World,
    user: User,
    app_url: str,
    *,
    chat: Chat | None = None,
    start_param: str | None = None,
    theme: str = "light",
) -> Launch:
    """Open ``app_url`` for ``user``: a ``web_app`` button or the menu button
    (no ``chat``), or a direct link opened in ``chat`` with ``start_param``."""
    fields = {"user": user_json(user), "auth_date": str(world.now())}
    if chat is not None:  # a direct link: where it was opened, and its parameter
        fields["chat_instance"] = world.chat_instance(chat)
        # as the fake's inline queries say it: "sender", the user's own chat with the bot
        fields["chat_type"] = "sender" if chat.user_id == user.id else chat.type
        if start_param is not None:
            fields["start_param"] = start_param
    init_data = sign_init_data(world.options.token, fields)
    params = [
        ("tgWebAppData", init_data),
        ("tgWebAppVersion", VERSION),
        ("tgWebAppPlatform", PLATFORM),
        ("tgWebAppThemeParams", json.dumps(THEMES.get(theme, THEMES["light"]))),
    ]
    if start_param is not None:
        params.append(("tgWebAppStartParam", start_param))
    parts = urlsplit(app_url)
    url = urlunsplit(parts._replace(fragment=urlencode(params)))
    world.touch("web_app_opened", chat_id=chat.id if chat else None, user_id=user.id)
    return Launch(url, init_data, start_param)


def direct_link(world: World, url: str) -> tuple[str, str | None] | None:
    """``https://t.me/<this bot>/<short name>?startapp=<param>``: (the app's URL,
    the parameter) for an app registered for this bot; None for another link.
    Raises ValueError for this bot's link to an app it has not registered, or
    a ``startapp`` Telegram would refuse."""
    parts = urlsplit(url if "://" in url else "https://" + url)
    if parts.hostname not in ("t.me", "telegram.me"):
        return None
    m = _DIRECT.match(parts.path)
    if m is None or m.group(1).lower() != (world.bot.username or "").lower():
        return None
    app = world.web_apps.get(m.group(2).lower())
    if app is None:
        raise ValueError(f"the bot has no Mini App named {m.group(2)!r} (@BotFather /newapp)")
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    param = query.get("startapp")
    if param is not None and not START_PARAM.match(param):
        raise ValueError(f"startapp {param!r}: up to 512 of A-Za-z0-9_-")
    return app, param
