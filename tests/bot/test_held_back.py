"""Views held back by the group's flood limit are reported (#24 item 6): an edit
of a player's hand in the group (an ephemeral message) that waits for the
group's budget longer than ``held_after`` seconds is told as a
:class:`HeldBack` event on the delivery's queue (#39) -- once for that wait; an edit that goes out at once, or that only keeps its
coalescing gap, is not; nor is a private chat's.  An edit asked with
``join=True`` joins the pending edit (no write of its own) or is dropped.

The fake Bot API with Telegram's limits ON, the shared flood limiter on a real
Redis, real time: the group's budget is spent for a few seconds by writes the
limiter never saw (``FakeFloodControl.spend``), so the first write draws a 429
and holds the group (in Redis) for every later one.  Nothing is timed: the
waits are seconds long, the threshold a fraction of one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import pytest
from aiogram import Bot
from aiogram.types import EphemeralMessageParameters

from sandbox.fake_api import Chat, FakeTelegram, RateLimits, SimUser
from tables import LiveConfig, TableService
from telegram_bot.delivery import Delivery, DeliveryConfig, Urgency, make_delivery
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.held import HeldBack
from tests.bot.e2e_kit import SAFETY

SPENT = 3.0
"""Seconds the group's budget is spent (far beyond the threshold)."""
AFTER = 0.5
"""The threshold of these tests (the product's: ``flood_hint_after``, 4 s)."""
GAP = 4.5
"""A watcher's gap between two edits of his message: longer than the group's
window of 3 messages in any 4 s, so an edit kept for its gap finds the window
free (no hold for the urgent edits' reserve, which is the flood limit's)."""


@dataclass
class Rig:
    fake: FakeTelegram
    bot: Bot
    delivery: Delivery
    group: Chat
    alice: SimUser
    bob: SimUser
    held: list[HeldBack] = field(default_factory=list)
    # what the layer above does with each (the product: the publisher's hint)
    on_held: Callable[[HeldBack], Awaitable[None]] | None = None

    async def read(self) -> None:
        """The dispatcher above: the delivery's events, as they come."""
        async for event in self.delivery.events:
            if isinstance(event, HeldBack):
                self.held.append(event)
                if self.on_held is not None:
                    await self.on_held(event)

    async def hand(self, user: SimUser, text: str = "hand v1") -> Address:
        """A hand in the group that only ``user`` sees."""
        params = EphemeralMessageParameters(receiver_user_id=user.id)
        msg = await self.delivery.send(self.group.id, text, ephemeral=params)
        assert msg is not None
        assert msg.ephemeral_message_id
        return Address(self.group.id, msg.ephemeral_message_id, user.id)

    def edits(self, key: Address) -> list[str | None]:
        """The texts the edits of the ephemeral message ``key`` showed."""
        return [
            e["text"]
            for e in self.fake.world.outbox
            if e["kind"] == "edit" and e["ephemeral_message_id"] == key.message
        ]

    async def quiet(self) -> None:
        """Until every edit went out and no wait is watched any more."""
        await self.delivery.flush()
        for _ in range(int(SAFETY / 0.02)):
            if not self.delivery.held.watching:
                for _ in range(10):  # the reader takes the last events
                    await asyncio.sleep(0)
                return
            await asyncio.sleep(0.02)
        raise AssertionError("a wait is still watched")


@pytest.fixture
async def rig(redis_url: str, redis_prefix: str) -> AsyncIterator[Rig]:
    svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
    async with FakeTelegram(limits=RateLimits()) as fake:
        bot = fake.make_bot()
        delivery = make_delivery(
            bot,
            kv=svc.kv,
            config=DeliveryConfig(
                soon_delay=0.0, later_delay=GAP, table_delay=GAP, held_after=AFTER
            ),
        )
        alice, bob = fake.add_user("Alice"), fake.add_user("Bob")
        alice.start()
        group = alice.create_group("Card night", bob)
        alice.add_bot_to(group)
        rig = Rig(fake, bot, delivery, group, alice, bob)
        reader = asyncio.create_task(rig.read())
        try:
            yield rig
        finally:
            reader.cancel()
            await delivery.aclose()
            await bot.session.close()
            await svc.aclose()


async def test_a_hand_held_back_by_the_groups_limit_is_reported_once(rig: Rig) -> None:
    key = await rig.hand(rig.alice)
    rig.fake.world.limiter.spend(rig.group.id, True, SPENT)
    await rig.delivery.edit(
        key, "hand v2", None, Urgency.NOW, version="T#2"
    )  # a 429, then its retry once the group's budget is back
    await rig.quiet()
    assert rig.fake.stats.retry_after == 1
    assert rig.edits(key) == ["hand v2"]
    assert len(rig.held) == 1, rig.held
    held = rig.held[0]
    assert held.to == key == Address(rig.group.id, key.message, rig.alice.id)
    assert held.version == "T#2"
    assert held.waited >= AFTER


async def test_an_edit_that_goes_out_or_keeps_its_gap_is_not_reported(rig: Rig) -> None:
    """Nothing waits for the group's budget: at once (NOW), or after its own
    coalescing gap (LATER: ``GAP`` after the message's last edit, 9x the threshold)."""
    key = await rig.hand(rig.alice)
    await rig.delivery.edit(key, "hand v2", None, Urgency.NOW, version="T#2")
    await rig.delivery.edit(key, "hand v3", None, Urgency.LATER, version="T#3")
    assert await rig.delivery.settled(key)
    await rig.quiet()
    assert rig.edits(key) == ["hand v2", "hand v3"]
    assert rig.fake.stats.retry_after == 0, rig.fake.stats.refusals
    assert rig.held == []


async def test_a_private_hand_held_back_is_not_reported(rig: Rig) -> None:
    """Only a group's views count against its budget (and a private hand updates
    at once anyway): a private chat's wait is not watched."""
    msg = await rig.delivery.send(rig.alice.id, "hand v1")
    assert msg is not None
    rig.fake.world.limiter.spend(rig.alice.id, False, SPENT)
    await rig.delivery.edit(Address(rig.alice.id, msg.message_id), "hand v2", None, version="T#2")
    await rig.quiet()
    assert rig.fake.stats.retry_after == 1
    assert rig.alice.chat.messages[msg.message_id].text == "hand v2"
    assert rig.held == []


async def test_a_joined_edit_rides_with_the_held_back_one(rig: Rig) -> None:
    """Alice's edit draws the 429 (in flight: nothing to join, her joined content
    is dropped); Bob's waits as pending for the group's budget: his joined
    content replaces it -- one edit, no write of its own."""
    a_key, b_key = await rig.hand(rig.alice), await rig.hand(rig.bob)

    async def on_held(held: HeldBack) -> None:
        await rig.delivery.edit(
            held.to,
            f"{held.to.receiver} told",
            None,
            Urgency.LATER,
            version=held.version,
            join=True,
        )

    rig.on_held = on_held
    rig.fake.world.limiter.spend(rig.group.id, True, SPENT)
    first = asyncio.create_task(rig.delivery.edit(a_key, "a v2", None, Urgency.NOW, version="T#2"))
    for _ in range(int(SAFETY / 0.02)):  # until the group is held after the 429
        if rig.fake.stats.retry_after:
            break
        await asyncio.sleep(0.02)
    await rig.delivery.edit(b_key, "b v2", None, Urgency.SOON, version="T#2")
    await first
    await rig.quiet()
    assert sorted(h.to.receiver or 0 for h in rig.held) == sorted([rig.alice.id, rig.bob.id])
    assert rig.edits(a_key) == ["a v2"]
    assert rig.edits(b_key) == [f"{rig.bob.id} told"]
    assert rig.fake.stats.retry_after == 1
    # join never makes a write of its own: with nothing pending it is dropped
    late = await rig.delivery.edit(b_key, "late", None, Urgency.LATER, version="T#3", join=True)  # fmt: skip
    assert late is None
    await rig.quiet()
    assert rig.edits(b_key) == [f"{rig.bob.id} told"]
