"""The outgoing-message layer the bot uses: :mod:`telegram_bot.delivery.coalesce` (coalesced
edits) over :mod:`telegram_bot.delivery.outgoing` (the shared flood limiter, no-op edits,
429 retries); what it learns on the way comes up as data
(:mod:`telegram_bot.delivery.events`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import replace

from aiogram import Bot

from engine.clock import scaled
from tables import KeyValueStore
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.coalesce import Delivery, DeliveryConfig, Urgency
from telegram_bot.delivery.events import Event, Events, Forbidden
from telegram_bot.delivery.flood.fallback import FallbackFloodLimiter, RenderClaims
from telegram_bot.delivery.flood.limiter import FloodConfig
from telegram_bot.delivery.outgoing import install
from telegram_bot.state.budgets import Budgets


def make_delivery(
    bot: Bot,
    *,
    kv: KeyValueStore | None,
    config: DeliveryConfig,
    flood: FloodConfig | None = None,
    budgets: Budgets | None = None,
    time_scale: float = 1.0,
    fleet: Callable[[], int] | None = None,
    claims: RenderClaims | None = None,
) -> Delivery:
    """The bot's Delivery with the shared flood limiter in ``kv`` (None: none;
    ``flood``: its windows), falling back to in-process windows while Redis is
    unreachable.  ``budgets``: the groups' budgets learned from 429s (#24).
    ``time_scale``: Telegram's time runs that many times faster (tests, #37) --
    every clock and sleep is scaled (``budgets`` too: the caller's part), the
    bounds of our own latency keep their real seconds.  ``fleet``: the
    processes alive (the fallback's share, #40); ``claims``: a table's render
    claimed while its chat's state is down (#40)."""
    sleep = scaled_sleep(time_scale)
    if time_scale != 1:
        # what bounds our own latency (an edit in flight, leased and prepaid
        # tokens, a look at a lease, a late answer) is not Telegram's time (#37)
        base = flood or FloodConfig()
        flood = replace(
            base,
            lease_ttl=base.lease_ttl * time_scale,
            prepaid_ttl=base.prepaid_ttl * time_scale,
            edit_lease=base.edit_lease * time_scale,
            lease_poll=base.lease_poll * time_scale,
            overall_stamp_after=base.overall_stamp_after * time_scale,
        )
    limiter = None
    if kv is not None:
        wall = scaled(time.time, time_scale)  # ``budgets`` come on the same clock
        limiter = FallbackFloodLimiter(
            kv, flood, budgets=budgets, clock=wall, fleet=fleet, claims=claims
        )
    outgoing = install(bot, limiter, sleep=sleep, clock=scaled(time.monotonic, time_scale))
    return Delivery(
        bot, config, clock=scaled(time.monotonic, time_scale), sleep=sleep, outgoing=outgoing
    )


def scaled_sleep(factor: float) -> Callable[[float], Awaitable[None]]:
    """``asyncio.sleep`` of ``seconds / factor``: a sleep on a clock ``factor``
    times as fast (:class:`engine.clock.Scaled`)."""
    if factor == 1:
        return asyncio.sleep

    async def sleep(seconds: float) -> None:
        await asyncio.sleep(seconds / factor)

    return sleep


__all__ = [
    "Address",
    "Delivery",
    "DeliveryConfig",
    "Event",
    "Events",
    "Forbidden",
    "Urgency",
    "make_delivery",
    "scaled_sleep",
]
