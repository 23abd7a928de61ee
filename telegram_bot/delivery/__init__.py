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
    """The bot's Delivery with the shared flood limiter in the table service's
    key-value store ``kv`` (None: no limiter; ``flood``: its rates); while Redis is unreachable it
    takes in-process tokens (:mod:`telegram_bot.delivery.flood.fallback`).  ``budgets``:
    the groups' budgets learned from 429s (#24; None: the documented windows).
    ``time_scale``: Telegram's time runs that many times faster (tests, #37:
    :attr:`telegram_bot.settings.Settings.telegram_time_scale`) -- every clock
    and sleep of the delivery and the limiter's are scaled (``budgets`` come on
    that clock: the caller makes them so); the bounds of our own latency keep
    their real seconds.  ``fleet``: the bot
    processes alive, as last read (the fallback's share of each window, #40);
    ``claims``: whether a table's render may go out while its chat's shared
    state is down (:meth:`tables.tables.Tables.claim_render`, #40).
    ``config``: when it edits (:class:`DeliveryConfig`; its ``held_after``: a
    hand in the group held back by the flood limiter this many seconds is told,
    :class:`telegram_bot.delivery.events.HeldBack`; None: not watched)."""
    sleep = scaled_sleep(time_scale)
    if time_scale != 1:
        # what bounds our own latency -- an edit's HTTP call in flight, leased and
        # prepaid tokens waiting for their call, a look at another's lease, how
        # late an answer is before its overall entry moves (#37) -- is
        # not Telegram's time: the same real seconds on the scaled clock
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
