"""Reads of what the flood limiter records of a message, for the tests (the
product never reads a digest back: the limiter's scripts judge it)."""

from __future__ import annotations

from tables import ServiceUnavailable
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.flood.limiter import FloodLimiter


async def shown(limiter: FloodLimiter, to: Address) -> tuple[str, str] | None:
    """(``<text>:<markup>``, ``<table>#<version>``) a message shows (None: unknown)."""
    raw = await limiter.kv.get(limiter.keys.sent_digest(*to.key))
    if raw is None:
        return None
    if "~" in raw:  # '~<time>': its last edit
        raw = raw.rpartition("~")[0]
    raw, _sep, _lease = raw.partition("|")  # '|<owner>@<until>': an edit lease
    text, _sep, rest = raw.partition(":")
    markup, _sep, version = rest.partition(":")
    if text.startswith("!"):  # an edit in flight, or one that never came back
        return "?:?", version
    return f"{text}:{markup}", version


async def last_digest(limiter: FloodLimiter, to: Address) -> str | None:
    """``<text>:<markup>`` a message shows (None: unknown, or Redis down)."""
    try:
        found = await shown(limiter, to)
    except ServiceUnavailable:
        return None
    return None if found is None or found[0] == "?:?" else found[0]
