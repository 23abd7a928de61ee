"""The outgoing middleware and coalesced delivery against the fake Bot API with
its flood limits ON, the shared Redis limiter, and one manual clock for all."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import pytest
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest, TelegramForbiddenError
from aiogram.methods import SendMessage
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from sandbox.fake_api import Chat, FakeTelegram, ManualClock, RateLimits, SimUser
from sandbox.fake_api import Message as MessageRecord
from tables import LiveConfig, TableService
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.coalesce import Delivery, Urgency
from telegram_bot.delivery.digest import table_version
from telegram_bot.delivery.events import Events, PrivateForbidden, Replaced
from telegram_bot.delivery.flood.limiter import FloodLimiter
from telegram_bot.delivery.outgoing import (
    CallOptions,
    Forbidden,
    Outgoing,
    Prepaid,
    find_outgoing,
    install,
    is_limited,
)
from telegram_bot.delivery.waiting_line import Priority, WaitingLine
from tests.bot.flood_kit import last_digest, monitored

T = TypeVar("T")


def kb(*labels: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text=x, callback_data=x) for x in labels]]
    )


def bot_messages(fake: FakeTelegram, chat: Chat) -> list[MessageRecord]:
    """The bot's messages in a chat as they are now (the users' own left out)."""
    return [m for m in fake.messages(chat) if m.from_id == fake.bot_user.id]


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


class VirtualTime:
    """Sleeping moves the shared manual clock -- but only while every worker of
    :meth:`run` sleeps, to the earliest wake-up (a tiny discrete-event loop), so
    no request is in flight while time jumps.  Outside ``run`` a sleep simply
    advances the clock."""

    def __init__(self, clock: ManualClock) -> None:
        self.clock = clock
        self.active = 0
        self.wakeups: list[float] = []
        self.parked: list[Callable[[], int]] = []  # workers queued behind a sleeper

    def watch(self, outgoing: Outgoing) -> Outgoing:
        """Count ``outgoing``'s calls queued in a chat's line (behind its head,
        which sleeps) as asleep: time may jump while they wait (#24)."""
        gate = outgoing.gate
        if gate is not None:
            self.parked.append(lambda: gate.chats.waiting)
        return outgoing

    async def sleep(self, seconds: float) -> None:
        target = self.clock.now + seconds
        self.wakeups.append(target)
        try:
            while self.clock.now < target:
                if len(self.wakeups) + sum(p() for p in self.parked) >= self.active:
                    self.clock.now = max(self.clock.now, min(self.wakeups))
                    await asyncio.sleep(0)  # the earliest sleeper wakes first
                else:
                    await asyncio.sleep(0.001)
        finally:
            self.wakeups.remove(target)
        await asyncio.sleep(0)

    async def run(self, *coros: Awaitable[T]) -> list[T]:
        async def worker(coro: Awaitable[T]) -> T:
            try:
                return await coro
            finally:
                self.active -= 1

        self.active += len(coros)
        return list(await asyncio.gather(*(worker(c) for c in coros)))


@pytest.fixture
def vtime(clock: ManualClock) -> VirtualTime:
    return VirtualTime(clock)


@pytest.fixture
def sleep(vtime: VirtualTime) -> Callable[[float], Awaitable[None]]:
    return vtime.sleep


@pytest.fixture
async def fake(clock: ManualClock) -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits(), clock=clock) as server:
        yield server


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    bot = fake.make_bot()
    yield bot
    await bot.session.close()


@pytest.fixture
async def limiter(
    redis_url: str, redis_prefix: str, clock: ManualClock
) -> AsyncIterator[FloodLimiter]:
    svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
    yield FloodLimiter(svc.kv, clock=clock)
    await svc.aclose()


async def free(limiter: FloodLimiter, key: str) -> float:
    """Entries a chat's window (``key``) has free now (#28: sliding windows)."""
    window = limiter.config.per_chat
    count = limiter.kv.script("return redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[1], '+inf')")
    since = repr(float(limiter.clock()) - window.seconds)
    return float(window.limit - int(await count([key], [since])))


class Closures(list[tuple[int, Forbidden]]):
    """The 403s of private chats the middleware told so far (#39: as events)."""

    def __init__(self, events: Events) -> None:
        super().__init__()
        self.events = events

    def read(self) -> Closures:
        self.extend(
            (e.user, e.kind) for e in self.events.drain() if isinstance(e, PrivateForbidden)
        )
        return self


@pytest.fixture
def forbidden_calls(outgoing: Outgoing) -> Closures:
    return Closures(outgoing.events)


@pytest.fixture
def outgoing(
    bot: Bot,
    limiter: FloodLimiter,
    sleep: Callable[[float], Awaitable[None]],
    vtime: VirtualTime,
) -> Outgoing:
    return vtime.watch(install(bot, limiter, sleep=sleep))


@pytest.fixture
async def delivery(
    bot: Bot,
    outgoing: Outgoing,
    clock: ManualClock,
    sleep: Callable[[float], Awaitable[None]],
) -> AsyncIterator[Delivery]:
    d = Delivery(bot, clock=clock, sleep=sleep)
    yield d
    await d.aclose()


@pytest.fixture
def alice(fake: FakeTelegram) -> SimUser:
    user = fake.add_user("Alice")
    user.start()
    return user


def test_limited_methods() -> None:
    assert is_limited("sendMessage")
    assert is_limited("editMessageText")
    assert is_limited("editMessageReplyMarkup")
    assert is_limited("copyMessage")
    for name in ("answerCallbackQuery", "getUpdates", "answerInlineQuery", "setMyCommands"):
        assert not is_limited(name)
    assert not is_limited("sendChatAction")
    assert not is_limited("deleteMessage")


async def test_install_once(bot: Bot, outgoing: Outgoing) -> None:
    assert install(bot) is outgoing
    assert find_outgoing(bot) is outgoing
    assert sum(isinstance(m, Outgoing) for m in bot.session.middleware) == 1


# ---------------------------------------------------------------- the middleware
async def test_noop_edits_are_dropped(
    fake: FakeTelegram, bot: Bot, outgoing: Outgoing, alice: SimUser, clock: ManualClock
) -> None:
    msg = await bot.send_message(alice.id, "hand 1", reply_markup=kb("a"))
    clock.advance(5)
    # the same content as sent: Telegram is not asked
    assert (
        await bot.edit_message_text(
            "hand 1", chat_id=alice.id, message_id=msg.message_id, reply_markup=kb("a")
        )
        is True
    )
    assert (
        await bot.edit_message_reply_markup(
            chat_id=alice.id, message_id=msg.message_id, reply_markup=kb("a")
        )
        is True
    )
    assert fake.stats.calls["editMessageText"] == 0
    assert fake.stats.calls["editMessageReplyMarkup"] == 0
    # a real change goes out; repeating it does not
    await bot.edit_message_text(
        "hand 2", chat_id=alice.id, message_id=msg.message_id, reply_markup=kb("a")
    )
    clock.advance(5)
    await bot.edit_message_text(
        "hand 2", chat_id=alice.id, message_id=msg.message_id, reply_markup=kb("a")
    )
    # a keyboard-only change goes out, and then the text edit with it is a no-op
    await bot.edit_message_reply_markup(
        chat_id=alice.id, message_id=msg.message_id, reply_markup=kb("b")
    )
    clock.advance(5)
    await bot.edit_message_text(
        "hand 2", chat_id=alice.id, message_id=msg.message_id, reply_markup=kb("b")
    )
    assert fake.stats.calls["editMessageText"] == 1
    assert fake.stats.calls["editMessageReplyMarkup"] == 1
    [shown] = bot_messages(fake, alice.chat)
    assert shown.text == "hand 2"
    assert shown.edits == 2
    assert shown.button_texts == ["b"]
    assert outgoing.stats.noop == 4
    assert outgoing.stats.edited == 2
    assert outgoing.stats.sent == 1
    assert not fake.stats.errors


async def test_without_the_shared_limiter_content_never_goes_backwards(
    fake: FakeTelegram,
    clock: ManualClock,
    sleep: Callable[[float], Awaitable[None]],
    alice: SimUser,
) -> None:
    """Without the shared limiter (``flood_limiter`` off) the process's own memory
    refuses an edit rendering an older version of the same table than the message
    shows, as the shared digest does: a stale press's redraw of version 7 once
    went out after version 8's render and hid a seat's takeover for good."""
    bot = fake.make_bot()
    outgoing = install(bot, None, sleep=sleep)
    d = Delivery(bot, clock=clock, sleep=sleep)
    try:
        msg = await bot.send_message(alice.id, "start", reply_markup=kb("a"))
        mid = msg.message_id
        await d.edit(Address(alice.id, mid), "table v8", kb("a"), version=table_version("T", 8))
        await d.edit(Address(alice.id, mid), "table v7", kb("a"), version=table_version("T", 7))
        [shown] = bot_messages(fake, alice.chat)
        assert shown.text == "table v8"
        assert fake.stats.calls["editMessageText"] == 1
        # the same version again, a newer one, another table's: they go out
        await d.edit(
            Address(alice.id, mid), "table v8 again", kb("a"), version=table_version("T", 8)
        )
        assert shown.text == "table v8 again"
        await d.edit(Address(alice.id, mid), "table v9", kb("a"), version=table_version("T", 9))
        assert shown.text == "table v9"
        await d.edit(
            Address(alice.id, mid), "another table", kb("a"), version=table_version("U", 1)
        )
        assert shown.text == "another table"
        # a failed edit forgets the content, not the version: older stays out
        outgoing.shown.memory.forget(Address(alice.id, mid))
        assert not outgoing.shown.memory.admit(
            Address(alice.id, mid), "t", "m", table_version("U", 0)
        )
        assert outgoing.shown.memory.admit(Address(alice.id, mid), "t", "m", table_version("U", 1))
    finally:
        await d.aclose()
        await bot.session.close()


async def test_not_modified_from_telegram_is_success(
    fake: FakeTelegram, bot: Bot, outgoing: Outgoing, alice: SimUser, limiter: FloodLimiter
) -> None:
    msg = await bot.send_message(alice.id, "hello")
    # another process's memory of it is lost: Telegram answers "not modified"
    await limiter.forget(Address(alice.id, msg.message_id))
    assert await bot.edit_message_text("hello", chat_id=alice.id, message_id=msg.message_id)
    assert fake.stats.errors[("editMessageText", 400)] == 1
    assert outgoing.stats.noop == 1
    # ... and from then on the content is known again: no second call
    assert await bot.edit_message_text("hello", chat_id=alice.id, message_id=msg.message_id)
    assert fake.stats.calls["editMessageText"] == 1


async def test_failed_edit_forgets_the_content(
    fake: FakeTelegram, bot: Bot, outgoing: Outgoing, alice: SimUser, limiter: FloodLimiter
) -> None:
    with pytest.raises(TelegramBadRequest, match="not found"):
        await bot.edit_message_text("x", chat_id=alice.id, message_id=999)
    assert await last_digest(limiter, Address(alice.id, 999)) is None


async def test_other_processes_share_the_memory(
    fake: FakeTelegram,
    bot: Bot,
    outgoing: Outgoing,
    alice: SimUser,
    limiter: FloodLimiter,
    sleep: Callable[[float], Awaitable[None]],
    clock: ManualClock,
) -> None:
    """Process B changed the message: process A's edit back is not a no-op."""
    bot_b = fake.make_bot()
    try:
        install(bot_b, limiter, sleep=sleep)
        msg = await bot.send_message(alice.id, "v1")
        clock.advance(5)
        await bot_b.edit_message_text("v2", chat_id=alice.id, message_id=msg.message_id)
        clock.advance(5)
        await bot.edit_message_text("v1", chat_id=alice.id, message_id=msg.message_id)
        assert bot_messages(fake, alice.chat)[0].text == "v1"
        assert fake.stats.calls["editMessageText"] == 2
    finally:
        await bot_b.session.close()


async def test_burst_to_one_chat_gets_no_429(
    fake: FakeTelegram, bot: Bot, outgoing: Outgoing, alice: SimUser, vtime: VirtualTime
) -> None:
    msgs = await vtime.run(*(bot.send_message(alice.id, f"m{i}") for i in range(12)))
    for i, m in enumerate(msgs[:6]):
        await bot.edit_message_text(f"e{i}", chat_id=alice.id, message_id=m.message_id)
    assert fake.stats.retry_after == 0, fake.stats.refusals
    assert fake.stats.calls["sendMessage"] == 12
    assert outgoing.stats.waits > 0
    assert outgoing.stats.retry_after == 0
    assert sorted(m.text or "" for m in bot_messages(fake, alice.chat)) == sorted(
        [f"e{i}" for i in range(6)] + [m.text or "" for m in msgs[6:]]
    )


async def test_burst_to_a_group_gets_no_429(
    fake: FakeTelegram, bot: Bot, outgoing: Outgoing, alice: SimUser, vtime: VirtualTime
) -> None:
    group = alice.create_group("Table")
    alice.add_bot_to(group)
    await vtime.run(
        *(bot.send_message(group.id, f"g{i}") for i in range(30)),
        *(bot.send_message(alice.id, f"p{i}") for i in range(5)),
    )
    assert fake.stats.retry_after == 0, fake.stats.refusals
    assert fake.stats.calls["sendMessage"] == 35


async def test_a_call_with_prepaid_tokens_takes_none_again(
    fake: FakeTelegram, bot: Bot, outgoing: Outgoing, limiter: FloodLimiter, alice: SimUser
) -> None:
    """``Outgoing.call`` carries the options explicitly: a call made with the
    ticket of its chat uses the prepaid tokens (settling gives nothing back);
    a direct call, or a call for another chat, takes its own."""
    chat_bucket = limiter.keys.rate_chat(alice.id)

    async def tokens() -> float:
        return await free(limiter, chat_bucket)

    ticket = await outgoing.prepay(Address(alice.id), Priority.DEFERRED)
    paid = await tokens()  # one taken from the full bucket
    options = CallOptions(Priority.DEFERRED, ticket)
    await outgoing.call(bot, SendMessage(chat_id=alice.id, text="v1"), options)
    assert ticket.used
    assert await tokens() == pytest.approx(paid)
    await outgoing.settle(ticket)  # used: nothing goes back
    assert await tokens() == pytest.approx(paid)
    other = Prepaid(Address(alice.id + 1))  # another chat's ticket pays nothing here
    await outgoing.call(bot, SendMessage(chat_id=alice.id, text="v2"), CallOptions(prepaid=other))
    assert await tokens() == pytest.approx(paid - 1)
    assert not other.used
    assert [o["text"] for o in fake.world.outbox] == ["v1", "v2"]


async def test_tokens_prepaid_long_before_the_call_are_taken_again_at_the_call(
    fake: FakeTelegram,
    bot: Bot,
    outgoing: Outgoing,
    alice: SimUser,
    clock: ManualClock,
    vtime: VirtualTime,
) -> None:
    """A prepaid ticket held back (waiting for its message's lock, or for
    another process's edit of that message) must not be spent late: the
    limiter counted its token when it was paid, so the bucket refilled behind
    it, and Telegram counts the message when it arrives.  Two tickets paid at
    0 s and used at 2 s, right after two fresh messages, were four messages
    within a moment -- a 429 (the fleet test of two processes saw one)."""
    early = [await outgoing.prepay(Address(alice.id), Priority.DEFERRED) for _ in range(2)]
    clock.advance(2.0)  # the chat's bucket is full again, as far as the limiter knows
    await vtime.run(*(bot.send_message(alice.id, f"now {i}") for i in range(2)))
    await vtime.run(
        *(
            outgoing.call(
                bot, SendMessage(chat_id=alice.id, text=f"late {i}"), CallOptions(prepaid=t)
            )
            for i, t in enumerate(early)
        )
    )
    assert fake.stats.retry_after == 0, fake.stats.refusals
    texts = sorted(m.text or "" for m in bot_messages(fake, alice.chat))
    assert texts == ["late 0", "late 1", "now 0", "now 1"]


@pytest.mark.parametrize("kind", ["sends", "edits"])
async def test_a_message_counts_from_when_telegram_answered(
    fake: FakeTelegram,
    bot: Bot,
    outgoing: Outgoing,
    alice: SimUser,
    clock: ManualClock,
    vtime: VirtualTime,
    kind: str,
) -> None:
    """The limiter counts a message when its tokens are taken; Telegram counts
    it when it arrives.  Here the first of four writes to a chat spends 1.5 s on
    the way (a loaded event loop, a slow network: the fleet test's 429s on a busy
    CI machine).  Counted from its take, the fourth went 4 s after it -- 2.5 s
    after Telegram counted it, the fourth in 3 s: a 429.  Counted again when
    Telegram answered (its entry moved to then), the fourth waits its turn."""
    sent = []
    if kind == "edits":
        sent = [await bot.send_message(alice.id, f"m{i}") for i in range(4)]
        clock.advance(60)
    late = [True]

    async def on_the_way(make_request: Any, bot: Bot, method: Any) -> Any:
        if late and method.__api_method__ in ("sendMessage", "editMessageText"):
            late.clear()
            clock.advance(1.5)  # the first write reaches Telegram 1.5 s late
        return await make_request(bot, method)

    bot.session.middleware(on_the_way)  # inside the outgoing middleware: after the take
    if kind == "sends":
        await vtime.run(*(bot.send_message(alice.id, f"m{i}") for i in range(4)))
    else:
        await vtime.run(
            *(
                bot.edit_message_text(f"e{i}", chat_id=alice.id, message_id=m.message_id)
                for i, m in enumerate(sent)
            )
        )
    assert not late
    assert fake.stats.retry_after == 0, fake.stats.refusals
    assert outgoing.stats.retry_after == 0
    texts = sorted(m.text or "" for m in bot_messages(fake, alice.chat))
    assert texts == [f"{'m' if kind == 'sends' else 'e'}{i}" for i in range(4)]


async def test_429_is_retried_after_retry_after(
    fake: FakeTelegram, bot: Bot, alice: SimUser, sleep: Callable[[float], Awaitable[None]]
) -> None:
    """Without the limiter the fake answers 429; the middleware sleeps and retries."""
    slept: list[float] = []

    async def recording_sleep(seconds: float) -> None:
        slept.append(seconds)
        await sleep(seconds)

    out = install(bot, None, sleep=recording_sleep)
    for i in range(5):
        await bot.send_message(alice.id, f"m{i}")
    # 3 in any 3 s (#28): the 4th waits for the window, then the 5th fits too
    assert fake.stats.retry_after == 1
    assert out.stats.retry_after == 1
    assert out.stats.sent == 5
    assert slept == [3]
    assert [m.text for m in bot_messages(fake, alice.chat)] == [f"m{i}" for i in range(5)]


async def test_429_retries_are_bounded(fake: FakeTelegram, bot: Bot, alice: SimUser) -> None:
    from aiogram.exceptions import TelegramRetryAfter

    async def no_sleep(seconds: float) -> None:  # the clock never moves
        await asyncio.sleep(0)

    out = install(bot, None, sleep=no_sleep, max_retries=2)
    for i in range(3):
        await bot.send_message(alice.id, f"m{i}")
    with pytest.raises(TelegramRetryAfter):
        await bot.send_message(alice.id, "too many")
    assert out.stats.retry_after == 3


async def test_403_is_told(
    fake: FakeTelegram, bot: Bot, outgoing: Outgoing, forbidden_calls: Closures
) -> None:
    bob = fake.add_user("Bob")  # never pressed Start
    with pytest.raises(TelegramForbiddenError):
        await bot.send_message(bob.id, "your cards")
    assert forbidden_calls.read() == [(bob.id, Forbidden.NOT_STARTED)]
    assert outgoing.stats.forbidden == 1
    # Telegram's other answers, told apart by their descriptions (#38)
    bob.start()
    bob.block()
    with pytest.raises(TelegramForbiddenError):
        await bot.send_message(bob.id, "your cards")
    bob.unblock()
    bob.deactivate()
    with pytest.raises(TelegramForbiddenError):
        await bot.send_message(bob.id, "your cards")
    assert forbidden_calls.read()[1:] == [
        (bob.id, Forbidden.BLOCKED),
        (bob.id, Forbidden.DEACTIVATED),
    ]
    assert outgoing.stats.forbidden == 3
    # callback answers and the like pass untouched (and unlimited)
    await bot.get_me()
    assert outgoing.stats.sent == 0


async def test_a_403_is_told_as_data_never_a_call_up(
    fake: FakeTelegram, bot: Bot, limiter: FloodLimiter
) -> None:
    """#39: the middleware calls nothing above it -- the 403 is an event on its
    queue when the call raises, a group's as :class:`Kicked`."""
    bob = fake.add_user("Bob")
    out = install(bot, limiter)
    with pytest.raises(TelegramForbiddenError):
        await bot.send_message(bob.id, "x")
    assert out.events.drain() == [PrivateForbidden(bob.id, Forbidden.NOT_STARTED)]


# ---------------------------------------------------------------- Delivery
async def test_delivery_send_and_forbidden(
    fake: FakeTelegram,
    delivery: Delivery,
    alice: SimUser,
    forbidden_calls: Closures,
) -> None:
    msg = await delivery.send(alice.id, "<b>hi</b>", kb("x"))
    assert msg is not None
    assert bot_messages(fake, alice.chat)[0].text == "hi"
    alice.block()
    assert await delivery.send(alice.id, "hi again") is None
    assert await delivery.edit(Address(alice.id, msg.message_id), "changed", kb("x")) is None
    assert forbidden_calls.read() == [(alice.id, Forbidden.BLOCKED)] * 2
    assert delivery.stats.forbidden == 2


async def test_now_edits_at_once_and_keeps_the_keyboard(
    fake: FakeTelegram, delivery: Delivery, alice: SimUser
) -> None:
    msg = await delivery.send(alice.id, "v1", kb("play"))
    assert msg is not None
    assert (
        await delivery.edit(Address(alice.id, msg.message_id), "v2", kb("play")) == msg.message_id
    )
    shown = bot_messages(fake, alice.chat)[0]
    assert shown.text == "v2"
    assert shown.button_texts == ["play"]
    await delivery.edit(Address(alice.id, msg.message_id), "v2", kb("play"))  # no-op
    assert shown.edits == 1
    assert delivery.stats.noop == 1


async def test_soon_edits_coalesce_to_the_newest(
    fake: FakeTelegram, delivery: Delivery, alice: SimUser
) -> None:
    msg = await delivery.send(alice.id, "v0", kb("a"))
    assert msg is not None
    for i in range(1, 6):
        await delivery.edit(Address(alice.id, msg.message_id), f"v{i}", kb("a"), Urgency.SOON)
    assert bot_messages(fake, alice.chat)[0].text == "v0"  # nothing yet
    await delivery.flush()
    shown = bot_messages(fake, alice.chat)[0]
    assert shown.text == "v5"
    assert shown.edits == 1
    assert delivery.stats.coalesced == 4
    assert delivery.stats.edited == 1
    assert fake.stats.calls["editMessageText"] == 1


async def test_scheduler_sends_pending_edits_when_due(
    fake: FakeTelegram, delivery: Delivery, alice: SimUser, clock: ManualClock
) -> None:
    msg = await delivery.send(alice.id, "v0")
    assert msg is not None
    start = clock.now
    await delivery.edit(Address(alice.id, msg.message_id), "v1", urgency=Urgency.SOON)
    await delivery.edit(Address(alice.id, msg.message_id), "v2", urgency=Urgency.SOON)
    await fake.world.wait_for(lambda: bot_messages(fake, alice.chat)[0].text == "v2")
    assert clock.now >= start + delivery.config.soon_delay  # it waited on the (manual) clock
    assert bot_messages(fake, alice.chat)[0].edits == 1


async def test_table_edits_are_throttled(
    fake: FakeTelegram, delivery: Delivery, alice: SimUser, clock: ManualClock
) -> None:
    group = alice.create_group("Table")
    alice.add_bot_to(group)
    msg = await delivery.send(group.id, "t0")
    assert msg is not None
    sent_at: list[float] = []
    for round_no in range(1, 4):
        for i in range(3):
            await delivery.edit(
                Address(group.id, msg.message_id), f"t{round_no}.{i}", urgency=Urgency.TABLE
            )
        want = f"t{round_no}.2"

        def shows(w: str = want) -> bool:
            return bot_messages(fake, group)[0].text == w

        await fake.world.wait_for(shows)
        sent_at.append(clock.now)
    assert bot_messages(fake, group)[0].edits == 3
    assert delivery.stats.coalesced == 6
    assert all(b - a >= delivery.config.table_delay for a, b in itertools.pairwise(sent_at))
    assert fake.stats.retry_after == 0, fake.stats.refusals


async def test_a_table_edit_with_its_own_gap_keeps_it_and_the_reserve(
    fake: FakeTelegram,
    delivery: Delivery,
    alice: SimUser,
    clock: ManualClock,
    limiter: FloodLimiter,
) -> None:
    """A group's table while hands are in the group (#24): its edits go at most
    once every ``gap`` seconds -- not the delivery's table_delay -- only the
    newest content; and it holds back for the group's reserve that long too."""
    group = alice.create_group("Table")
    alice.add_bot_to(group)
    msg = await delivery.send(group.id, "t0")
    assert msg is not None
    gap = 3 * delivery.config.table_delay
    sent_at: list[float] = []
    for round_no in range(1, 4):
        for i in range(3):
            await delivery.edit(
                Address(group.id, msg.message_id),
                f"t{round_no}.{i}",
                urgency=Urgency.TABLE,
                gap=gap,
            )
        want = f"t{round_no}.2"

        def shows(w: str = want) -> bool:
            return bot_messages(fake, group)[0].text == w

        await fake.world.wait_for(shows)
        sent_at.append(clock.now)
    assert bot_messages(fake, group)[0].edits == 3
    assert all(b - a >= gap for a, b in itertools.pairwise(sent_at)), sent_at
    # the group's minute short of its reserve: the table waits, up to its gap
    window = limiter.config.per_group
    clock.advance(window.seconds)  # those left the minute
    sends = [await delivery.send(group.id, f"g{i}") for i in range(window.limit - window.reserve)]
    assert all(s is not None for s in sends)
    start = clock.now
    await delivery.edit(Address(group.id, msg.message_id), "held", urgency=Urgency.TABLE, gap=gap)
    await fake.world.wait_for(lambda: bot_messages(fake, group)[0].text == "held")
    assert clock.now - start >= gap - 1e-6  # held past the delivery's max_hold of 4 s
    assert delivery.config.max_hold < gap
    assert fake.stats.retry_after == 0, fake.stats.refusals


async def test_later_edits_are_throttled_per_message(
    fake: FakeTelegram, delivery: Delivery, alice: SimUser, clock: ManualClock
) -> None:
    """A watcher's message: at most once every later_delay, only the newest content."""
    msg = await delivery.send(alice.id, "w0")
    assert msg is not None
    sent_at: list[float] = []
    for round_no in range(1, 4):
        for i in range(3):
            await delivery.edit(
                Address(alice.id, msg.message_id), f"w{round_no}.{i}", urgency=Urgency.LATER
            )
        want = f"w{round_no}.2"

        def shows(w: str = want) -> bool:
            return bot_messages(fake, alice.chat)[0].text == w

        await fake.world.wait_for(shows)
        sent_at.append(clock.now)
    assert bot_messages(fake, alice.chat)[0].edits == 3
    assert delivery.stats.coalesced == 6
    assert delivery.config.later_delay > delivery.config.soon_delay
    assert all(b - a >= delivery.config.later_delay for a, b in itertools.pairwise(sent_at))


async def test_soon_overrides_a_pending_later(
    fake: FakeTelegram, delivery: Delivery, alice: SimUser, clock: ManualClock
) -> None:
    """A watcher who now has to move: his pending edit goes out within soon_delay."""
    msg = await delivery.send(alice.id, "w0")
    assert msg is not None
    await delivery.edit(Address(alice.id, msg.message_id), "w1", urgency=Urgency.LATER)
    await fake.world.wait_for(lambda: bot_messages(fake, alice.chat)[0].text == "w1")
    start = clock.now
    await delivery.edit(Address(alice.id, msg.message_id), "w2", urgency=Urgency.LATER)
    await delivery.edit(Address(alice.id, msg.message_id), "your move", urgency=Urgency.SOON)
    await fake.world.wait_for(lambda: bot_messages(fake, alice.chat)[0].text == "your move")
    assert clock.now - start < delivery.config.later_delay
    assert bot_messages(fake, alice.chat)[0].edits == 2


async def test_watchers_edits_leave_the_chats_reserve_to_urgent_ones(
    fake: FakeTelegram,
    delivery: Delivery,
    alice: SimUser,
    clock: ManualClock,
    limiter: FloodLimiter,
) -> None:
    """A watcher's coalesced update never takes the tokens a press's own answer
    needs: it waits for the headroom, and newer content replaces it meanwhile."""
    reserve = limiter.config.per_chat.reserve
    assert reserve >= 1
    msg = await delivery.send(alice.id, "v0")
    assert msg is not None
    await delivery.edit(
        Address(alice.id, msg.message_id), "v1", urgency=Urgency.NOW
    )  # bucket now empty
    start = clock.now
    await delivery.edit(Address(alice.id, msg.message_id), "w1", urgency=Urgency.LATER)
    await delivery.edit(Address(alice.id, msg.message_id), "w2", urgency=Urgency.LATER)
    await fake.world.wait_for(lambda: bot_messages(fake, alice.chat)[0].text == "w2")
    # it went only once the window had 1 + reserve free: the send and the edit left it
    assert clock.now - start >= limiter.config.per_chat.seconds - 1e-6
    assert bot_messages(fake, alice.chat)[0].edits == 2
    assert await free(limiter, limiter.keys.rate_chat(alice.id)) >= reserve
    # an urgent edit right after still finds a token: no wait on the limiter
    waits = delivery.stats.waits
    await delivery.edit(Address(alice.id, msg.message_id), "v2", urgency=Urgency.NOW)
    assert bot_messages(fake, alice.chat)[0].text == "v2"
    assert delivery.stats.waits == waits


async def test_now_supersedes_pending_and_order_is_kept(
    fake: FakeTelegram, delivery: Delivery, alice: SimUser
) -> None:
    msg = await delivery.send(alice.id, "v0")
    assert msg is not None
    await delivery.edit(Address(alice.id, msg.message_id), "old", urgency=Urgency.SOON)
    await delivery.edit(Address(alice.id, msg.message_id), "new", urgency=Urgency.NOW)
    await delivery.flush()
    shown = bot_messages(fake, alice.chat)[0]
    assert shown.text == "new"
    assert shown.edits == 1
    assert delivery.stats.coalesced == 1
    assert [o["text"] for o in fake.world.outbox] == ["v0", "new"]


async def test_a_queued_update_takes_its_tokens_first_then_the_newest_content(
    fake: FakeTelegram,
    delivery: Delivery,
    outgoing: Outgoing,
    limiter: FloodLimiter,
    alice: SimUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A due update waiting for flood tokens holds no lock and no content yet: the
    player's own NOW edit of that message goes out meanwhile, and what changed
    while it waited goes out in ONE edit, paid with the tokens it queued for."""
    msg = await delivery.send(alice.id, "v0")
    assert msg is not None
    gate = asyncio.Event()
    queued = asyncio.Event()
    real_prepay = outgoing.prepay

    async def slow_prepay(
        to: Address, priority: Priority = Priority.URGENT, **where: Any
    ) -> Prepaid:
        assert priority is Priority.DEFERRED  # a queued update lets urgent calls first
        queued.set()
        await gate.wait()  # as if in the overall line behind urgent calls
        return await real_prepay(to, priority, **where)

    monkeypatch.setattr(outgoing, "prepay", slow_prepay)
    await delivery.edit(Address(alice.id, msg.message_id), "s1", urgency=Urgency.SOON)
    await asyncio.wait_for(queued.wait(), 5)
    await delivery.edit(Address(alice.id, msg.message_id), "s2", urgency=Urgency.SOON)
    await asyncio.wait_for(delivery.edit(Address(alice.id, msg.message_id), "n1", kb("x")), 5)
    assert bot_messages(fake, alice.chat)[0].text == "n1"  # not behind the queued one
    await delivery.edit(Address(alice.id, msg.message_id), "s3", urgency=Urgency.SOON)
    chat_bucket = limiter.keys.rate_chat(alice.id)
    tokens = await free(limiter, chat_bucket)
    gate.set()
    await delivery.flush()
    shown = bot_messages(fake, alice.chat)[0]
    assert shown.text == "s3"
    assert shown.edits == 2
    assert [o["text"] for o in fake.world.outbox] == ["v0", "n1", "s3"]
    # the edit used the tokens it queued for: one token in all, not two
    assert await free(limiter, chat_bucket) == pytest.approx(tokens - 1)


async def test_an_overtaken_or_noop_queued_update_gives_its_tokens_back(
    fake: FakeTelegram,
    delivery: Delivery,
    outgoing: Outgoing,
    limiter: FloodLimiter,
    alice: SimUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    msg = await delivery.send(alice.id, "v0")
    assert msg is not None
    gate = asyncio.Event()
    queued = asyncio.Event()
    real_prepay = outgoing.prepay

    async def slow_prepay(
        to: Address, priority: Priority = Priority.URGENT, **where: Any
    ) -> Prepaid:
        ticket = await real_prepay(to, priority, **where)  # the tokens are taken...
        queued.set()
        await gate.wait()  # ...and meanwhile the player's own edit goes out
        return ticket

    monkeypatch.setattr(outgoing, "prepay", slow_prepay)
    chat_bucket = limiter.keys.rate_chat(alice.id)

    async def tokens() -> float:
        return await free(limiter, chat_bucket)

    await delivery.edit(Address(alice.id, msg.message_id), "s1", urgency=Urgency.SOON)
    await asyncio.wait_for(queued.wait(), 5)
    await delivery.edit(Address(alice.id, msg.message_id), "n1")  # newer: s1 is overtaken
    before = await tokens()
    gate.set()
    await delivery.flush()
    assert bot_messages(fake, alice.chat)[0].text == "n1"
    assert await tokens() == pytest.approx(before + 1)  # s1's token came back
    # an update that would change nothing: its tokens come back too
    queued.clear()
    gate.clear()
    await delivery.edit(Address(alice.id, msg.message_id), "n1", urgency=Urgency.SOON)
    await asyncio.wait_for(queued.wait(), 5)
    before = await tokens()
    gate.set()
    await delivery.flush()
    assert await tokens() == pytest.approx(before + 1)
    assert [o["text"] for o in fake.world.outbox] == ["v0", "n1"]


async def test_a_queued_update_survives_a_failed_token_request(
    fake: FakeTelegram,
    delivery: Delivery,
    outgoing: Outgoing,
    alice: SimUser,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Redis fails while the update asks for its tokens: it stays pending and goes
    out on the next try (it used to be stuck as 'firing' for good)."""
    msg = await delivery.send(alice.id, "v0")
    assert msg is not None
    real_prepay = outgoing.prepay
    failed = asyncio.Event()

    async def flaky_prepay(
        to: Address, priority: Priority = Priority.URGENT, **where: Any
    ) -> Prepaid:
        if not failed.is_set():
            failed.set()
            raise ConnectionError("redis went away")
        return await real_prepay(to, priority, **where)

    monkeypatch.setattr(outgoing, "prepay", flaky_prepay)
    await delivery.edit(Address(alice.id, msg.message_id), "s1", urgency=Urgency.SOON)
    await asyncio.wait_for(failed.wait(), 5)
    await delivery.edit(Address(alice.id, msg.message_id), "s2", urgency=Urgency.SOON)
    await delivery.flush()
    assert bot_messages(fake, alice.chat)[0].text == "s2"
    assert fake.world.outbox[-1]["text"] == "s2"


async def test_gone_message_is_sent_anew(
    fake: FakeTelegram, bot: Bot, delivery: Delivery, alice: SimUser, clock: ManualClock
) -> None:
    msg = await delivery.send(alice.id, "v0", kb("a"))
    assert msg is not None
    await bot.delete_message(alice.id, msg.message_id)
    clock.advance(5)
    new_id = await delivery.edit(Address(alice.id, msg.message_id), "v1", kb("a"))
    assert new_id is not None
    assert new_id != msg.message_id
    assert delivery.events.drain() == [Replaced(alice.id, msg.message_id, new_id)]
    # later edits of the old id reach the new message
    clock.advance(5)
    await delivery.edit(Address(alice.id, msg.message_id), "v2", kb("a"), Urgency.SOON)
    await delivery.flush()
    [shown] = bot_messages(fake, alice.chat)
    assert shown.message_id == new_id
    assert shown.text == "v2"
    assert shown.button_texts == ["a"]


async def test_gone_message_in_a_topic_is_sent_anew_there(
    fake: FakeTelegram, bot: Bot, delivery: Delivery, alice: SimUser, clock: ManualClock
) -> None:
    """A forum group's table message deleted: sent anew in its topic, which its
    address carries (``Address.thread``: no part of the message's identity --
    an edit names the message by id alone)."""
    group = alice.create_group("Games", forum=True)
    alice.add_bot_to(group)
    topic = alice.create_topic(group, "Durak")
    msg = await delivery.send(group.id, "v0", kb("a"), thread=topic)
    assert msg is not None
    assert group.messages[msg.message_id].thread_id == topic
    await bot.delete_message(group.id, msg.message_id)
    clock.advance(5)
    to = Address(group.id, msg.message_id, thread=topic)
    assert to == Address(group.id, msg.message_id)
    new_id = await delivery.edit(to, "v1", kb("a"))
    assert new_id is not None
    assert new_id != msg.message_id
    assert group.messages[new_id].thread_id == topic
    assert group.messages[new_id].text == "v1"


async def test_the_overall_line_serves_urgent_calls_first() -> None:
    """Waiters for the overall bucket: urgent before deferred, FIFO within each,
    a cancelled waiter drops out, the last release frees the line."""
    urgent, deferred = Priority.URGENT, Priority.DEFERRED
    line = WaitingLine()
    await line.acquire(urgent)  # the head
    served: list[str] = []

    async def wait(name: str, priority: Priority) -> None:
        await line.acquire(priority)
        served.append(name)
        line.release()

    tasks = [
        asyncio.create_task(wait(name, priority))
        for name, priority in [("d1", deferred), ("u1", urgent), ("d2", deferred), ("u2", urgent)]
    ]
    gone = asyncio.create_task(wait("gone", urgent))
    await asyncio.sleep(0)
    gone.cancel()
    line.release()
    await asyncio.gather(*tasks)
    assert served == ["u1", "u2", "d1", "d2"]
    assert gone.cancelled()
    await asyncio.wait_for(line.acquire(deferred), 1)  # free again: no waiting


async def test_a_deferred_waiter_is_not_starved() -> None:
    """Past max_defer seconds in the line, the oldest deferred waiter goes before
    newer urgent ones."""
    clock = ManualClock()
    line = WaitingLine(max_defer=4.0, clock=clock)
    await line.acquire(Priority.URGENT)
    served: list[str] = []

    async def wait(name: str, priority: Priority) -> None:
        await line.acquire(priority)
        served.append(name)

    d = asyncio.create_task(wait("deferred", Priority.DEFERRED))
    await asyncio.sleep(0)
    clock.advance(5.0)
    u = asyncio.create_task(wait("urgent", Priority.URGENT))
    await asyncio.sleep(0)
    line.release()
    await d
    assert served == ["deferred"]
    line.release()
    await u
    assert served == ["deferred", "urgent"]


async def test_settled_tells_when_the_content_or_newer_went_out(
    fake: FakeTelegram, delivery: Delivery, alice: SimUser, clock: ManualClock
) -> None:
    """What a render's mark waits for (:mod:`telegram_bot.state.pending_renders`): a
    pending edit is not settled; a coalesced one is once the newer content went
    out; a failed one is settled False."""
    msg = await delivery.send(alice.id, "v0")
    assert msg is not None
    mid = msg.message_id
    clock.advance(5)
    await delivery.edit(Address(alice.id, mid), "v1", None, Urgency.TABLE)
    first = delivery.settled(Address(alice.id, mid))
    await delivery.edit(Address(alice.id, mid), "v2", None, Urgency.TABLE)
    second = delivery.settled(Address(alice.id, mid))
    await asyncio.sleep(0)
    assert not first.done()
    assert not second.done()
    await delivery.flush()
    assert first.result() is True
    assert second.result() is True
    assert [m.text for m in bot_messages(fake, alice.chat)] == ["v2"]
    assert delivery.settled(Address(alice.id, mid)).result() is True  # nothing asked since
    clock.advance(5)
    await delivery.edit(
        Address(alice.id, mid), "x" * 5000, None, Urgency.SOON
    )  # Telegram refuses it
    failed = delivery.settled(Address(alice.id, mid))
    await delivery.flush()
    assert failed.result() is False


async def test_a_watchers_deferred_edit_costs_few_redis_commands(
    fake: FakeTelegram,
    delivery: Delivery,
    alice: SimUser,
    clock: ManualClock,
    limiter: FloodLimiter,
    redis_url: str,
    redis_prefix: str,
) -> None:
    """#39 point 1: at a human pace each watcher's redraw is a deferred edit on
    its own.  It cost a headroom look (a script), its window's take (another),
    its digest judged apart (a third) and its release (a fourth) -- 17
    commands or so a press of another player."""
    msg = await delivery.send(alice.id, "w0")
    assert msg is not None
    to = Address(alice.id, msg.message_id)

    async def watched(text: str) -> None:
        clock.advance(limiter.config.per_chat.seconds + delivery.config.later_delay)
        await delivery.edit(to, text, urgency=Urgency.LATER, version=f"t#{text}")
        assert await delivery.settled(to)  # out, answered, its lease released
        assert bot_messages(fake, alice.chat)[0].text == text

    await watched("1")  # the scripts loaded, the chat's keys made
    seen = await monitored(redis_url, redis_prefix, lambda: watched("2"))
    assert bot_messages(fake, alice.chat)[0].edits == 2
    assert fake.stats.retry_after == 0
    # the overall lease (its last one is stale by now), then one script for
    # the look, the take and the edit's judging, and the release (it was 5
    # scripts, 20 commands: a look, a take, the judging apart)
    assert seen.count("EVALSHA") == 3, seen
    assert len(seen) <= 15, seen
