"""The outgoing-message layer the bot uses: :mod:`telegram_bot.delivery.coalesce` (coalesced
edits) over :mod:`telegram_bot.delivery.outgoing` (the shared flood limiter, no-op edits,
429 retries, 403 hook)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import Bot

from tables import KeyValueStore
from tables.budgets import Budgets
from telegram_bot.delivery.coalesce import Delivery, Urgency
from telegram_bot.delivery.flood.fallback import FallbackFloodLimiter
from telegram_bot.delivery.flood.limiter import FloodConfig, FloodLimiter
from telegram_bot.delivery.outgoing import install


def make_delivery(
    bot: Bot,
    *,
    kv: KeyValueStore | None,
    soon_delay: float,
    later_delay: float,
    table_delay: float,
    on_forbidden: Callable[[int], Awaitable[Any]],
    on_replaced: Callable[[int, int, int], Awaitable[Any]],
    flood: FloodConfig | None = None,
    budgets: Budgets | None = None,
) -> Delivery:
    """The bot's Delivery with the shared flood limiter in the table service's
    key-value store ``kv`` (None: no limiter; ``flood``: its rates); while Redis is unreachable it
    takes in-process tokens (:mod:`telegram_bot.delivery.flood.fallback`).  ``budgets``:
    the groups' budgets learned from 429s (#24; None: the documented windows)."""
    limiter = None
    if kv is not None:
        limiter = FallbackFloodLimiter(FloodLimiter(kv, flood, budgets=budgets))
    outgoing = install(bot, limiter)
    return Delivery(
        bot,
        soon_delay=soon_delay,
        later_delay=later_delay,
        table_delay=table_delay,
        on_forbidden=on_forbidden,
        on_replaced=on_replaced,
        outgoing=outgoing,
    )


__all__ = ["Delivery", "Urgency", "make_delivery"]
