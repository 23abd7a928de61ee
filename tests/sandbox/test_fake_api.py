"""The fake Bot API, driven by a real aiogram ``Bot`` (and one real Dispatcher)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import NoReturn

import aiohttp
import pytest
from aiogram import Bot, Dispatcher, F, Router
from aiogram.exceptions import (
    TelegramBadRequest,
    TelegramConflictError,
    TelegramForbiddenError,
    TelegramMigrateToChat,
    TelegramRetryAfter,
)
from aiogram.filters import CommandObject, CommandStart
from aiogram.methods import SendMessage
from aiogram.types import (
    BotCommand,
    BotCommandScopeAllGroupChats,
    BotCommandScopeChat,
    CallbackQuery,
    ChatMemberUpdated,
    ChosenInlineResult,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    InlineQuery,
    InlineQueryResultArticle,
    InputTextMessageContent,
    Message,
    ReplyParameters,
)
from aiogram.webhook.aiohttp_server import SimpleRequestHandler
from aiohttp import web

from sandbox.fake_api import CallbackQuery as CallbackQueryRecord
from sandbox.fake_api import FakeTelegram, ManualClock, RateLimits
from sandbox.fake_api import InlineQuery as InlineQueryRecord
from sandbox.fake_api import Message as MessageRecord


def keyboard(*rows: list[tuple[str, str]]) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        inline_keyboard=[
            [InlineKeyboardButton(text=text, callback_data=data) for text, data in row]
            for row in rows
        ]
    )


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    bot = fake.make_bot()
    yield bot
    await bot.session.close()


async def test_get_me_describes_the_bot(fake: FakeTelegram, bot: Bot) -> None:
    me = await bot.get_me()
    assert me.is_bot
    assert me.id == fake.bot_user.id
    assert me.username == fake.bot_user.username
    assert me.can_join_groups
    assert me.supports_inline_queries
    assert fake.stats.calls["getMe"] == 1


async def test_send_message_keeps_text_and_keyboard(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.add_user("Alice")
    alice.start()
    sent = await bot.send_message(
        alice.id, "<b>Your turn</b> ♠", parse_mode="HTML", reply_markup=keyboard([("7♠", "p:7S")])
    )
    assert sent.text == "Your turn ♠"
    assert sent.entities is not None
    assert sent.entities[0].type == "bold"
    stored = alice.last_message()
    assert stored is not None
    assert stored.message_id == sent.message_id
    assert stored.source == "<b>Your turn</b> ♠"
    assert stored.button_texts == ["7♠"]
    assert [m.text for m in alice.messages()] == ["/start", "Your turn ♠"]


async def test_replies_follow_reply_parameters(fake: FakeTelegram, bot: Bot) -> None:
    """#41: ReplyParameters as the Bot API documents them -- aiogram's
    ``Message.reply`` names this chat in ``chat_id``; another chat's message is
    an ``external_reply`` (never sent without it); a ``quote`` must be in the
    replied message's text, and the reply carries it."""
    alice, bob = fake.add_user("Alice"), fake.add_user("Bob")
    group = alice.create_group("Friends", bob)
    alice.add_bot_to(group)
    alice.start()
    asked = alice.send("/leave", group)
    command = Message.model_validate(asked.to_api(fake.world.users)).as_(bot)
    answer = await command.reply("You left.")
    assert answer.reply_to_message is not None
    assert answer.reply_to_message.message_id == asked.message_id
    stored = group.messages[answer.message_id]
    assert stored.reply_to is asked
    # in another chat: the reply says which chat, not the message itself
    there = ReplyParameters(message_id=asked.message_id, chat_id=group.id)
    external = await bot.send_message(alice.id, "Seen", reply_parameters=there)
    assert external.reply_to_message is None
    assert external.external_reply is not None
    assert external.external_reply.chat is not None
    assert external.external_reply.chat.id == group.id
    assert external.external_reply.message_id == asked.message_id
    assert external.external_reply.origin.type == "user"
    gone = ReplyParameters(
        message_id=9999, chat_id=group.id, allow_sending_without_reply=True
    )  # always false for another chat
    with pytest.raises(TelegramBadRequest, match="message to be replied not found"):
        await bot.send_message(alice.id, "Lost", reply_parameters=gone)
    here = ReplyParameters(message_id=9999, allow_sending_without_reply=True)
    alone = await bot.send_message(group.id, "Alone", reply_parameters=here)
    assert alone.reply_to_message is None
    quoted = ReplyParameters(message_id=asked.message_id, quote="leave")
    answer = await bot.send_message(group.id, "Quoted", reply_parameters=quoted)
    assert answer.quote is not None
    assert (answer.quote.text, answer.quote.position) == ("leave", 1)
    wrong = ReplyParameters(message_id=asked.message_id, quote="stay")
    with pytest.raises(TelegramBadRequest, match="QUOTE_TEXT_INVALID"):
        await bot.send_message(group.id, "Misquoted", reply_parameters=wrong)
    assert [m.text for m in group.messages.values()][-2:] == ["Alone", "Quoted"]


async def test_wait_chat_wakes_on_that_chat_only(fake: FakeTelegram, bot: Bot) -> None:
    """The load generator's cheap wait: a change in another chat does not satisfy
    it, one in this chat does; None when nothing came."""
    alice, bob = fake.add_user("Alice"), fake.add_user("Bob")
    alice.start()
    bob.start()
    world = fake.world
    seen = len(alice.messages())
    waiter = asyncio.create_task(
        world.wait_chat(alice.id, lambda: len(alice.messages()) > seen or None, 30)
    )
    await bot.send_message(bob.id, "to Bob")
    await asyncio.sleep(0)
    assert not waiter.done()
    await bot.send_message(alice.id, "to Alice")
    assert await waiter is True

    def never() -> bool | None:
        return None

    assert await world.wait_chat(bob.id, never, 0.05) is None


async def test_bot_cannot_write_first_or_after_a_block(fake: FakeTelegram, bot: Bot) -> None:
    bob = fake.add_user("Bob")
    with pytest.raises(TelegramForbiddenError, match="bot can't initiate conversation"):
        await bot.send_message(bob.id, "hi")
    bob.start()
    await bot.send_message(bob.id, "hi")
    bob.block()
    with pytest.raises(TelegramForbiddenError, match="bot was blocked by the user"):
        await bot.send_message(bob.id, "hi again")
    assert fake.stats.errors[("sendMessage", 403)] == 2


async def test_a_deleted_account_is_deactivated(fake: FakeTelegram, bot: Bot) -> None:
    """Telegram's third answer to a private write: "Forbidden: user is deactivated"
    (whether he started the bot or not); he does nothing any more."""
    bob, cy = fake.add_user("Bob"), fake.add_user("Cy")
    bob.start()
    for u in (bob, cy):
        u.deactivate()
        with pytest.raises(TelegramForbiddenError, match="Forbidden: user is deactivated"):
            await bot.send_message(u.id, "hi")
    with pytest.raises(PermissionError):
        bob.send("/start")


async def test_edits_like_telegram(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.add_user("Alice")
    alice.start()
    markup = keyboard([("Play", "play")])
    sent = await bot.send_message(alice.id, "Lobby", reply_markup=markup)
    with pytest.raises(TelegramBadRequest, match="message is not modified"):
        await bot.edit_message_text(
            "Lobby", chat_id=alice.id, message_id=sent.message_id, reply_markup=markup
        )
    with pytest.raises(TelegramBadRequest, match="message to edit not found"):
        await bot.edit_message_text("x", chat_id=alice.id, message_id=999)
    edited = await bot.edit_message_reply_markup(
        chat_id=alice.id, message_id=sent.message_id, reply_markup=keyboard([("Go", "go")])
    )
    assert isinstance(edited, Message)
    assert edited.edit_date is not None
    stored = alice.last_message()
    assert stored is not None
    assert stored.button_texts == ["Go"]
    assert stored.edits == 1
    with pytest.raises(TelegramBadRequest, match="message is not modified"):
        await bot.edit_message_reply_markup(
            chat_id=alice.id, message_id=sent.message_id, reply_markup=keyboard([("Go", "go")])
        )
    # Like Telegram: editing the text without reply_markup drops the keyboard.
    await bot.edit_message_text("Started", chat_id=alice.id, message_id=sent.message_id)
    assert stored.text == "Started"
    assert stored.reply_markup is None
    user_message = alice.messages()[0]
    with pytest.raises(TelegramBadRequest, match="message can't be edited"):
        await bot.edit_message_text("x", chat_id=alice.id, message_id=user_message.message_id)
    assert await bot.delete_message(alice.id, sent.message_id)
    assert [m.text for m in alice.messages()] == ["/start"]
    with pytest.raises(TelegramBadRequest, match="message to delete not found"):
        await bot.delete_message(alice.id, sent.message_id)


async def test_text_and_keyboard_limits(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.add_user("Alice")
    alice.start()
    await bot.send_message(alice.id, "ok", reply_markup=keyboard([("a", "x" * 64)]))
    await bot.send_message(alice.id, "я" * 4096)
    cases = [
        ({"text": "ok", "reply_markup": keyboard([("a", "x" * 65)])}, "BUTTON_DATA_INVALID"),
        ({"text": "ok", "reply_markup": keyboard([("a", "я" * 33)])}, "BUTTON_DATA_INVALID"),
        ({"text": "ok", "reply_markup": keyboard([("a", "")])}, "BUTTON_DATA_INVALID"),
        (
            {"text": "ok", "reply_markup": keyboard([(str(i), str(i)) for i in range(9)])},
            "too many buttons in a row",
        ),
        (
            {
                "text": "ok",
                "reply_markup": keyboard(*[[(str(i), f"{i}")] for i in range(101)]),
            },
            "reply markup is too long",
        ),
        ({"text": "я" * 4097}, "message is too long"),
        ({"text": "  "}, "message text is empty"),
        ({"text": "<b>open", "parse_mode": "HTML"}, "can't parse entities"),
    ]
    for kwargs, error in cases:
        with pytest.raises(TelegramBadRequest, match=error):
            await bot.send_message(alice.id, **kwargs)  # type: ignore[arg-type]
    assert len(alice.messages()) == 3


@pytest.mark.parametrize(
    "text",
    [
        "Carl <3",
        "Tom & Jerry",
        "<b>Carl</b> <3",
        "a <",
        "x &nbsp; y",
        "&#xZZ;",
        "</b>",
        "<a href=x>",
    ],
)
async def test_html_telegram_cannot_parse_is_refused(
    fake: FakeTelegram, bot: Bot, text: str
) -> None:
    alice = fake.add_user("Alice")
    alice.start()
    with pytest.raises(TelegramBadRequest, match="Bad Request: can't parse entities: "):
        await bot.send_message(alice.id, text, parse_mode="HTML")
    await bot.send_message(alice.id, text)  # without parse_mode it is plain text
    assert [m.text for m in alice.messages()] == ["/start", text]


async def test_html_entities_show_the_characters(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.add_user("Alice")
    alice.start()
    sent = await bot.send_message(
        alice.id, "<b>Carl &lt;3</b> &amp; &quot;x&quot; &gt; &#60;&#x2F;b&#62;", parse_mode="HTML"
    )
    assert sent.text == 'Carl <3 & "x" > </b>'
    assert sent.entities is not None
    assert [(e.type, e.offset, e.length) for e in sent.entities] == [("bold", 0, 7)]


async def test_a_late_callback_answer_is_too_old() -> None:
    clock = ManualClock()
    async with FakeTelegram(limits=RateLimits.off(), clock=clock, callback_answer_window=5) as fake:
        bot = fake.make_bot()
        try:
            alice = fake.add_user("Alice")
            alice.start()
            await bot.send_message(alice.id, "Pick", reply_markup=keyboard([("Go", "go")]))
            in_time, late = alice.press("Go"), alice.press("Go")
            clock.advance(5)
            await bot.answer_callback_query(in_time.id)
            clock.advance(0.5)
            with pytest.raises(
                TelegramBadRequest,
                match="query is too old and response timeout expired or query ID is invalid",
            ):
                await bot.answer_callback_query(late.id)
            assert late.answer is None
            assert fake.stats.late_answers == 1
        finally:
            await bot.session.close()


async def test_flood_limits_answer_429_with_retry_after() -> None:
    clock = ManualClock()
    limits = RateLimits(per_chat_per_second=1, per_chat_burst=3, per_group_per_minute=20)
    async with FakeTelegram(limits=limits, clock=clock) as fake:
        bot = fake.make_bot()
        try:
            alice = fake.add_user("Alice")
            alice.start()
            for _ in range(3):
                await bot.send_message(alice.id, "burst")
            with pytest.raises(TelegramRetryAfter) as caught:
                await bot.send_message(alice.id, "one too many")
            assert caught.value.retry_after >= 1
            assert "Too Many Requests: retry after" in caught.value.message
            clock.advance(caught.value.retry_after)
            await bot.send_message(alice.id, "after waiting")

            group = alice.create_group("Friends")
            alice.add_bot_to(group)
            sent = 0

            async def flood() -> NoReturn:
                nonlocal sent
                while True:  # one per second is fine for the chat, not for the group
                    await bot.send_message(group.id, f"table {sent}")
                    sent += 1
                    clock.advance(1.0)

            with pytest.raises(TelegramRetryAfter):
                await flood()
            assert sent == 20  # 20 in any minute (a sliding window, #28)
            assert fake.stats.retry_after == 2
            assert fake.stats.errors[("sendMessage", 429)] == 2
            assert fake.stats.calls["sendMessage"] == 3 + 1 + 1 + sent + 1
        finally:
            await bot.session.close()


async def test_get_updates_offset_limit_and_long_poll(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.add_user("Alice", username="alice", language_code="ru")
    alice.start("lobby42")
    alice.send("hello")
    updates = await bot.get_updates()
    assert [u.message.text for u in updates if u.message] == ["/start lobby42", "hello"]
    first = updates[0].message
    assert first is not None
    assert first.from_user is not None
    assert first.from_user.language_code == "ru"
    assert first.entities is not None
    assert first.entities[0].type == "bot_command"
    assert len(await bot.get_updates(limit=1)) == 1
    # offset confirms everything below it
    assert await bot.get_updates(offset=updates[-1].update_id + 1) == []
    poll = asyncio.create_task(bot.get_updates(offset=updates[-1].update_id + 1, timeout=30))
    await asyncio.sleep(0)
    alice.send("/help")
    woke = await asyncio.wait_for(poll, 10)
    assert [u.message.text for u in woke if u.message] == ["/help"]


async def test_second_long_poll_terminates_the_first(fake: FakeTelegram, bot: Bot) -> None:
    polled = fake.world.updates_event()  # set as the first long poll arrives (wake_pollers)
    first = asyncio.create_task(bot.get_updates(timeout=30))
    await asyncio.wait_for(polled.wait(), 10)
    second = asyncio.create_task(bot.get_updates(timeout=0))
    with pytest.raises(TelegramConflictError, match="terminated by other getUpdates"):
        await asyncio.wait_for(first, 10)
    assert await second == []


async def test_callback_query_and_alert(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.add_user("Alice")
    alice.start()
    await bot.send_message(alice.id, "Pick", reply_markup=keyboard([("Join", "join:1")]))
    query = alice.press("Join")
    [update] = [u for u in await bot.get_updates() if u.callback_query]
    callback = update.callback_query
    assert callback is not None
    assert callback.data == "join:1"
    assert callback.chat_instance
    assert isinstance(callback.message, Message)  # not an InaccessibleMessage
    assert callback.message.text == "Pick"
    await bot.answer_callback_query(callback.id, text="Not your turn", show_alert=True)
    answer = await query.wait_answer()
    assert answer["text"] == "Not your turn"
    assert query.show_alert
    with pytest.raises(TelegramBadRequest, match="query is too old"):
        await bot.answer_callback_query(callback.id)
    with pytest.raises(LookupError):
        alice.press("Leave")
    forged = alice.press(data="join:999", forged=True)
    assert forged.data == "join:999"


async def test_buttons_may_share_one_callback_data(fake: FakeTelegram, bot: Bot) -> None:
    """Telegram lets several buttons carry the same data (#41: a replay at its
    first move, where ⏮, ◀ and ⏪ all go to it); a press of one sends it once.
    Text stays exact: two buttons with that text are ambiguous."""
    alice = fake.add_user("Alice")
    alice.start()
    markup = keyboard([("⏮", "rp:0"), ("◀", "rp:0"), ("▶", "rp:1")], [("⏪", "rp:0")])
    sent = await bot.send_message(alice.id, "Replay", reply_markup=markup)
    query = alice.press(data="rp:0")
    [update] = [u for u in await bot.get_updates() if u.callback_query]
    assert update.callback_query is not None
    assert update.callback_query.data == "rp:0"
    assert query.message.message_id == sent.message_id
    clicked = alice.click(data="rp:0")
    assert isinstance(clicked, CallbackQueryRecord)
    assert clicked.data == "rp:0"
    await bot.send_message(alice.id, "Two", reply_markup=keyboard([("Go", "a"), ("Go", "b")]))
    two = fake.world.last_message(alice.id)
    assert two is not None
    with pytest.raises(LookupError, match="2 buttons"):
        alice.press("Go", message=two)


async def test_inline_query_invitation_card(fake: FakeTelegram, bot: Bot) -> None:
    alice, bob = fake.add_user("Alice"), fake.add_user("Bob")
    alice.start()
    query = alice.inline_query("lobby42", chat=fake.world.direct_chat(alice.user, bob.user))
    [update] = [u for u in await bot.get_updates() if u.inline_query]
    assert update.inline_query is not None
    assert update.inline_query.query == "lobby42"
    await bot.answer_inline_query(
        update.inline_query.id,
        results=[
            InlineQueryResultArticle(
                id="invite",
                title="Invite",
                input_message_content=InputTextMessageContent(
                    message_text="<b>Durak</b> with Alice", parse_mode="HTML"
                ),
                reply_markup=keyboard([("Join", "join:lobby42")]),
            )
        ],
        is_personal=True,
    )
    card = await alice.choose_result(query, fake.world.direct_chat(alice.user, bob.user))
    assert card.text == "Durak with Alice"
    assert card.via_bot_id == fake.bot_user.id
    chosen = [u for u in await bot.get_updates(offset=update.update_id + 1)]
    assert chosen[0].chosen_inline_result is not None
    inline_id = chosen[0].chosen_inline_result.inline_message_id
    assert inline_id == card.inline_message_id
    press = bob.press("Join", message=card)
    [pressed] = [u for u in await bot.get_updates(offset=chosen[-1].update_id + 1)]
    assert pressed.callback_query is not None
    assert pressed.callback_query.inline_message_id == inline_id
    assert pressed.callback_query.message is None
    assert await bot.edit_message_text("Bob joined", inline_message_id=inline_id) is True
    assert card.text == "Bob joined"
    await bot.answer_callback_query(press.id, text="Joined")
    assert (await press.wait_answer())["text"] == "Joined"


async def test_commands_per_scope_and_language(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.add_user("Alice", language_code="uk")
    group = alice.create_group("Friends")
    await bot.set_my_commands([BotCommand(command="new", description="New game")])
    await bot.set_my_commands(
        [BotCommand(command="new", description="Нова гра")], language_code="uk"
    )
    await bot.set_my_commands(
        [BotCommand(command="join", description="Join")], scope=BotCommandScopeAllGroupChats()
    )
    await bot.set_my_commands(
        [BotCommand(command="rules", description="Rules")],
        scope=BotCommandScopeChat(chat_id=alice.id),
    )
    uk = await bot.get_my_commands(language_code="uk")
    assert [c.description for c in uk] == ["Нова гра"]
    assert await bot.get_my_commands(language_code="ru") == []
    groups = await bot.get_my_commands(scope=BotCommandScopeAllGroupChats())
    assert [c.command for c in groups] == ["join"]
    world = fake.world
    assert [c["command"] for c in world.commands_for(alice.user, alice.chat)] == ["rules"]
    assert [c["command"] for c in world.commands_for(alice.user, group)] == ["join"]
    bob = fake.add_user("Bob", language_code="uk")
    assert [c["description"] for c in world.commands_for(bob.user, bob.chat)] == ["Нова гра"]


async def test_group_membership_and_chat_info(fake: FakeTelegram, bot: Bot) -> None:
    alice, bob, carol = fake.add_user("Alice"), fake.add_user("Bob"), fake.add_user("Carol")
    group = alice.create_group("Friends", bob)
    with pytest.raises(TelegramForbiddenError, match="not a member of the group chat"):
        await bot.send_message(group.id, "hi")
    alice.add_bot_to(group)
    updates = await bot.get_updates()
    kinds = [u.event_type for u in updates]
    assert kinds == ["my_chat_member", "message"]
    assert updates[0].my_chat_member is not None
    assert updates[0].my_chat_member.new_chat_member.status == "member"
    assert updates[1].message is not None
    assert updates[1].message.new_chat_members is not None
    # privacy mode: commands reach the bot, chatter does not
    alice.send("just chatting", group)
    bob.send("/new@durak_test_bot", group)
    bob.send("/new@other_bot", group)
    later = await bot.get_updates(offset=updates[-1].update_id + 1)
    assert [u.message.text for u in later if u.message] == ["/new@durak_test_bot"]
    assert (await bot.get_chat_member(group.id, alice.id)).status == "creator"
    assert (await bot.get_chat_member(group.id, bob.id)).status == "member"
    assert (await bot.get_chat_member(group.id, carol.id)).status == "left"
    chat = await bot.get_chat(group.id)
    assert chat.title == "Friends"
    assert chat.type == "group"
    assert await bot.send_chat_action(group.id, "typing")
    sent = await bot.send_message(group.id, "table")
    with pytest.raises(TelegramBadRequest, match="not enough rights"):
        await bot.pin_chat_message(group.id, sent.message_id)
    alice.promote_bot(group)
    assert await bot.pin_chat_message(group.id, sent.message_id)
    assert group.pinned_message_id == sent.message_id


async def test_the_bot_removed_kicked_and_a_group_upgraded(fake: FakeTelegram, bot: Bot) -> None:
    """#38: what Telegram sends the bot when it is removed or kicked from a group
    (``my_chat_member``, new status ``left`` / ``kicked``), and when a basic
    group becomes a supergroup: the ``migrate_to_chat_id`` message in the old
    group, a ``my_chat_member`` of the supergroup, its ``migrate_from_chat_id``
    message (from ``@GroupAnonymousBot`` on the supergroup's behalf); from then
    on the old id answers 400 with ``parameters.migrate_to_chat_id``."""
    alice, bob = fake.add_user("Alice"), fake.add_user("Bob")
    group = alice.create_group("Friends", bob)
    alice.add_bot_to(group)
    seen = await bot.get_updates()
    alice.remove_bot_from(group, kick=True)
    [kicked] = await bot.get_updates(offset=seen[-1].update_id + 1)
    assert kicked.my_chat_member is not None
    assert kicked.my_chat_member.new_chat_member.status == "kicked"
    assert kicked.my_chat_member.old_chat_member.status == "member"
    with pytest.raises(TelegramForbiddenError, match="bot was kicked from the group chat"):
        await bot.send_message(group.id, "hi")
    alice.add_bot_to(group)
    seen = await bot.get_updates(offset=kicked.update_id + 1)
    with pytest.raises(PermissionError):
        bob.upgrade_group(group)  # only an admin may
    supergroup = alice.upgrade_group(group)
    assert supergroup.type == "supergroup"
    assert supergroup.members == group.members
    moved = await bot.get_updates(offset=seen[-1].update_id + 1)
    assert [u.event_type for u in moved] == ["message", "my_chat_member", "message"]
    old, member, new = moved
    assert old.message is not None
    assert (old.message.chat.id, old.message.migrate_to_chat_id) == (group.id, supergroup.id)
    assert old.message.from_user is not None
    assert old.message.from_user.id == alice.id
    assert member.my_chat_member is not None
    assert member.my_chat_member.chat.id == supergroup.id
    assert member.my_chat_member.new_chat_member.status == "member"
    assert new.message is not None
    assert (new.message.chat.id, new.message.migrate_from_chat_id) == (supergroup.id, group.id)
    assert new.message.sender_chat is not None
    assert new.message.sender_chat.id == supergroup.id
    with pytest.raises(TelegramMigrateToChat) as refused:
        await bot.send_message(group.id, "hi")
    assert refused.value.migrate_to_chat_id == supergroup.id
    with pytest.raises(TelegramMigrateToChat):
        await bot.get_chat_member(group.id, alice.id)
    assert (await bot.get_chat_member(supergroup.id, alice.id)).status == "creator"
    assert (await bot.send_message(supergroup.id, "hi")).chat.id == supergroup.id


async def test_deep_links_and_waiting_for_the_bot(fake: FakeTelegram, bot: Bot) -> None:
    alice = fake.add_user("Alice")
    alice.follow_link(f"https://t.me/{fake.bot_user.username}?start=lobby42")
    [update] = await bot.get_updates()
    assert update.message is not None
    assert update.message.text == "/start lobby42"
    waiting = asyncio.create_task(alice.wait_message("Welcome"))
    await asyncio.sleep(0)
    await bot.send_message(alice.id, "Welcome to lobby 42")
    message = await waiting
    assert message.text == "Welcome to lobby 42"
    group = alice.create_group("Friends")
    alice.follow_link(f"https://t.me/{fake.bot_user.username}?startgroup=g1", group=group)
    texts = [m.text for m in fake.messages(group)]
    assert texts[-1] == f"/start@{fake.bot_user.username} g1"
    assert group.bot_present
    with pytest.raises(ValueError, match="deep-link payload must be 0-64 of A-Za-z0-9_-"):
        alice.start("bad payload!")


async def test_raw_http_encodings_snapshot_and_events(fake: FakeTelegram) -> None:
    alice = fake.add_user("Alice")
    alice.start()
    base = f"{fake.url}/bot{fake.token}"
    async with aiohttp.ClientSession() as http:
        async with http.post(
            f"{base}/sendMessage", json={"chat_id": alice.id, "text": "json"}
        ) as r:
            assert (await r.json())["ok"] is True
        form = {"chat_id": str(alice.id), "text": "urlencoded"}
        async with http.post(f"{base}/sendmessage", data=form) as r:
            assert (await r.json())["result"]["text"] == "urlencoded"
        async with http.post(f"{base}/noSuchMethod") as r:
            assert r.status == 404
            assert await r.json() == {
                "ok": False,
                "error_code": 404,
                "description": "Not Found: method not found",
            }
        async with http.post(f"{fake.url}/bot1:wrong/getMe") as r:
            assert r.status == 401
        version = fake.version
        events = asyncio.create_task(
            http.get(f"{fake.url}/_fake/events", params={"since": version, "timeout": 30})
        )
        await asyncio.sleep(0.05)
        alice.send("ping")
        async with await events as r:
            body = await r.json()
        assert body["events"][0]["kind"] == "message_new"
        async with http.get(f"{fake.url}/_fake/snapshot") as r:
            snapshot = await r.json()
    [chat] = snapshot["chats"]
    assert [m["text"] for m in chat["messages"]] == ["/start", "json", "urlencoded", "ping"]
    assert snapshot["stats"]["calls"]["sendMessage"] == 2


async def test_webhook_delivery_and_a_method_in_the_reply(fake: FakeTelegram, bot: Bot) -> None:
    """Updates are POSTed with the secret; a method in aiogram's reply is executed."""
    router = Router()
    secrets_seen: list[str | None] = []

    @router.message(CommandStart())
    async def on_start(message: Message) -> SendMessage:
        return message.answer("Welcome (from the webhook reply)")

    dp = Dispatcher()
    dp.include_router(router)
    webhook = SimpleRequestHandler(dp, bot, handle_in_background=False, secret_token="s3cret")

    @web.middleware
    async def spy(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        secrets_seen.append(request.headers.get("X-Telegram-Bot-Api-Secret-Token"))
        return await handler(request)

    app = web.Application(middlewares=[spy])
    webhook.register(app, path="/hook")
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        await bot.set_webhook(f"http://127.0.0.1:{port}/hook", secret_token="s3cret")
        with pytest.raises(TelegramConflictError):
            await bot.get_updates()
        alice = fake.add_user("Alice")
        alice.start()
        await alice.wait_message("Welcome")
        await fake.world.wait_for(lambda: not fake.world.updates, what="webhook delivery")
        assert secrets_seen == ["s3cret"]
        assert (await bot.get_webhook_info()).pending_update_count == 0
        await bot.delete_webhook()
        assert await bot.get_updates() == []
    finally:
        await runner.cleanup()


async def test_a_real_dispatcher_parses_every_update(fake: FakeTelegram) -> None:
    router = Router(name="probe")
    seen: list[str] = []

    @router.message(CommandStart())
    async def on_start(message: Message, command: CommandObject) -> None:
        seen.append(f"start:{command.args}")
        await message.answer("Welcome", reply_markup=keyboard([("Join", "join:1")]))

    @router.callback_query(F.data == "join:1")
    async def on_join(callback: CallbackQuery) -> None:
        seen.append(f"callback:{callback.chat_instance != ''}")
        await callback.answer("Game is full", show_alert=True)

    @router.inline_query()
    async def on_inline(query: InlineQuery) -> None:
        seen.append(f"inline:{query.query}")
        await query.answer(
            [
                InlineQueryResultArticle(
                    id="1",
                    title="Invite",
                    input_message_content=InputTextMessageContent(message_text="Play Durak"),
                    reply_markup=keyboard([("Join", "join:1")]),
                )
            ]
        )

    @router.chosen_inline_result()
    async def on_chosen(result: ChosenInlineResult) -> None:
        seen.append(f"chosen:{result.result_id}")

    @router.my_chat_member()
    async def on_added(event: ChatMemberUpdated) -> None:
        seen.append(f"my_chat_member:{event.new_chat_member.status}")
        await event.answer("Hi! Send /new to start a game.")

    dp = Dispatcher()
    dp.include_router(router)
    bot = fake.make_bot()
    polling = asyncio.create_task(dp.start_polling(bot, handle_signals=False, polling_timeout=30))
    try:
        alice = fake.add_user("Alice")
        alice.start("lobby42")
        welcome = await alice.wait_message("Welcome")
        query = alice.press("Join", message=welcome)
        answer = await query.wait_answer()
        assert answer == {"text": "Game is full", "show_alert": True, "url": None, "cache_time": 0}

        inline = alice.inline_query("invite")
        await alice.choose_result(inline, alice.chat)
        group = alice.create_group("Friends")
        alice.add_bot_to(group)
        await alice.wait_message("Hi!", group)
        await fake.world.wait_for(lambda: "chosen:1" in seen or None, what="chosen result")
    finally:
        await dp.stop_polling()
        await asyncio.wait_for(polling, 10)
    assert seen == [
        "start:lobby42",
        "callback:True",
        "inline:invite",
        "chosen:1",
        "my_chat_member:member",
    ]
    assert fake.stats.errors == {}


async def test_click_follows_deep_links_and_the_outbox_keeps_every_text(
    fake: FakeTelegram, bot: Bot
) -> None:
    alice, bob = fake.add_user("Alice"), fake.add_user("Bob")
    group = alice.create_group("Friends", bob)
    alice.add_bot_to(group)
    link = f"https://t.me/{fake.bot_user.username}?start=lobby42"
    lobby = await bot.send_message(
        group.id,
        "Lobby",
        reply_markup=InlineKeyboardMarkup(
            inline_keyboard=[
                [InlineKeyboardButton(text="Join", callback_data="join")],
                [InlineKeyboardButton(text="Open chat", url=link)],
                [InlineKeyboardButton(text="Share", switch_inline_query="lobby42")],
            ]
        ),
    )
    pressed = bob.click("Join", chat=group)
    assert isinstance(pressed, CallbackQueryRecord)
    # Bob never started the bot: the bot answers with a one-tap deep link.
    with pytest.raises(TelegramBadRequest, match="URL_INVALID"):
        await bot.answer_callback_query(pressed.id, url="https://example.com/")
    await bot.answer_callback_query(pressed.id, url=link)
    answer = await pressed.wait_answer()
    started = bob.follow_link(answer["url"])
    assert started.text == "/start lobby42"
    assert bob.user.started
    opened = bob.click("Open chat", chat=group)
    assert isinstance(opened, MessageRecord)
    assert opened.chat is bob.chat
    shared = bob.click("Share", chat=group, into=group)
    assert isinstance(shared, InlineQueryRecord)
    assert shared.query == "lobby42"
    assert shared.chat_type == "group"
    await bot.edit_message_text("Lobby (1/2)", chat_id=group.id, message_id=lobby.message_id)
    await bot.delete_message(group.id, lobby.message_id)
    assert [(e["kind"], e["text"]) for e in fake.world.outbox] == [
        ("send", "Lobby"),
        ("edit", "Lobby (1/2)"),
    ]


async def test_a_page_can_play_through_the_json_actions(fake: FakeTelegram, bot: Bot) -> None:
    """What the sandbox page does: act over HTTP, follow the event feed."""
    async with aiohttp.ClientSession() as http:

        async def act(**body: object) -> dict[str, object]:
            async with http.post(f"{fake.url}/_fake/act", json=body) as response:
                answer: dict[str, object] = await response.json()
                return answer

        created = await act(action="add_user", first_name="Dana", language_code="uk")
        assert created["ok"] is True
        user = created["result"]
        assert isinstance(user, dict)
        started = await act(action="start", user_id=user["id"], payload="lobby42")
        assert started["ok"] is True
        sent = await bot.send_message(
            int(user["id"]), "Lobby", reply_markup=keyboard([("Join", "join")])
        )
        clicked = await act(
            action="click",
            user_id=user["id"],
            chat_id=user["id"],
            message_id=sent.message_id,
            text="Join",
        )
        result = clicked["result"]
        assert clicked["ok"] is True
        assert isinstance(result, dict)
        assert result["data"] == "join"
        missing = await act(action="click", user_id=user["id"], text="Leave")
        assert missing["ok"] is False
        assert "no message" in str(missing["error"])
        assert (await act(action="set_language", user_id=user["id"], language_code="ru"))["ok"]
    updates = await bot.get_updates()
    assert [u.event_type for u in updates] == ["message", "callback_query"]
    assert updates[1].callback_query is not None
    assert updates[1].callback_query.from_user.language_code == "uk"
    assert fake.world.users[int(user["id"])].language_code == "ru"
