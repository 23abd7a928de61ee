"""The page's ``Telegram.WebApp.initData`` checked on the server (#42): its
signature -- HMAC-SHA256 with the key HMAC-SHA256("WebAppData", bot token),
:func:`aiogram.utils.web_app.safe_parse_webapp_init_data` -- and its age
(``auth_date`` not older than ``MINIAPP_INIT_DATA_MAX_AGE``).  A page whose
init data passes is that Telegram user's; anything else is refused before it
reads or changes anything.  :func:`sign_init_data` signs as Telegram does (the
tests, a stand-in ``Telegram.WebApp``)."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

from aiogram.utils.web_app import safe_parse_webapp_init_data

MAX_INIT_DATA = 4096
"""Bytes of init data looked at (Telegram's are a few hundred)."""

FUTURE_SKEW = 300
"""Seconds an ``auth_date`` may lie ahead of our clock (clocks differ a little)."""


class InitDataRefused(ValueError):
    """Init data that does not prove a user: ``reason`` is ``malformed``,
    ``signature``, ``stale`` or ``no_user``."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"init data refused: {reason}")
        self.reason = reason


@dataclass(frozen=True)
class PageUser:
    """The Telegram user a page belongs to, from its checked init data."""

    id: int
    name: str
    language: str | None
    start_param: str | None


def check_init_data(token: str, init_data: str, *, max_age: float, now: float) -> PageUser:
    """The user ``init_data`` proves, or :class:`InitDataRefused`: a bad
    signature (forged, another bot's token, a field changed -- another user's
    id), an ``auth_date`` older than ``max_age`` seconds at ``now`` (or from
    the future), or no user in it."""
    if not init_data or len(init_data) > MAX_INIT_DATA:
        raise InitDataRefused("malformed")
    try:
        data = safe_parse_webapp_init_data(token, init_data)
    except ValueError as e:  # the signature, or a field that does not parse
        raise InitDataRefused("signature" if "signature" in str(e) else "malformed") from e
    except TypeError as e:  # a hash that is not ASCII: compare_digest refuses it
        raise InitDataRefused("malformed") from e
    age = now - data.auth_date.timestamp()
    if age > max_age or age < -FUTURE_SKEW:
        raise InitDataRefused("stale")
    user = data.user
    if user is None:
        raise InitDataRefused("no_user")
    name = " ".join(p for p in (user.first_name, user.last_name) if p) or str(user.id)
    return PageUser(user.id, name, user.language_code, data.start_param)


def sign_init_data(token: str, fields: Mapping[str, object]) -> str:
    """Init data of ``fields`` signed with ``token`` as Telegram signs it
    (mappings -- ``user`` -- as JSON)."""
    flat = {
        k: json.dumps(v, separators=(",", ":")) if isinstance(v, Mapping) else str(v)
        for k, v in fields.items()
    }
    check = "\n".join(f"{k}={v}" for k, v in sorted(flat.items()))
    secret = hmac.new(b"WebAppData", token.encode(), hashlib.sha256).digest()
    flat["hash"] = hmac.new(secret, check.encode(), hashlib.sha256).hexdigest()
    return urlencode(flat)
