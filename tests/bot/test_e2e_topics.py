"""End to end: a table opened in a topic of a forum group lives in that topic.
``/new`` sent in the topic "Durak": its lobby, its table message, a hand shown
in the group (ephemeral), the result and the rematch's table message all carry
the topic's ``message_thread_id`` -- nothing of it lands in General, where a
send without one goes; an arena announced in a topic posts its podium there.
(A plain group is what every other group test plays.)"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, Message, RateLimits
from tables import PLAYING
from tables.arena_rules import FINISHED
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import SAFETY, play_out, running


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def rematch_data(message: Message) -> str:
    datas = [str(b.get("callback_data", "")) for b in message.buttons]
    return next(d for d in datas if d.startswith("l:") and ":re" in d)


async def test_a_table_opened_in_a_topic_lives_in_that_topic(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = fake.add_user("Ann"), fake.add_user("Bob")
        tid, group = await group_lobby(h, "chuvash", [ann, bob], 0, topic="Durak")
        (topic,) = group.topics
        asked = next(m for m in group.messages.values() if m.text == "/new chuvash")
        assert asked.thread_id == topic
        lobby = next(
            m
            for m in fake.messages(group)
            if m.from_id == fake.world.bot.id and m.created > asked.created
        )
        assert "has started" in (lobby.text or ""), lobby.text  # the lobby, once started
        assert lobby.thread_id == topic
        board = await fake.world.wait_for(
            lambda: next((m for m in fake.messages(group) if m.text and "Players" in m.text), None),
            SAFETY,
        )
        assert board.thread_id == topic
        # Bob's hand shown in the group, to him alone: in the topic too
        await bob.press("My cards", message=board, chat=group).wait_answer(SAFETY)
        hand = await fake.world.wait_for(
            lambda: next(iter(group.ephemeral.values()), None), SAFETY, "Bob's hand in the group"
        )
        assert hand.receiver_id == bob.id
        assert hand.thread_id == topic
        await play_out(h, tid, [ann, bob], rng=random.Random(7))
        await fake.world.wait_for(lambda: "Game over" in (board.text or "") or None, SAFETY)
        assert board.thread_id == topic  # the result: the table message, where it was
        # the rematch: its table message in the topic as well
        data = rematch_data(board)
        for u in (ann, bob):
            await u.press(data=data, message=board, chat=group).wait_answer(SAFETY)
        again = await fake.world.wait_for(
            lambda: next(
                (
                    m
                    for m in fake.messages(group)
                    if m.created > board.created and m.text and "Players" in m.text
                ),
                None,
            ),
            SAFETY,
            "the rematch's table message",
        )
        assert again.thread_id == topic
        table, _s, _v = await h.svc.tables.get(tid)
        assert (table.status, table.game_no, table.thread) == (PLAYING, 2, topic)
        # nothing of the table in General: every message the bot sent to the
        # group since /new, public or ephemeral (deleted ones too), went to the topic
        sent = [
            e
            for e in fake.world.outbox
            if e["chat_id"] == group.id and e["kind"] == "send" and e["version"] > asked.created
        ]
        assert len(sent) >= 4  # the lobby, two table messages, Bob's hand
        assert {e["message_thread_id"] for e in sent} == {topic}, [
            (e["text"] or "")[:40] for e in sent if e["message_thread_id"] != topic
        ]
    assert not fake.stats.errors, fake.stats.error_texts


async def test_a_reply_in_general_opens_the_table_in_general(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """``/new`` sent in a forum's General as a reply to the bot's greeting comes
    with a ``message_thread_id`` -- its reply thread's, no topic -- and no
    ``is_topic_message``: the lobby goes to General, as the command, and is
    not refused ("message thread not found")."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann = fake.add_user("Ann")
        group = ann.create_group("Games", forum=True)
        ann.add_bot_to(group)
        greeting = await ann.wait_message("/new", group, timeout=SAFETY)
        asked = ann.send("/new chuvash", group, reply_to=greeting)
        assert asked.thread_fields() == {"message_thread_id": greeting.message_id}
        lobby = await ann.wait_message("Invitation link", group, timeout=SAFETY)
        assert lobby.thread_id is None
        table = await h.svc.tables.where(ann.id)
        assert table is not None
        assert (table.chat, table.thread) == (group.id, None)
    assert not fake.stats.errors, fake.stats.error_texts


async def test_an_arena_announced_in_a_topic_lives_in_that_topic(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """``/arena`` in a topic: its message (the set-up, announced) and, at its
    end, the podium -- a message of its own -- are in that topic."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = fake.add_user("Ann"), fake.add_user("Bob")
        group = ann.create_group("Games", bob, forum=True)
        ann.add_bot_to(group)
        await ann.wait_message("/new", group, timeout=SAFETY)
        for u in (ann, bob):
            u.start()
            await u.wait_message(timeout=SAFETY)
        topic = ann.create_topic(group, "Arena")
        ann.send("/arena", group, topic=topic)
        setup = await ann.wait_message("A new arena", group, timeout=SAFETY)
        await ann.press("Announce", message=setup, chat=group).wait_answer(SAFETY)
        board = await ann.wait_message("Arena ·", group, timeout=SAFETY)
        assert board.thread_id == topic
        arena = await h.svc.arenas.current(group.id)
        assert arena is not None
        assert arena.thread == topic
        for u in (ann, bob):
            await u.press("Join", message=board, chat=group).wait_answer(SAFETY)
        deadline = time.monotonic() + SAFETY
        while (table := await h.svc.tables.where(ann.id)) is None:
            assert time.monotonic() < deadline, "the arena never seated them"
            await asyncio.sleep(0.05)
        await h.wait_hands(table.id, [ann, bob])
        await play_out(h, table.id, [ann, bob], rng=random.Random(5))
        while (await h.svc.arenas.get(arena.id)).status != FINISHED:
            assert time.monotonic() < deadline, "the arena never finished"
            h.clock.advance(61 if h.clock.offset else 46 * 60)
            await asyncio.sleep(0.2)
        podium = await ann.wait_message("The arena is over", group, timeout=SAFETY)
        assert podium.thread_id == topic
        assert podium.message_id != board.message_id  # a message of its own
    assert not fake.stats.errors, fake.stats.error_texts


async def test_top_answered_in_the_group_at_low_priority_keeps_its_topic(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """While the group's arena is on, ``/top`` of a member who never started the
    bot is answered in the group at low priority (#38) -- a send of the
    publisher's, not an answer in place: in the topic it was sent in."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, cid = fake.add_user("Ann"), fake.add_user("Cid")
        group = ann.create_group("Games", cid, forum=True)
        ann.add_bot_to(group)
        await ann.wait_message("/new", group, timeout=SAFETY)
        ann.send("/arena", group)  # in General
        setup = await ann.wait_message("A new arena", group, timeout=SAFETY)
        await ann.press("Announce", message=setup, chat=group).wait_answer(SAFETY)
        await ann.wait_message("Arena ·", group, timeout=SAFETY)
        assert await h.svc.arenas.current(group.id) is not None
        topic = ann.create_topic(group, "Chat")
        asked = cid.send("/top", group, topic=topic)
        top = await fake.world.wait_for(
            lambda: next(
                (
                    m
                    for m in fake.messages(group)
                    if m.from_id == fake.world.bot.id and m.created > asked.created
                ),
                None,
            ),
            SAFETY,
            "the /top answer in the group",
        )
        assert top.thread_id == topic, top.text
    assert not fake.stats.errors, fake.stats.error_texts
