"""Reads of what the flood limiter records of a message, for the tests (the
product never reads a digest back: the limiter's scripts judge it)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import redis.asyncio as aredis

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


async def monitored(redis_url: str, prefix: str, run: Callable[[], Awaitable[object]]) -> list[str]:
    """The commands Redis ran on keys under ``prefix`` while ``run()`` ran --
    each command a script runs too, as ``INFO commandstats`` counts them."""
    client = aredis.Redis.from_url(redis_url)
    end = f"{prefix}end-of-run"
    try:
        async with client.monitor() as monitor:
            await run()
            await client.get(end)  # (another connection) marks the end of the run
            seen: list[str] = []
            while (command := (await monitor.next_command())["command"]) != f"GET {end}":
                if prefix in command:
                    seen.append(command.split()[0].upper())
            return seen
    finally:
        await client.aclose()
