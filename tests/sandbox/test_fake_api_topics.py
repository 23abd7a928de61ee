"""Forum supergroups in the fake Bot API (``sandbox/fake_api/topics.py``), driven
by a real aiogram ``Bot``: topics, and sends that land in one or in General,
as the Bot API documents them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import EphemeralMessageParameters, Message, ReplyParameters

from sandbox.fake_api import Chat, FakeTelegram, RateLimits, SimUser


@dataclass
class Forum:
    fake: FakeTelegram
    bot: Bot
    alice: SimUser
    bob: SimUser
    group: Chat
    topic: int  # the topic "Durak"


@pytest.fixture
async def f() -> AsyncIterator[Forum]:
    async with FakeTelegram(limits=RateLimits.off()) as fake:
        alice, bob = fake.add_user("Alice"), fake.add_user("Bob")
        group = alice.create_group("Games", bob, forum=True)
        alice.add_bot_to(group)
        topic = alice.create_topic(group, "Durak")
        bot = fake.make_bot()
        yield Forum(fake, bot, alice, bob, group, topic)
        await bot.session.close()


def as_bot_sees(f: Forum, record: object) -> Message:
    return Message.model_validate(record.to_api(f.fake.world.users)).as_(f.bot)  # type: ignore[attr-defined]


async def test_a_forum_and_its_topic_as_the_bot_sees_them(f: Forum) -> None:
    chat = await f.bot.get_chat(f.group.id)
    assert chat.type == "supergroup"
    assert chat.is_forum is True
    created = f.group.messages[f.topic]
    seen = as_bot_sees(f, created)
    assert seen.forum_topic_created is not None
    assert seen.forum_topic_created.name == "Durak"
    assert (seen.message_thread_id, seen.is_topic_message) == (f.topic, True)
    # the bot got it (a service message), and a user's message in the topic
    said = f.bob.send("/new durak", f.group, topic=f.topic)
    update = f.fake.world.updates[-1]["message"]
    assert update["message_id"] == said.message_id
    assert (update["message_thread_id"], update["is_topic_message"]) == (f.topic, True)
    # as Telegram's: in a topic, a message that replies to nothing replies to its root
    assert update["reply_to_message"]["message_id"] == f.topic
    assert "forum_topic_created" in update["reply_to_message"]
    # a plain group is no forum
    plain = f.alice.create_group("Plain", f.bob)
    f.alice.add_bot_to(plain)
    assert (await f.bot.get_chat(plain.id)).is_forum is None


async def test_a_send_with_the_thread_lands_in_the_topic_without_in_general(f: Forum) -> None:
    there = await f.bot.send_message(f.group.id, "Lobby", message_thread_id=f.topic)
    assert (there.message_thread_id, there.is_topic_message) == (f.topic, True)
    assert f.group.messages[there.message_id].thread_id == f.topic
    general = await f.bot.send_message(f.group.id, "Hello")
    assert general.message_thread_id is None
    assert general.is_topic_message is None
    assert f.group.messages[general.message_id].thread_id is None
    # aiogram's answer() keeps the topic of a topic message
    command = as_bot_sees(f, f.alice.send("/help", f.group, topic=f.topic))
    answered = await command.answer("Help")
    assert f.group.messages[answered.message_id].thread_id == f.topic
    # an ephemeral message takes the thread too
    params = EphemeralMessageParameters(receiver_user_id=f.bob.id)
    hand = await f.bot.send_message(
        f.group.id, "Your hand", message_thread_id=f.topic, ephemeral_message_parameters=params
    )
    assert (hand.message_thread_id, hand.is_topic_message) == (f.topic, True)
    shown = await f.bob.wait_message("Your hand", f.group)
    assert shown.thread_id == f.topic
    # an edit names the message by id: it stays in its topic
    edited = await f.bot.edit_message_text(
        "Lobby (2)", chat_id=f.group.id, message_id=there.message_id
    )
    assert isinstance(edited, Message)
    assert f.group.messages[there.message_id].thread_id == f.topic
    assert edited.message_thread_id == f.topic


async def test_an_unknown_thread_is_not_found(f: Forum) -> None:
    for thread in (f.topic + 100, 1):  # no such topic; 1: General, which takes none
        with pytest.raises(TelegramBadRequest, match="message thread not found"):
            await f.bot.send_message(f.group.id, "Lost", message_thread_id=thread)
    plain = f.alice.create_group("Plain", f.bob, chat_type="supergroup")
    f.alice.add_bot_to(plain)
    with pytest.raises(TelegramBadRequest, match="message thread not found"):
        await f.bot.send_message(plain.id, "Lost", message_thread_id=f.topic)
    params = EphemeralMessageParameters(receiver_user_id=f.bob.id)
    with pytest.raises(TelegramBadRequest, match="message thread not found"):
        await f.bot.send_message(
            f.group.id, "Lost", message_thread_id=99, ephemeral_message_parameters=params
        )
    assert [m.text for m in f.group.messages.values() if m.text] == []


async def test_a_reply_goes_to_the_replied_messages_topic(f: Forum) -> None:
    """A reply chain is the thread: a reply goes where the replied message is;
    a reply in General carries a reply thread's id that is no topic (the trap:
    sending to it is "message thread not found"), without is_topic_message."""
    in_topic = f.alice.send("in the topic", f.group, topic=f.topic)
    reply = ReplyParameters(message_id=in_topic.message_id)
    answer = await f.bot.send_message(f.group.id, "Seen", reply_parameters=reply)
    assert answer.message_thread_id == f.topic
    assert f.group.messages[answer.message_id].thread_id == f.topic
    in_general = await f.bot.send_message(f.group.id, "Table")
    reply_in_general = f.bob.send("nice", f.group, reply_to=f.group.messages[in_general.message_id])
    assert reply_in_general.thread_id is None
    update = f.fake.world.updates[-1]["message"]
    assert update["message_thread_id"] == in_general.message_id
    assert "is_topic_message" not in update
    seen = as_bot_sees(f, reply_in_general)
    answered = await seen.answer("Thanks")  # aiogram passes no thread: General
    assert f.group.messages[answered.message_id].thread_id is None
    with pytest.raises(TelegramBadRequest, match="message thread not found"):
        await f.bot.send_message(f.group.id, "x", message_thread_id=seen.message_thread_id)
    with pytest.raises(LookupError):
        f.alice.send("nowhere", f.group, topic=f.topic + 100)
    with pytest.raises(PermissionError):
        f.bob.create_topic(f.group, "Mine")  # a member may not manage topics
