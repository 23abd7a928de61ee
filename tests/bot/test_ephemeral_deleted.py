"""A deleted ephemeral hand takes its pending edits with it (#28): in the process
that deletes it, and -- recorded as gone in the shared digest -- in every other
one, so none goes out later and draws 400 "message to edit not found"; an edit
that still races a deletion is dropped quietly (not retried, no error logged)
and the message is forgotten."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import pytest
from aiogram.types import EphemeralMessageParameters

from sandbox.fake_api import Chat, FakeTelegram, ManualClock, RateLimits, SimUser
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.coalesce import Urgency
from tests.bot.test_two_processes import Process

EDIT = "editEphemeralMessageText"


@pytest.fixture
async def fleet(
    redis_url: str, redis_prefix: str
) -> AsyncIterator[tuple[FakeTelegram, list[Process]]]:
    clock = ManualClock()
    async with FakeTelegram(limits=RateLimits(), clock=clock) as fake:
        procs = [Process(fake, redis_url, redis_prefix, clock) for _ in range(2)]
        try:
            yield fake, procs
        finally:
            for p in procs:
                await p.aclose()


async def _ephemeral(p: Process, group: Chat, user: SimUser) -> int:
    """A hand in ``group`` that only ``user`` sees, sent by process ``p``; its id."""
    params = EphemeralMessageParameters(receiver_user_id=user.id)
    msg = await p.delivery.send(group.id, "hand v1", ephemeral=params)
    assert msg is not None
    assert msg.ephemeral_message_id
    return msg.ephemeral_message_id


def _group(fake: FakeTelegram) -> tuple[Chat, SimUser]:
    alice = fake.add_user("Alice")
    group = alice.create_group("Card night")
    alice.add_bot_to(group)
    return group, alice


async def test_deleting_drops_the_pending_edits_of_every_process(
    fleet: tuple[FakeTelegram, list[Process]],
) -> None:
    fake, (a, b) = fleet
    group, alice = _group(fake)
    eid = await _ephemeral(a, group, alice)
    # both processes rendered moves of table T: their edits wait (coalesced)
    await b.delivery.edit(
        Address(group.id, eid, alice.id), "hand v2", None, Urgency.LATER, version="T#2"
    )
    await a.delivery.edit(
        Address(group.id, eid, alice.id), "hand v3", None, Urgency.SOON, version="T#3"
    )
    a_done = a.delivery.settled(Address(group.id, eid, alice.id))
    b_done = b.delivery.settled(Address(group.id, eid, alice.id))
    assert await a.delivery.delete_ephemeral(Address(group.id, eid, alice.id), "T")
    assert a_done.done()
    assert a_done.result()  # nothing left to show
    await a.delivery.flush()
    await b.delivery.flush()  # its edit goes to the shared digest: refused as older
    assert fake.stats.calls[EDIT] == 0, fake.stats.calls
    assert not fake.stats.errors, fake.stats.error_texts
    assert await b_done  # found not needed: no fallback for it
    # a later render of the old id, in either process, sends nothing either
    for p in (a, b):
        await p.delivery.edit(Address(group.id, eid, alice.id), "hand v4", version="T#4")
    assert fake.stats.calls[EDIT] == 0
    assert not [e for e in fake.world.events if e.kind == "ephemeral_edited"]


async def test_an_edit_that_races_a_deletion_is_dropped_quietly(
    fleet: tuple[FakeTelegram, list[Process]], caplog: pytest.LogCaptureFixture
) -> None:
    """Deleted behind this process's back (by another, or by Telegram): its edit
    draws the 400 -- no exception, nothing logged as an error, no retry, no
    re-send; whoever waits for it learns it failed (his hand then falls back to
    private); later edits of it, in any process, go nowhere."""
    fake, (a, b) = fleet
    group, alice = _group(fake)
    eid = await _ephemeral(a, group, alice)
    other = fake.make_bot()
    try:
        await other.delete_ephemeral_message(
            chat_id=group.id, receiver_user_id=alice.id, ephemeral_message_id=eid
        )
    finally:
        await other.session.close()
    with caplog.at_level(logging.INFO):
        assert await a.delivery.edit(Address(group.id, eid, alice.id), "v2", version="T#2") is None
        assert not await a.delivery.settled(
            Address(group.id, eid, alice.id)
        )  # his hand must fall back
        await a.delivery.edit(
            Address(group.id, eid, alice.id), "v3", None, Urgency.SOON, version="T#3"
        )
        await b.delivery.edit(
            Address(group.id, eid, alice.id), "v4", None, Urgency.SOON, version="T#4"
        )
        await a.delivery.flush()
        await b.delivery.flush()
    assert fake.stats.calls[EDIT] == 1, fake.stats.calls  # the one that found it gone
    assert fake.stats.calls["sendMessage"] == 1  # never re-sent in the group
    assert [r for r in caplog.records if r.levelno >= logging.WARNING] == []
