"""Ephemeral messages in the fake Bot API, driven by a real aiogram ``Bot``: sent,
edited and deleted as the Bot API documents, seen only by their receiver."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from typing import TypedDict

import aiohttp
import pytest
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest, TelegramRetryAfter
from aiogram.types import (
    EphemeralMessageParameters,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    LoginUrl,
    ReplyParameters,
)

from sandbox.fake_api import Chat, FakeTelegram, ManualClock, RateLimits, SimUser


@dataclass
class Table:
    fake: FakeTelegram
    bot: Bot
    alice: SimUser
    bob: SimUser
    group: Chat


class Whom(TypedDict):
    chat_id: int
    receiver_user_id: int


class Ids(Whom):
    ephemeral_message_id: int


def cards(*labels: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text=t, callback_data=f"c:{t}") for t in labels]]
    )


def to(user: SimUser, **more: object) -> EphemeralMessageParameters:
    return EphemeralMessageParameters(receiver_user_id=user.id, **more)  # type: ignore[arg-type]


async def make_table(fake: FakeTelegram) -> Table:
    alice = fake.add_user("Alice")
    bob = fake.add_user("Bob")
    group = fake.create_group("Durak", alice, bob)
    alice.add_bot_to(group)
    return Table(fake, fake.make_bot(), alice, bob, group)


@pytest.fixture
async def t() -> AsyncIterator[Table]:
    async with FakeTelegram(limits=RateLimits.off()) as fake:
        table = await make_table(fake)
        yield table
        await table.bot.session.close()


async def test_only_the_receiver_sees_an_ephemeral_message(t: Table) -> None:
    sent = await t.bot.send_message(
        t.group.id, "Your hand: 7♠ Q♥", ephemeral_message_parameters=to(t.alice)
    )
    assert sent.message_id == 0
    assert sent.ephemeral_message_id == 1
    assert sent.receiver_user is not None
    assert sent.receiver_user.id == t.alice.id
    shown = await t.alice.wait_message("Your hand", t.group)
    assert shown.ephemeral_message_id == 1
    assert [m.text for m in t.alice.messages(t.group) if m.text] == ["Your hand: 7♠ Q♥"]
    assert t.bob.last_message(t.group) is None
    assert all(m.text is None for m in t.bob.messages(t.group))
    assert t.fake.world.messages(t.group) == t.bob.messages(t.group)  # not in the public chat
    with pytest.raises(TimeoutError):
        await t.bob.wait_message("Your hand", t.group, timeout=0.05)


async def test_the_outbox_says_who_was_shown_what(t: Table) -> None:
    await t.bot.send_message(t.group.id, "Lobby")
    await t.bot.send_message(t.group.id, "Hand 7♠", ephemeral_message_parameters=to(t.alice))
    await t.bot.edit_ephemeral_message_text(
        chat_id=t.group.id, receiver_user_id=t.alice.id, ephemeral_message_id=1, text="Hand 8♠"
    )
    entries = [(e["kind"], e["text"], e["visible_to"]) for e in t.fake.world.outbox]
    both = sorted([t.alice.id, t.bob.id])
    assert [(k, x, sorted(v)) for k, x, v in entries] == [
        ("send", "Lobby", both),
        ("send", "Hand 7♠", [t.alice.id]),
        ("edit", "Hand 8♠", [t.alice.id]),
    ]
    assert t.fake.world.outbox[1]["receiver_user_id"] == t.alice.id
    assert t.fake.world.outbox[1]["ephemeral_message_id"] == 1
    assert [e["text"] for e in t.fake.world.shown_to(t.bob.id)] == ["Lobby"]


async def test_ephemeral_messages_only_go_to_present_group_members(t: Table) -> None:
    carol = t.fake.add_user("Carol")
    carol.start()
    with pytest.raises(TelegramBadRequest, match="USER_NOT_PARTICIPANT"):
        await t.bot.send_message(t.group.id, "x", ephemeral_message_parameters=to(carol))
    t.bob.leave(t.group)
    with pytest.raises(TelegramBadRequest, match="USER_NOT_PARTICIPANT"):
        await t.bot.send_message(t.group.id, "x", ephemeral_message_parameters=to(t.bob))
    with pytest.raises(TelegramBadRequest, match="only to group"):
        await t.bot.send_message(carol.id, "x", ephemeral_message_parameters=to(carol))
    with pytest.raises(TelegramBadRequest, match="user not found"):
        await t.bot.send_message(
            t.group.id,
            "x",
            ephemeral_message_parameters=EphemeralMessageParameters(receiver_user_id=42),
        )
    assert t.group.ephemeral == {}
    assert list(t.fake.world.outbox) == []


async def test_edits_and_deletion_reach_the_receiver(t: Table) -> None:
    await t.bot.send_message(
        t.group.id, "Hand", reply_markup=cards("7♠"), ephemeral_message_parameters=to(t.alice)
    )
    shown = t.alice.messages(t.group)[-1]
    ids = Ids(chat_id=t.group.id, receiver_user_id=t.alice.id, ephemeral_message_id=1)
    assert await t.bot.edit_ephemeral_message_text(
        text="<b>Hand</b> 2", parse_mode="HTML", reply_markup=cards("8♠"), **ids
    )
    assert shown.text == "Hand 2"
    assert shown.button_texts == ["8♠"]
    with pytest.raises(TelegramBadRequest, match="message is not modified"):
        await t.bot.edit_ephemeral_message_reply_markup(reply_markup=cards("8♠"), **ids)
    assert await t.bot.edit_ephemeral_message_reply_markup(reply_markup=cards("9♠"), **ids)
    assert shown.button_texts == ["9♠"]
    assert shown.edits == 2
    assert await t.bot.delete_ephemeral_message(**ids)
    assert all(m.ephemeral_message_id is None for m in t.alice.messages(t.group))


async def test_an_ephemeral_message_is_addressed_by_chat_receiver_and_id(t: Table) -> None:
    await t.bot.send_message(t.group.id, "Hand", ephemeral_message_parameters=to(t.alice))
    wrong = Ids(chat_id=t.group.id, receiver_user_id=t.bob.id, ephemeral_message_id=1)
    with pytest.raises(TelegramBadRequest, match="message to edit not found"):
        await t.bot.edit_ephemeral_message_text(text="x", **wrong)
    with pytest.raises(TelegramBadRequest, match="message to delete not found"):
        await t.bot.delete_ephemeral_message(**wrong)
    with pytest.raises(TelegramBadRequest, match="message to edit not found"):
        await t.bot.edit_message_text("x", chat_id=t.group.id, message_id=0)
    with pytest.raises(TelegramBadRequest, match="message to delete not found"):
        await t.bot.delete_ephemeral_message(
            chat_id=t.group.id, receiver_user_id=t.alice.id, ephemeral_message_id=2
        )
    assert t.alice.messages(t.group)[-1].text == "Hand"


async def test_a_press_on_an_ephemeral_button_carries_the_ephemeral_message(t: Table) -> None:
    await t.bot.send_message(
        t.group.id, "Hand", reply_markup=cards("7♠"), ephemeral_message_parameters=to(t.alice)
    )
    shown = t.alice.messages(t.group)[-1]
    query = t.alice.press("7♠", chat=t.group)
    assert query.message is shown
    updates = await t.bot.get_updates()
    callback = updates[-1].callback_query
    assert callback is not None
    assert callback.data == "c:7♠"
    assert callback.message is not None
    assert callback.message.message_id == 0
    assert callback.message.ephemeral_message_id == 1  # type: ignore[union-attr]
    assert callback.message.receiver_user.id == t.alice.id  # type: ignore[union-attr]
    assert await t.bot.answer_callback_query(query.id, text="Played")
    assert (await query.wait_answer())["text"] == "Played"
    with pytest.raises(PermissionError, match="not his"):
        t.bob.press("7♠", message=shown)
    with pytest.raises(LookupError):
        t.bob.press("7♠", chat=t.group)


async def test_a_reply_to_a_callback_query_can_replace_its_message(t: Table) -> None:
    lobby = await t.bot.send_message(t.group.id, "Lobby", reply_markup=cards("Hand"))
    query = t.alice.press("Hand", chat=t.group)
    await t.bot.send_message(
        t.group.id,
        "Your hand",
        ephemeral_message_parameters=to(
            t.alice, callback_query_id=query.id, replace_callback_query_message=True
        ),
    )
    assert [m.text for m in t.alice.messages(t.group) if m.text] == ["Your hand"]
    assert [m.text for m in t.bob.messages(t.group) if m.text] == ["Lobby"]
    assert t.alice.messages(t.group)[-1].replaces == lobby.message_id
    await t.bot.delete_ephemeral_message(
        chat_id=t.group.id, receiver_user_id=t.alice.id, ephemeral_message_id=1
    )
    assert [m.text for m in t.alice.messages(t.group) if m.text] == ["Lobby"]


async def test_callback_query_ties_are_checked(t: Table) -> None:
    await t.bot.send_message(t.group.id, "Lobby", reply_markup=cards("Hand"))
    query = t.alice.press("Hand", chat=t.group)
    with pytest.raises(TelegramBadRequest, match="not sent by the receiver"):
        await t.bot.send_message(
            t.group.id, "x", ephemeral_message_parameters=to(t.bob, callback_query_id=query.id)
        )
    with pytest.raises(TelegramBadRequest, match="query is too old"):
        await t.bot.send_message(
            t.group.id, "x", ephemeral_message_parameters=to(t.alice, callback_query_id="nope")
        )
    with pytest.raises(TelegramBadRequest, match="needs callback_query_id"):
        await t.bot.send_message(
            t.group.id,
            "x",
            ephemeral_message_parameters=to(t.alice, replace_callback_query_message=True),
        )
    await t.bot.send_message(
        t.group.id,
        "Hand",
        reply_markup=cards("7♠"),
        ephemeral_message_parameters=to(t.alice, callback_query_id=query.id),
    )
    from_ephemeral = t.alice.press("7♠", chat=t.group)
    with pytest.raises(TelegramBadRequest, match="must be False"):
        await t.bot.send_message(
            t.group.id,
            "x",
            ephemeral_message_parameters=to(
                t.alice, callback_query_id=from_ephemeral.id, replace_callback_query_message=True
            ),
        )
    assert list(t.group.ephemeral) == [1]


async def test_login_url_buttons_are_not_supported(t: Table) -> None:
    markup = InlineKeyboardMarkup(
        inline_keyboard=[
            [InlineKeyboardButton(text="Log in", login_url=LoginUrl(url="https://a.b"))]
        ]
    )
    with pytest.raises(TelegramBadRequest, match="BUTTON_TYPE_INVALID"):
        await t.bot.send_message(
            t.group.id, "x", reply_markup=markup, ephemeral_message_parameters=to(t.alice)
        )


async def test_an_offline_receiver_misses_sends_edits_and_deletions(t: Table) -> None:
    await t.bot.send_message(t.group.id, "Hand 1", ephemeral_message_parameters=to(t.alice))
    t.alice.set_online(False)
    ids = Whom(chat_id=t.group.id, receiver_user_id=t.alice.id)
    # Every call succeeds: the bot is not told (delivery "is not guaranteed").
    assert await t.bot.edit_ephemeral_message_text(text="Hand 2", ephemeral_message_id=1, **ids)
    missed = await t.bot.send_message(
        t.group.id, "Hand B", ephemeral_message_parameters=to(t.alice)
    )
    assert missed.ephemeral_message_id == 2
    assert await t.bot.delete_ephemeral_message(ephemeral_message_id=1, **ids)
    t.alice.set_online(True)
    assert [m.text for m in t.alice.messages(t.group) if m.text] == ["Hand 1"]
    assert await t.bot.edit_ephemeral_message_text(text="Hand C", ephemeral_message_id=2, **ids)
    assert [m.text for m in t.alice.messages(t.group) if m.text] == ["Hand 1", "Hand C"]
    assert [e["visible_to"] for e in t.fake.world.outbox] == [
        [t.alice.id],
        [],
        [],
        [t.alice.id],
    ]


async def test_ephemeral_sends_and_edits_count_against_the_group_limit() -> None:
    clock = ManualClock()
    limits = RateLimits(per_chat_burst=100, per_group_burst=2, global_burst=100)
    async with FakeTelegram(limits=limits, clock=clock) as fake:
        t = await make_table(fake)
        try:
            await t.bot.send_message(t.group.id, "a", ephemeral_message_parameters=to(t.alice))
            await t.bot.edit_ephemeral_message_text(
                chat_id=t.group.id, receiver_user_id=t.alice.id, ephemeral_message_id=1, text="b"
            )
            with pytest.raises(TelegramRetryAfter):
                await t.bot.send_message(t.group.id, "c", ephemeral_message_parameters=to(t.bob))
            assert list(t.group.ephemeral) == [1]
        finally:
            await t.bot.session.close()


async def test_a_page_presses_ephemeral_buttons_and_goes_offline(t: Table) -> None:
    """The sandbox page's JSON actions: click by ephemeral_message_id, set_online."""
    await t.bot.send_message(
        t.group.id, "Hand", reply_markup=cards("7♠"), ephemeral_message_parameters=to(t.alice)
    )
    async with aiohttp.ClientSession() as http:

        async def act(**body: object) -> dict[str, object]:
            async with http.post(f"{t.fake.url}/_fake/act", json=body) as response:
                answer: dict[str, object] = await response.json()
                return answer

        base = {"action": "click", "chat_id": t.group.id, "data": "c:7♠"}
        clicked = await act(user_id=t.alice.id, ephemeral_message_id=1, **base)
        assert clicked["ok"] is True
        refused = await act(user_id=t.bob.id, ephemeral_message_id=1, **base)
        assert refused["ok"] is False
        assert "not his" in str(refused["error"])
        missing = await act(user_id=t.alice.id, ephemeral_message_id=9, **base)
        assert missing["ok"] is False
        assert (await act(action="set_online", user_id=t.bob.id, online=False))["ok"]
        async with http.get(f"{t.fake.url}/_fake/snapshot") as response:
            snapshot = await response.json()
    assert not t.bob.user.online
    group = next(c for c in snapshot["chats"] if c["id"] == t.group.id)
    assert [(m["message_id"], m["ephemeral_message_id"]) for m in group["ephemeral"]] == [(0, 1)]
    assert group["ephemeral"][0]["receiver_user"]["id"] == t.alice.id
    bob = next(u for u in snapshot["users"] if u["id"] == t.bob.id)
    assert bob["online"] is False


async def test_an_ephemeral_message_may_reply_to_a_group_message(t: Table) -> None:
    lobby = await t.bot.send_message(t.group.id, "Lobby")
    sent = await t.bot.send_message(
        t.group.id,
        "Your seat",
        reply_parameters=ReplyParameters(message_id=lobby.message_id),
        ephemeral_message_parameters=to(t.alice),
    )
    assert sent.reply_to_message is not None
    assert sent.reply_to_message.message_id == lobby.message_id
    # Replies to incoming ephemeral messages: simulated users send none.
    with pytest.raises(TelegramBadRequest, match="message to be replied not found"):
        await t.bot.send_message(
            t.group.id,
            "x",
            reply_parameters=ReplyParameters(ephemeral_message_id=1),
            ephemeral_message_parameters=to(t.alice),
        )


# ------------------------------------------------------------------ both Telegrams (#24)
async def crowd(fake: FakeTelegram, n: int) -> tuple[Bot, Chat, list[SimUser]]:
    """A group of ``n`` members with the bot in it."""
    users = [fake.add_user(f"U{i}") for i in range(n)]
    group = fake.create_group("Crowd", *users)
    users[0].add_bot_to(group)
    return fake.make_bot(), group, users


async def refused(write: Awaitable[object], retry_after: int) -> None:
    """``write`` gets Telegram's 429, with ``retry_after`` seconds to wait."""
    with pytest.raises(TelegramRetryAfter) as caught:
        await write
    assert caught.value.retry_after == retry_after
    assert f"Too Many Requests: retry after {retry_after}" in caught.value.message


async def test_counted_ephemeral_writes_share_the_groups_20_a_minute() -> None:
    """The default Telegram: public and ephemeral writes mixed, one a second --
    the 21st in the minute gets a 429, whichever kind, until the first leaves."""
    clock = ManualClock()
    async with FakeTelegram(limits=RateLimits(), clock=clock) as fake:
        bot, group, users = await crowd(fake, 3)
        try:
            for i in range(20):
                if i % 2:
                    await bot.send_message(group.id, f"table {i}")
                elif i % 4:  # an edit of the ephemeral message sent just before
                    await bot.edit_ephemeral_message_text(
                        chat_id=group.id,
                        receiver_user_id=users[1].id,
                        ephemeral_message_id=group.next_ephemeral_id - 1,
                        text=f"hand {i}",
                    )
                else:
                    hand = to(users[1])
                    await bot.send_message(group.id, f"hand {i}", ephemeral_message_parameters=hand)
                clock.advance(1.0)
            assert clock.now == 1_020.0  # the first write (at 1000) leaves the minute at 1060
            await refused(
                bot.send_message(group.id, "21st", ephemeral_message_parameters=to(users[2])), 40
            )
            await refused(bot.send_message(group.id, "21st"), 40)
            clock.advance(39.0)
            await refused(bot.send_message(group.id, "21st"), 1)
            clock.advance(1.0)
            await bot.send_message(group.id, "21st", ephemeral_message_parameters=to(users[2]))
            assert fake.stats.retry_after == 3
            assert fake.stats.retry_after_by_chat[group.id] == 3
        finally:
            await bot.session.close()


async def test_uncounted_ephemeral_writes_count_per_receiver_and_overall() -> None:
    """The other Telegram (``ephemeral_counted=False``): an ephemeral write is a
    message to its receiver -- 3 in any 3 s per receiver in that group, 30 in any
    second overall -- and the group's minute holds only the public writes."""
    clock = ManualClock()
    async with FakeTelegram(limits=RateLimits(ephemeral_counted=False), clock=clock) as fake:
        bot, group, users = await crowd(fake, 12)
        try:
            for i in range(20):  # the group's minute, spent by public writes
                await bot.send_message(group.id, f"table {i}")
                clock.advance(1.0)
            await refused(bot.send_message(group.id, "21st"), 40)
            # ... while each receiver still gets 3 at once: 10 receivers, 30 writes
            for u in users[:10]:
                sent = await bot.send_message(group.id, "hand", ephemeral_message_parameters=to(u))
                assert sent.ephemeral_message_id is not None
                for n in range(2):  # his edits count in his window too
                    await bot.edit_ephemeral_message_text(
                        chat_id=group.id,
                        receiver_user_id=u.id,
                        ephemeral_message_id=sent.ephemeral_message_id,
                        text=f"hand {n}",
                    )
            # the bot's 30 in any second are spent: the 31st waits a second
            await refused(
                bot.send_message(group.id, "hand", ephemeral_message_parameters=to(users[10])), 1
            )
            clock.advance(1.0)
            # the receiver's window: his 4th in 3 s waits for his first to leave
            await refused(
                bot.send_message(group.id, "more", ephemeral_message_parameters=to(users[0])), 2
            )
            await bot.send_message(group.id, "hand", ephemeral_message_parameters=to(users[10]))
            await refused(bot.send_message(group.id, "21st"), 39)  # the group's own minute
            clock.advance(2.0)
            await bot.send_message(group.id, "more", ephemeral_message_parameters=to(users[0]))
            assert fake.stats.retry_after == 4
            assert fake.stats.retry_after_by_chat[group.id] == 4  # per chat, as always
        finally:
            await bot.session.close()


async def test_uncounted_ephemeral_writes_leave_the_group_chat_window_alone() -> None:
    """Not counted: public writes keep the group chat's own 3 in any 3 s, and a
    burst of ephemeral writes does not take from it."""
    clock = ManualClock()
    async with FakeTelegram(limits=RateLimits(ephemeral_counted=False), clock=clock) as fake:
        bot, group, users = await crowd(fake, 3)
        try:
            for u in users:
                await bot.send_message(group.id, "hand", ephemeral_message_parameters=to(u))
            for i in range(3):
                await bot.send_message(group.id, f"table {i}")
            await refused(bot.send_message(group.id, "table 3"), 3)
        finally:
            await bot.session.close()
