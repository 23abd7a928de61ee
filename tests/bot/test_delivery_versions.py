"""A NOW edit drawn from an older table version than an edit still pending for
the same message (a stale press's redraw, read before another player's move
was rendered): the newer content goes out, never the older one in its place.

``bench/bot.py --commands --human`` games stalled so: the move that made a
player the actor was rendered into his hand as a SOON edit, his own stale
press's redraw (drawn from the table before that move) superseded it, and
his hand showed no button to press -- nor anyone else's."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiogram import Bot
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from sandbox.fake_api import FakeTelegram, RateLimits, SimUser
from tables import LiveConfig, TableService
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.coalesce import Delivery, Urgency
from telegram_bot.delivery.digest import table_version
from telegram_bot.delivery.flood.limiter import FloodLimiter
from telegram_bot.delivery.outgoing import Outgoing, Prepaid, install
from telegram_bot.delivery.waiting_line import Priority


def kb(label: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text=label, callback_data=label)]]
    )


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits()) as server:
        yield server


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    bot = fake.make_bot()
    yield bot
    await bot.session.close()


@pytest.fixture
async def outgoing(bot: Bot, redis_url: str, redis_prefix: str) -> AsyncIterator[Outgoing]:
    svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
    yield install(bot, FloodLimiter(svc.kv))
    await svc.aclose()


@pytest.fixture
async def delivery(bot: Bot, outgoing: Outgoing) -> AsyncIterator[Delivery]:
    d = Delivery(bot, outgoing=outgoing)
    yield d
    await d.aclose()


@pytest.fixture
def alice(fake: FakeTelegram) -> SimUser:
    user = fake.add_user("Alice")
    user.start()
    return user


async def test_a_now_edit_of_an_older_version_leaves_the_pending_newer_one(
    fake: FakeTelegram, delivery: Delivery, alice: SimUser
) -> None:
    msg = await delivery.send(alice.id, "hand v3", kb("v3"))
    assert msg is not None
    to = Address(alice.id, msg.message_id)
    # another player's move: his hand's new keyboard, soon
    await delivery.edit(
        to, "hand v5: your move", kb("move"), Urgency.SOON, version=table_version("T", 5)
    )
    # his own stale press answered: a redraw from the table as it was read before
    await delivery.edit(to, "hand v4", kb("v4"), Urgency.NOW, version=table_version("T", 4))
    await delivery.flush()
    shown = alice.chat.messages[msg.message_id]
    assert (shown.text, shown.button_texts) == ("hand v5: your move", ["move"])
    assert await delivery.settled(to)


async def test_a_now_edit_of_an_older_version_while_the_newer_waits_for_tokens(
    fake: FakeTelegram,
    delivery: Delivery,
    outgoing: Outgoing,
    alice: SimUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The newer edit already queued for its flood tokens (firing, its content
    not taken yet): the older NOW edit must not go out ahead of it and make it
    look sent (its sequence number is lower), nor be shown last."""
    msg = await delivery.send(alice.id, "hand v3", kb("v3"))
    assert msg is not None
    to = Address(alice.id, msg.message_id)
    gate, queued = asyncio.Event(), asyncio.Event()
    real_prepay = outgoing.prepay

    async def slow_prepay(to: Address, priority: Priority = Priority.URGENT, **kw: Any) -> Prepaid:
        if priority is Priority.DEFERRED:
            queued.set()
            await gate.wait()  # in the overall line behind urgent calls
        return await real_prepay(to, priority, **kw)

    monkeypatch.setattr(outgoing, "prepay", slow_prepay)
    await delivery.edit(
        to, "hand v5: your move", kb("move"), Urgency.SOON, version=table_version("T", 5)
    )
    flushing = asyncio.create_task(delivery.flush())  # it fires now, and waits for tokens
    await asyncio.wait_for(queued.wait(), 10)
    await delivery.edit(to, "hand v4", kb("v4"), Urgency.NOW, version=table_version("T", 4))
    gate.set()
    await asyncio.wait_for(flushing, 10)
    await delivery.flush()
    shown = alice.chat.messages[msg.message_id]
    assert (shown.text, shown.button_texts) == ("hand v5: your move", ["move"])
    assert await delivery.settled(to)


async def test_a_deferred_edit_of_an_older_version_leaves_the_pending_newer_one(
    fake: FakeTelegram, delivery: Delivery, alice: SimUser
) -> None:
    """The same for a deferred edit coalescing into the pending one: the newer
    table version stays its content (waiting for it is still settled)."""
    msg = await delivery.send(alice.id, "hand v3", kb("v3"))
    assert msg is not None
    to = Address(alice.id, msg.message_id)
    await delivery.edit(
        to, "hand v5: your move", kb("move"), Urgency.SOON, version=table_version("T", 5)
    )
    await delivery.edit(to, "hand v4", kb("v4"), Urgency.LATER, version=table_version("T", 4))
    settled = delivery.settled(to)
    await delivery.flush()
    shown = alice.chat.messages[msg.message_id]
    assert (shown.text, shown.button_texts) == ("hand v5: your move", ["move"])
    assert await asyncio.wait_for(settled, 10)
