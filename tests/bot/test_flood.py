"""The shared outgoing flood limiter (telegram_bot.delivery.flood.limiter) on the real Redis,
driven by a fake clock passed into the script: sliding windows (#28)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import replace

import pytest
import redis.asyncio as aredis

from sandbox.fake_api.limits import FakeFloodControl, RateLimits
from tables import LiveConfig, TableService
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.flood import full, lease
from telegram_bot.delivery.flood.gate import (
    LAST_RESORT,
    CallOptions,
    FloodGate,
    OutgoingStats,
    Receipt,
)
from telegram_bot.delivery.flood.limiter import (
    BUSY,
    NOOP,
    STALE,
    EditTicket,
    FloodConfig,
    FloodLimiter,
    Verdict,
    Window,
)
from tests.bot.flood_kit import last_digest, monitored
from tests.tables.conftest import FakeClock

PRIVATE = 42
GROUP = -100123


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def rl_config() -> FloodConfig:
    return FloodConfig()


@pytest.fixture
async def make_limiter(
    redis_url: str, redis_prefix: str, rl_config: FloodConfig, clock: FakeClock
) -> AsyncIterator[Callable[..., FloodLimiter]]:
    """Limiters, each on its own table service and Redis client (like separate
    bot processes), under the test's prefix."""
    made: list[TableService] = []

    def make(config: FloodConfig | None = None) -> FloodLimiter:
        svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
        made.append(svc)
        return FloodLimiter(svc.kv, config or rl_config, clock=clock)

    yield make
    for svc in made:
        await svc.aclose()


@pytest.fixture
def limiter(make_limiter: Callable[..., FloodLimiter]) -> FloodLimiter:
    return make_limiter()


async def entries(limiter: FloodLimiter, key: str) -> list[tuple[str, float]]:
    """A window's entries (name, score), oldest first (not the records below 0:
    the unanswered calls and the key's '~', #39)."""
    script = limiter.kv.script(
        "return redis.call('ZRANGEBYSCORE', KEYS[1], 0, '+inf', 'WITHSCORES')"
    )
    raw = await script([key], [])
    names = [r.decode() if isinstance(r, bytes) else str(r) for r in raw]
    return [(names[i], float(names[i + 1])) for i in range(0, len(names), 2)]


async def counting(limiter: FloodLimiter, key: str, seconds: float) -> list[tuple[str, float]]:
    """The entries of a window of ``seconds`` that count now (a stale one may
    linger until an add trims it, #39: one add in eight)."""
    now = float(limiter.clock())
    return [(n, at) for n, at in await entries(limiter, key) if at > now - seconds]


async def takes(limiter: FloodLimiter, chat: int | None, n: int = 100) -> int:
    """How many acquires in a row succeed (stops at the first refusal)."""
    for i in range(n):
        if await limiter.acquire(chat) > 0:
            return i
    return n


async def test_private_chat_window(limiter: FloodLimiter, clock: FakeClock) -> None:
    window = limiter.config.per_chat
    assert (window.limit, window.seconds) == (3, 4.0)
    assert await limiter.acquire(PRIVATE) == 0
    clock.advance(1.0)
    assert await takes(limiter, PRIVATE) == 2  # the window is full
    wait = await limiter.acquire(PRIVATE)
    assert wait == pytest.approx(3.0)  # until the first entry leaves
    clock.advance(wait / 2)
    assert await limiter.acquire(PRIVATE) == pytest.approx(wait / 2)
    clock.advance(wait / 2)
    assert await limiter.acquire(PRIVATE) == 0
    assert await limiter.acquire(PRIVATE) == pytest.approx(1.0)  # the next two at +1 s
    # A long pause empties the window: its limit again, never more.
    clock.advance(3600)
    assert await takes(limiter, PRIVATE) == window.limit


async def test_chats_are_independent_but_share_the_overall_window(
    make_limiter: Callable[..., FloodLimiter], rl_config: FloodConfig, clock: FakeClock
) -> None:
    config = FloodConfig(overall=Window(5, 1.0), per_chat=Window(2, 2.0))
    lim = make_limiter(config)
    assert await takes(lim, 1) == 2
    assert await takes(lim, 2) == 2
    # chat 3 has room, the overall window has one left
    assert await takes(lim, 3) == 1
    wait = await lim.acquire(4)
    assert wait == pytest.approx(1.0)  # the five entries leave together
    clock.advance(wait)
    assert await lim.acquire(4) == 0


async def test_headroom_keeps_the_reserve_for_urgent_messages(
    make_limiter: Callable[..., FloodLimiter], rl_config: FloodConfig, clock: FakeClock
) -> None:
    config = FloodConfig(
        overall=Window(100, 1.0, reserve=10),
        per_chat=Window(3, 3.0, reserve=1),
        lease=1,  # the overall entries one at a time: the arithmetic below is exact
    )
    lim = make_limiter(config)
    keys = lim.keys
    assert await lim.headroom(PRIVATE) == (0, 0, 0)  # 3 free: 1 + the reserve of 1
    assert await lim.acquire(PRIVATE) == 0
    assert (await lim.headroom(PRIVATE)).wait == 0  # 2 free
    assert await lim.acquire(PRIVATE) == 0
    before = await entries(lim, keys.rate_chat(PRIVATE))
    # 1 free: a deferrable message holds back until the first entry leaves; an
    # urgent one goes now
    room = await lim.headroom(PRIVATE)  # the chat's reserve
    assert room.overall == 0
    assert room.chat == pytest.approx(3.0)
    assert await entries(lim, keys.rate_chat(PRIVATE)) == before  # nothing counted
    clock.advance(0.25)
    assert (await lim.headroom(PRIVATE)).wait == pytest.approx(2.75)
    assert await lim.acquire(PRIVATE) == 0
    # the overall reserve counts too: other chats fill the overall window
    for chat in range(1000, 1089):
        assert await lim.acquire(chat) == 0
    # 8 free overall, 1 + 10 needed: three entries at the window's pace (100/s)
    room = await lim.headroom(2000)
    assert room.overall == pytest.approx(3 / 100)
    assert room.chat == 0
    # a refusal says which window is full: the overall one here, a chat's below
    for chat in range(3000, 3100):
        if (verdict := await lim.take(chat)).wait > 0:
            break
    assert verdict.overall
    assert verdict.wait == pytest.approx(0.75)  # the first entry leaves at +1 s
    clock.advance(60)
    for _ in range(3):  # the chat's limit
        assert (await lim.take(PRIVATE))[:2] == (0, False)
    verdict = await lim.take(PRIVATE)
    assert not verdict.overall
    assert verdict.wait > 0
    with pytest.raises(ValueError, match="0 <= reserve <= limit - 1 needed"):
        Window(2, 1.0, reserve=2)


async def test_a_look_at_the_headroom_takes_the_token_in_the_same_script(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """#39 point 1: a deferred edit's look at its room and gap, and its take,
    are one script -- taken only where :meth:`FloodLimiter.headroom` says go
    (the reserve left free, the message's gap over, now its last edit); held
    back, nothing is counted, as the look told."""
    config = FloodConfig(
        overall=Window(100, 1.0, reserve=10), per_chat=Window(3, 3.0, reserve=1), lease=1
    )
    lim, other = make_limiter(config), make_limiter(config)
    key, to = lim.keys.rate_chat(PRIVATE), Address(PRIVATE, 7)
    room, taken = await lim.take_with_room(to, 1.0)  # 3 free: 1 + the reserve of 1
    assert room.wait == room.message == 0
    assert taken is not None
    assert taken.stamp is not None
    assert len(await entries(lim, key)) == 1
    await lim.stamp(taken.stamp)  # answered at once
    # now its last edit: another process's edit of it waits out its gap
    assert (await other.headroom(to, 1.0)).message == pytest.approx(1.0)
    room, again = await lim.take_with_room(to, 1.0)
    assert again is None
    assert room.message == pytest.approx(1.0)
    assert len(await entries(lim, key)) == 1  # nothing counted
    clock.advance(1.0)
    room, taken = await lim.take_with_room(to, 1.0)  # 2 free
    assert taken is not None
    assert taken.stamp is not None
    await lim.stamp(taken.stamp)
    before = await entries(lim, key)
    # 1 free: the chat's reserve holds it back as the look would
    clock.advance(1.0)
    look = await lim.headroom(Address(PRIVATE, 8), 1.0)
    room, none = await lim.take_with_room(Address(PRIVATE, 8), 1.0)
    assert none is None
    assert room == look
    assert room.chat == pytest.approx(1.0)
    assert await entries(lim, key) == before
    # its overall entry went back to the allowance (a lease of one, #28)
    assert len(lim.lease.free) + len(lim.lease.unused) == 1


async def test_a_look_that_takes_the_token_judges_the_edit_in_the_same_script(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """#39 point 1: a deferred edit's look and take judge its content too, as
    :meth:`FloodLimiter.admit_edit` would: admitted, its lease taken and its
    content pending until released; stale, a no-op or another call's lease:
    nothing taken (the overall entry back, no window counted)."""
    config = FloodConfig(
        overall=Window(100, 1.0, reserve=10), per_chat=Window(3, 3.0, reserve=1), lease=1
    )
    lim, other = make_limiter(config), make_limiter(config)
    key, to = lim.keys.rate_chat(PRIVATE), Address(PRIVATE, 7)
    edit = EditTicket(to, "t1", "m1", "tab#2", "me.1", tracked=True)
    room, taken = await lim.take_with_room(to, 1.0, edit)
    assert room.wait == room.message == 0
    assert taken is not None
    assert taken.wait == 0
    assert taken.stamp is not None
    assert len(await entries(lim, key)) == 1
    # in flight: another call waits for its lease, and its content is unknown
    assert await edit_wait(other, replace(edit, owner="you.1")) == BUSY
    assert await last_digest(lim, to) is None
    assert await lim.release_edit(to, "me.1", taken.stamp)
    assert await last_digest(lim, to) == "t1:m1"
    clock.advance(1.0)  # its gap is over
    for judged, verdict in (
        (replace(edit, owner="me.2"), NOOP),  # shows that already
        (EditTicket(to, "t0", "m1", "tab#1", "me.3", tracked=True), STALE),  # older
    ):
        room, taken = await lim.take_with_room(to, 1.0, judged)
        assert taken is not None
        assert taken.wait == verdict
        assert len(await entries(lim, key)) == 1  # nothing counted
    newer = EditTicket(to, "t2", "m1", "tab#3", "me.4", tracked=True)
    assert await edit_wait(other, replace(newer, owner="you.2")) == 0  # another's lease
    room, taken = await lim.take_with_room(to, 0.0, newer)
    assert taken is not None
    assert taken.wait == BUSY
    assert len(await entries(lim, key)) == 2  # the other's entry alone
    assert len(lim.lease.free) + len(lim.lease.unused) == 1  # its overall entry back


async def test_group_counts_in_three_windows_atomically(
    make_limiter: Callable[..., FloodLimiter], rl_config: FloodConfig, clock: FakeClock
) -> None:
    config = FloodConfig(
        overall=Window(100, 1.0),
        per_chat=Window(3, 3.0),
        per_group=Window(4, 60.0),
        lease_ttl=60,  # the lease outlives the test: the overall window is hit once
    )
    lim = make_limiter(config)
    keys = lim.keys
    assert await takes(lim, GROUP) == 3  # the chat window fills first
    clock.advance(3.0)
    assert await lim.acquire(GROUP) == 0  # the 4th: the group's minute is full now
    clock.advance(2.0)  # the chat window has room, the group's minute has not
    before = await entries(lim, keys.rate_chat(GROUP))
    overall_before = await entries(lim, keys.rate_all())
    wait = await lim.acquire(GROUP)
    assert wait == pytest.approx(60 - 5)  # until the first three leave the minute
    # refused: nothing was counted (no partial take)
    assert await entries(lim, keys.rate_chat(GROUP)) == before
    assert await entries(lim, keys.rate_all()) == overall_before
    clock.advance(wait)
    assert await takes(lim, GROUP) == 3  # the first three left
    # the private chat of the same number is another window
    assert await lim.acquire(-GROUP) == 0


async def test_keys_have_ttls(
    limiter: FloodLimiter, clock: FakeClock, redis_url: str, redis_prefix: str
) -> None:
    keys = limiter.keys
    assert await limiter.acquire(GROUP) == 0
    assert (await limiter.admit_edit(EditTicket(Address(PRIVATE, 7), "t", "m"))).wait == 0
    for key in (keys.rate_all(), keys.rate_group(GROUP)):
        assert 0 < await limiter.kv.pttl(key) <= 62_000
    # a call's first window also keeps the unanswered calls: a minute past
    # their edit_lease, its TTL set again once a minute (#39)
    ttl = limiter.config.edit_lease + 60 + 1
    assert 0 < await limiter.kv.pttl(keys.rate_chat(GROUP)) <= ttl * 1000
    # a digest lives an hour past its last edit, not days
    assert 3_500_000 < await limiter.kv.pttl(keys.sent_digest(PRIVATE, 7)) <= 3_600_000
    # its last edit time in the same record (#39: no key, no SET of its own)
    record = await limiter.kv.get(keys.sent_digest(PRIVATE, 7))
    assert record is not None
    assert record.endswith(f"~{clock.now!r}")
    raw = aredis.Redis.from_url(redis_url)
    try:
        found = sorted(
            k.decode() if isinstance(k, bytes) else k for k in await raw.keys(f"{redis_prefix}*")
        )
    finally:
        await raw.aclose()
    p = redis_prefix
    assert found == sorted(
        [
            f"{p}rl:{{all}}:w",
            f"{p}rl:{{c:{GROUP}}}:w",
            f"{p}rl:{{c:{GROUP}}}:min",
            f"{p}rl:{{c:{PRIVATE}}}:w",
            f"{p}rl:{{c:{PRIVATE}}}:msg:7",
        ]
    )


async def test_two_clients_share_one_bucket(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    a, b = make_limiter(), make_limiter()
    assert await a.acquire(PRIVATE) == 0
    assert await b.acquire(PRIVATE) == 0
    assert await a.acquire(PRIVATE) == 0
    assert await a.acquire(PRIVATE) > 0
    assert await b.acquire(PRIVATE) > 0
    clock.advance(4.0)
    assert await b.acquire(PRIVATE) == 0


async def test_concurrent_acquires_never_overdraw(
    make_limiter: Callable[..., FloodLimiter],
) -> None:
    limiters = [make_limiter() for _ in range(4)]
    results = await asyncio.gather(*(lim.acquire(PRIVATE) for lim in limiters for _ in range(10)))
    assert sum(1 for r in results if r == 0) == limiters[0].config.per_chat.limit


async def edit_wait(limiter: FloodLimiter, edit: EditTicket) -> float:
    """The wait :meth:`FloodLimiter.admit_edit` answers for ``edit``."""
    return (await limiter.admit_edit(edit)).wait


async def test_edit_digest(limiter: FloodLimiter, clock: FakeClock) -> None:
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 5), "t1", "m1")) == 0
    assert (
        await edit_wait(limiter, EditTicket(Address(PRIVATE, 5), "t1", "m1")) == NOOP
    )  # no token taken
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 5), "t2", "m1")) == 0
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 5), "t3", "m1")) == 0
    # out of tokens: refused, and the digest is not recorded
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 5), "t4", "m1")) > 0
    assert await last_digest(limiter, Address(PRIVATE, 5)) == "t3:m1"
    # even when out of tokens
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 5), "t3", "m1")) == NOOP
    await limiter.forget(Address(PRIVATE, 5))
    assert await last_digest(limiter, Address(PRIVATE, 5)) is None
    await limiter.remember(Address(PRIVATE, 6), "sent", "kb")
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 6), "sent", "kb")) == NOOP
    # a markup-only edit compares the markup and keeps the text
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 6), None, "kb")) == NOOP
    clock.advance(10)
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 6), None, "kb2")) == 0
    assert await last_digest(limiter, Address(PRIVATE, 6)) == "sent:kb2"
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 6), "sent", "kb2")) == NOOP
    # unknown message: a markup-only edit is never a no-op
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 7), None, "kb")) == 0
    assert await last_digest(limiter, Address(PRIVATE, 7)) == "?:kb"
    with pytest.raises(ValueError, match="bad content digest 'a:b'"):
        await limiter.admit_edit(EditTicket(Address(PRIVATE, 7), "a:b", "kb"))
    for bad in ("a~b", "a|b", "a@b"):  # the record's other marks (#39: '~<last edit>')
        with pytest.raises(ValueError, match="bad content digest"):
            await limiter.admit_edit(EditTicket(Address(PRIVATE, 7), "t", bad))


async def test_an_edit_that_never_came_back_is_no_reason_to_drop_the_next(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """#28: a process killed between admitting an edit (the digest recorded) and
    Telegram's answer left the message's digest claiming content it never
    showed; every later render of that content was dropped as a no-op, and a
    hand stayed one version behind for good.  A digest taken under a lease is
    pending until the lease is released."""
    one = EditTicket(Address(PRIVATE, 9), "t1", "m1", "t#1", "dead.1")
    assert await edit_wait(limiter, one) == 0  # then the process is killed
    # while its lease may last, the same content by another call waits for it
    again = EditTicket(Address(PRIVATE, 9), "t1", "m1", "t#1", "live.1")
    assert await edit_wait(limiter, again) == BUSY
    assert await last_digest(limiter, Address(PRIVATE, 9)) is None  # in flight: unknown
    clock.advance(limiter.config.edit_lease + 1)  # its lease lapsed: never released
    assert await edit_wait(limiter, again) == 0  # goes out, not a no-op
    assert await limiter.release_edit(Address(PRIVATE, 9), "live.1")
    assert await last_digest(limiter, Address(PRIVATE, 9)) == "t1:m1"  # confirmed
    third = EditTicket(Address(PRIVATE, 9), "t1", "m1", "t#1", "live.2")
    assert await edit_wait(limiter, third) == NOOP
    # an older version is still refused while an edit is pending
    clock.advance(10)
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 9), "t2", "m2", "t#2", "x.1")) == 0
    assert (
        await edit_wait(limiter, EditTicket(Address(PRIVATE, 9), "t1", "m1", "t#1", "y.1")) == STALE
    )


async def test_a_prepaid_edit_compares_and_records_without_tokens(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """For an edit whose tokens were taken ahead (a prepaid coalesced update)."""
    while await limiter.acquire(PRIVATE) == 0:  # the chat's window is full now
        pass
    bucket = await entries(limiter, limiter.keys.rate_chat(PRIVATE))
    # no token needed
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 8), "t1", "m1", prepaid=True)) == 0
    assert await last_digest(limiter, Address(PRIVATE, 8)) == "t1:m1"
    # shows this already
    assert (
        await edit_wait(limiter, EditTicket(Address(PRIVATE, 8), "t1", "m1", prepaid=True)) == NOOP
    )
    assert (
        await edit_wait(limiter, EditTicket(Address(PRIVATE, 8), None, "m1", prepaid=True)) == NOOP
    )
    assert await edit_wait(limiter, EditTicket(Address(PRIVATE, 8), None, "m2", prepaid=True)) == 0
    assert await last_digest(limiter, Address(PRIVATE, 8)) == "t1:m2"
    assert await entries(limiter, limiter.keys.rate_chat(PRIVATE)) == bucket  # untouched
    with pytest.raises(ValueError, match="bad content digest 'a:b'"):
        await limiter.admit_edit(EditTicket(Address(PRIVATE, 8), "a:b", "m1", prepaid=True))


async def test_refund_gives_entries_back_never_beyond_the_limit(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    await limiter.refund(PRIVATE)  # no window yet: nothing is created
    assert await limiter.kv.pttl(limiter.keys.rate_chat(PRIVATE)) == -2  # no such key
    while await limiter.acquire(PRIVATE) == 0:
        pass
    await limiter.refund(PRIVATE)
    assert await limiter.acquire(PRIVATE) == 0  # the entry went
    assert await limiter.acquire(PRIVATE) > 0
    clock.advance(60)
    for _ in range(5):
        await limiter.refund(PRIVATE)
    assert await takes(limiter, PRIVATE) == limiter.config.per_chat.limit  # never more


async def test_entries_counted_long_ago_go_back_only_where_the_window_still_counts_them(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """``held``: the entries were counted that long ago.  A window that no longer
    counts them gives nothing back (the group's minute still does)."""
    group = -100_777
    chat_key, group_key = limiter.keys.rate_chat(group), limiter.keys.rate_group(group)
    assert await limiter.acquire(group) == 0
    clock.advance(4.0)
    assert await limiter.acquire(group) == 0
    c = limiter.config
    windows = {chat_key: c.per_chat.seconds, group_key: c.per_group.seconds}
    counted = {k: len(await counting(limiter, k, s)) for k, s in windows.items()}
    assert counted == {chat_key: 1, group_key: 2}  # the chat's first one left its 4 s
    await limiter.refund(group, held=4.0)  # out of the chat's 4 s, in the group's minute
    after = {k: [at for _n, at in await counting(limiter, k, s)] for k, s in windows.items()}
    assert after == {chat_key: [clock.now], group_key: [clock.now]}
    await limiter.refund(group, held=0.0)  # recent: both windows give it back
    assert await counting(limiter, chat_key, c.per_chat.seconds) == []
    assert await entries(limiter, group_key) == []


async def test_default_rates_are_stricter_than_the_fake_server(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """Every message our limiter lets through, the fake's windows accept too, even
    when each one reaches the server up to half a second late, reordered
    (seeded random traffic; the server has its own clock)."""
    import random

    rng = random.Random(7)
    chats = [PRIVATE, PRIVATE + 1, GROUP, GROUP - 1]
    arrivals: list[tuple[float, int]] = []
    for _ in range(600):
        chat = rng.choice(chats)
        if await limiter.acquire(chat) == 0:
            arrivals.append((clock.now + rng.uniform(0, 0.5), chat))
        clock.advance(rng.choice([0.0, 0.0, 0.05, 0.3, 1.0]))
    server_clock = FakeClock(arrivals[0][0])
    server = FakeFloodControl(RateLimits(), server_clock)
    for at, chat in sorted(arrivals):
        server_clock.now = at
        assert server.acquire(chat, chat < 0) == 0
    assert len(arrivals) > 100


def test_window_validation() -> None:
    with pytest.raises(ValueError, match="limit >= 1 and seconds > 0 needed"):
        Window(0, 3)
    with pytest.raises(ValueError, match="limit >= 1 and seconds > 0 needed"):
        Window(1, 0)


async def test_the_fleet_wide_rate_is_a_setting(redis_url: str, redis_prefix: str) -> None:
    """FLOOD_OVERALL_LIMIT / FLOOD_OVERALL_WINDOW (for a bot Telegram allows more)
    reach the bot's limiter; the other windows stay as they are."""
    from telegram_bot.app import BotApp, build_delivery
    from telegram_bot.settings import Settings

    defaults = Settings()
    assert (
        FloodConfig.with_overall(defaults.flood_overall_limit, defaults.flood_overall_window)
        == FloodConfig()
    )
    settings = Settings(
        bot_token="123:AAA",
        redis_url=redis_url,
        redis_prefix=redis_prefix,
        flood_overall_limit=100,
        flood_overall_window=2.0,
    )
    app = BotApp(settings)
    try:
        limiter = build_delivery(settings, app.bot, app.svc, app.budgets).outgoing.limiter
        assert limiter is not None
        assert limiter.config.overall == Window(100, 2.0, reserve=8)
        assert limiter.config.per_group == FloodConfig().per_group
    finally:
        await app.aclose()


async def test_a_refund_never_takes_a_later_messages_entry(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """A prepaid ticket is stamped a moment after its entry was counted (the
    round trip): giving it back removes that entry -- not the entry of a message
    counted after it and sent, which would let one message too many through."""
    key = limiter.keys.rate_chat(PRIVATE)
    assert await limiter.acquire(PRIVATE) == 0  # the ticket's entry
    start = clock.now
    clock.advance(0.005)  # the ticket is stamped
    paid = clock.now
    clock.advance(0.003)
    assert await limiter.acquire(PRIVATE) == 0  # another message, sent
    clock.advance(0.002)
    await limiter.refund(PRIVATE, held=clock.now - paid)
    assert [at for _n, at in await entries(limiter, key)] == [
        pytest.approx(start + 0.008, rel=0, abs=1e-4)
    ]


async def test_an_edit_past_its_patience_still_waits_for_the_message_lease(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """Another call's edit of the message is in flight (its lease): an edit that
    waited past ``max_wait`` went out beside it, without tokens or the lease.  It
    waits for the lease to end (here: lapse, 5 s) and takes it."""
    one = EditTicket(Address(PRIVATE, 9), "t1", "m1", "t#1", "dead.1")
    assert await edit_wait(limiter, one) == 0  # then its process is killed

    async def sleep(seconds: float) -> None:
        clock.advance(seconds)

    gate = FloodGate(limiter, sleep=sleep, max_wait=2.0, stats=OutgoingStats())
    lease = Receipt("live.1")
    start = clock()
    options = CallOptions(version="t#2")
    assert await gate.admit(Address(PRIVATE, 9), ("t2", "m2"), options, lease)
    assert lease.held
    assert clock() - start >= limiter.config.edit_lease
    assert clock() - start < 2.0 * LAST_RESORT


async def test_a_call_never_answered_counts_while_it_may_still_reach_telegram(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """A process killed between a call's take and Telegram's answer never moves
    the call's entry to the answer (:class:`Stamp`), and Telegram counts the
    message when it arrives -- which, on a loaded machine, was later than the
    take plus the window's margin: the next process's calls drew 429s (#37, the
    SIGKILL soak).  Such a call counts as arriving now while it may still
    arrive (``edit_lease`` after its take); an answered one from its answer."""
    dead, alive = make_limiter(), make_limiter()
    window, config = dead.config.per_chat, dead.config
    assert (window.limit, window.seconds, config.edit_lease) == (3, 4.0, 5.0)

    async def fill(limiter: FloodLimiter) -> int:
        """Tracked calls in a row, each answered at once; how many were taken."""
        for n in range(window.limit + 1):
            verdict = await limiter.take(PRIVATE, tracked=True)
            if verdict.wait > 0:
                return n
            assert verdict.stamp is not None
            await limiter.stamp(verdict.stamp)
        return window.limit + 1

    assert (await dead.take(PRIVATE, tracked=True)).wait == 0  # then its process is killed
    clock.advance(window.seconds + 0.5)  # past its window as counted from the take
    assert await fill(alive) == window.limit - 1  # the dead call may land any moment
    # it can no longer arrive (edit_lease after its take), and the window it was
    # last counted in (from 4.5 - answer_margin) passes: the whole window again
    clock.advance(window.seconds)
    assert await fill(alive) == window.limit
    # answered calls never count longer than from their answer
    clock.advance(window.seconds + 0.5)
    assert await fill(dead) == window.limit
    clock.advance(window.seconds + 0.5)
    assert await fill(alive) == window.limit


async def test_a_call_found_unanswered_counts_in_the_script_that_finds_it(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """The script that finds a call unanswered past the margin counts it as
    arriving now in its own verdict, not only in the next one's (#37; #39: the
    first window is read once, its moved entries counted where they move to)."""
    dead, alive = make_limiter(), make_limiter()
    window, config = dead.config.per_chat, dead.config
    taken = clock.now
    assert (await dead.take(PRIVATE, tracked=True)).wait == 0  # then its process is killed
    clock.advance(0.5)
    for _ in range(window.limit - 1):
        verdict = await alive.take(PRIVATE, tracked=True)
        assert verdict.wait == 0
        assert verdict.stamp is not None
        await alive.stamp(verdict.stamp)
    # the dead call's entry left the window as counted from its take, the two
    # answered ones still count; it may still arrive: it counts from now - margin
    clock.advance(window.seconds - 0.3)
    assert clock.now - window.seconds > taken  # out of its window as taken
    assert taken < clock.now - config.answer_margin < taken + config.edit_lease
    assert await alive.acquire(PRIVATE) > 0


async def test_the_gate_tracks_every_call_until_its_answer(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """Every call the gate admits is tracked (the take, and an edit's ticket):
    unanswered past the margin it still counts; :meth:`FloodGate.stamp` -- what
    Outgoing calls on Telegram's answer -- ends that (#37)."""
    limiter, other = make_limiter(), make_limiter()
    gate = FloodGate(limiter, sleep=asyncio.sleep, max_wait=2.0, stats=OutgoingStats())
    window = limiter.config.per_chat
    sent, edited = Receipt(), Receipt()
    assert await gate.admit(Address(PRIVATE), None, CallOptions(), receipt=sent)
    options = CallOptions(version="t#1")
    assert await gate.admit(Address(PRIVATE, 9), ("t1", "m1"), options, receipt=edited)
    clock.advance(window.seconds + 0.5)
    assert await takes(other, PRIVATE) == window.limit - 2  # both may still arrive
    await gate.stamp(sent)
    await gate.stamp(edited)
    clock.advance(window.seconds + 0.5)
    assert await takes(other, PRIVATE) == window.limit


async def test_a_call_answered_late_counts_in_the_overall_window_from_its_answer(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """The fleet-wide window counts a message when its entry is leased, Telegram
    when it arrives: a loaded process sent its counted messages late, and they
    reached the fake Bot API 30 in half a second, after the window had let them
    go -- the soak's 429s (#37).  A call answered ``overall_stamp_after`` late
    has its overall entry moved to its answer (one more round trip); a call
    answered in time costs none."""
    late, other = make_limiter(), make_limiter()
    window, config = late.config.overall, late.config
    assert (window.limit, window.seconds, config.overall_stamp_after) == (30, 1.5, 0.25)

    verdict = await late.take(PRIVATE, tracked=True)
    assert verdict.wait == 0
    assert verdict.stamp is not None
    clock.advance(0.8)  # a loaded process: Telegram answers 0.8 s after the lease
    await late.stamp(verdict.stamp)
    assert late.late_stamps == 1
    clock.advance(window.seconds - 0.8 + 0.1)  # past the window counted from the lease
    assert await takes(other, None) == window.limit - 1  # it still counts: answered at 0.8

    clock.advance(2 * window.seconds)  # every entry has left
    verdict = await late.take(PRIVATE + 1, tracked=True)
    assert verdict.stamp is not None
    clock.advance(0.1)  # answered in time: the entry stays where it was counted
    trips = late.round_trips
    await late.stamp(verdict.stamp)
    assert (late.late_stamps, late.round_trips) == (1, trips + 1)  # the chat's stamp alone
    clock.advance(window.seconds - 0.1 + 0.01)
    assert await takes(other, None) == window.limit


async def test_an_admission_costs_one_script_of_few_commands(
    make_limiter: Callable[..., FloodLimiter],
    clock: FakeClock,
    redis_url: str,
    redis_prefix: str,
) -> None:
    """#39: every command a script runs counts on the server (``INFO
    commandstats``), and the windows and edit leases were most of a press's
    Redis commands (~45 of 62).  A window is counted with one ZCOUNT, a key's
    TTL raised with one PEXPIRE, a lease's entries added with one ZADD, an
    answer within the window's margin moves its entry without touching the
    TTL, a message's edit lease is kept in its digest's record, and the key
    of a chat's unanswered calls gets its TTL once a minute, not once a call.
    (It was 21, 5, 25 and 8 commands.)"""
    limiter, other = make_limiter(), make_limiter()
    # the scripts loaded (another process's send and edit of another chat)
    warm = await other.admit_edit(EditTicket(Address(PRIVATE + 1, 7), "t", "m", owner="o"))
    assert warm.stamp is not None
    await other.release_edit(Address(PRIVATE + 1, 7), "o", warm.stamp)
    warm = await other.take(PRIVATE + 1, tracked=True)
    assert warm.stamp is not None
    await other.stamp(warm.stamp)
    taken: list[Verdict] = []

    async def send() -> None:
        taken.append(await limiter.take(PRIVATE, tracked=True))

    # the first send: the overall lease (5 entries) and the chat's window
    first = await monitored(redis_url, redis_prefix, send)
    assert first.count("EVALSHA") == 2
    assert len(first) <= 13, first
    stamp = taken[0].stamp
    assert stamp is not None
    clock.advance(0.05)
    assert len(await monitored(redis_url, redis_prefix, lambda: limiter.stamp(stamp))) <= 3

    # an edit that takes its message's lease, goes out and is answered
    ticket = EditTicket(Address(PRIVATE, 7), "t", "m", "tab#1", owner="o", tracked=True)

    async def edit() -> None:
        verdict = await limiter.admit_edit(ticket)
        assert verdict.wait == 0
        assert verdict.stamp is not None
        clock.advance(0.05)
        assert await limiter.release_edit(Address(PRIVATE, 7), "o", verdict.stamp)

    edited = await monitored(redis_url, redis_prefix, edit)
    assert edited.count("EVALSHA") == 2
    # 9, and a trim of its window at one add in eight; answered in time, its
    # entry is not moved; its record among the unanswered calls joins its
    # entry's ZADD, the window's TTL is set once a minute, the window is read
    # once, and the last edit is kept in the message's record (it was 15)
    assert len(edited) <= 10, edited
    assert "ZREMRANGEBYSCORE" in edited or len(edited) <= 9, edited

    # refused: the chat's window is full
    assert await limiter.acquire(PRIVATE) == 0
    refused = EditTicket(Address(PRIVATE, 7), "t2", "m", "tab#2", owner="p", tracked=True)

    async def refuse() -> None:
        assert (await limiter.admit_edit(refused)).wait > 0

    # its window filled by this process a moment ago: its digest judged alone
    assert len(await monitored(redis_url, redis_prefix, refuse)) <= 2
    # filled by another process: the script reads the window once to say so
    for _ in range(limiter.config.per_chat.limit):
        assert await other.acquire(PRIVATE + 2) == 0
    stranger = EditTicket(Address(PRIVATE + 2, 7), "t", "m", "tab#1", owner="q", tracked=True)
    assert await limiter.acquire(None) == 0  # a lease of overall entries to spare

    async def refused_there() -> None:
        assert (await limiter.admit_edit(stranger)).wait > 0

    assert await monitored(redis_url, redis_prefix, refused_there) == ["EVALSHA", "GET", "ZRANGE"]


async def test_the_fleet_windows_ttl_is_set_once_a_minute(
    limiter: FloodLimiter, clock: FakeClock, redis_url: str, redis_prefix: str
) -> None:
    """#39: a lease per burst of messages, and at a human pace each PEXPIREd
    the fleet-wide window's key.  Its TTL is set to a minute and only ever
    raised, so the process that set it leases without it until then; a key
    lost and written again (no TTL) gets one with the next minute's lease."""
    key = limiter.keys.rate_all()
    assert await limiter.acquire(None) == 0
    assert 60_000 < await limiter.kv.pttl(key) <= 62_000
    clock.advance(limiter.config.lease_ttl + 1.0)  # that lease lapsed
    seen = await monitored(redis_url, redis_prefix, lambda: limiter.acquire(None))
    assert seen.count("EVALSHA") == 1
    assert "PEXPIRE" not in seen, seen
    await limiter.kv.delete(key)
    clock.advance(limiter.config.lease_ttl + 1.0)
    assert await limiter.acquire(None) == 0
    assert await limiter.kv.pttl(key) == -1  # no TTL for now
    clock.advance(lease.KEY_LIFE)
    assert await limiter.acquire(None) == 0
    assert 60_000 < await limiter.kv.pttl(key) <= 62_000


async def test_the_fleet_windows_key_outlives_its_entries_after_a_restart(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """#39 (the review): a process leasing without the key's TTL trusts it to
    live a minute; a Redis restart lost the key, and the journal's charge (or a
    late answer's stamp) wrote it again -- with a TTL of its own entries' window
    it expired under the next lease's entries.  Every script that sets that
    TTL gives it the minute at least."""
    key, win = limiter.keys.rate_all(), limiter.config.overall.seconds
    assert await limiter.acquire(None) == 0  # the TTL set: a minute
    clock.advance(win - 0.1)  # its entries count 0.1 s more
    await limiter.kv.delete(key)  # a Redis restart lost the key
    assert await limiter.charge() > 0  # the journal counted there again
    clock.advance(limiter.config.lease_ttl + 0.01)
    assert await limiter.acquire(None) == 0  # a new lease; its entries count ``win``
    assert await limiter.kv.pttl(key) >= lease.KEY_LIFE * 1000
    # the same with a late answer's stamp
    late = await limiter.take(PRIVATE, tracked=True)
    assert late.stamp is not None
    await limiter.kv.delete(key)
    clock.advance(limiter.config.overall_stamp_after + 0.01)
    await limiter.stamp(late.stamp)
    assert await limiter.kv.pttl(key) >= lease.KEY_LIFE * 1000


async def test_a_call_short_of_its_chats_window_asks_again_only_after_the_wait(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """#39: the head of its chat's line sleeps out the wait it was told before
    it asks again -- no second script at once for the same answer (it was a
    refusal, the same refusal again, then the take)."""

    async def sleep(seconds: float) -> None:
        clock.advance(seconds)

    gate = FloodGate(limiter, sleep=sleep, max_wait=60.0, stats=OutgoingStats())
    assert await takes(limiter, PRIVATE) == limiter.config.per_chat.limit
    before = limiter.round_trips
    assert await gate.admit(Address(PRIVATE), None, CallOptions())
    # refused without a script (takes' last call was refused: the window is
    # known full until then); after the wait the overall lease (lapsed
    # meanwhile) and the take
    assert limiter.round_trips - before == 2
    assert gate.stats.waits == 1


async def test_a_new_call_to_a_window_known_full_costs_no_script(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """#39: a window that refused a call a moment ago refuses the next new one
    in the same process without a script (the same wait, less the time gone);
    an edit's digest is still judged (a no-op is dropped at once); a refund
    here forgets it; and a call asked ``again`` after its wait asks Redis."""
    limit = limiter.config.per_chat.limit
    assert await takes(limiter, PRIVATE) == limit
    before = limiter.round_trips
    first = await limiter.acquire(PRIVATE)
    assert first > 0
    assert limiter.round_trips == before  # told from memory
    clock.advance(0.5)
    assert await limiter.acquire(PRIVATE) == pytest.approx(first - 0.5)
    assert limiter.round_trips == before
    # an edit of a message: its digest is judged all the same (one script)
    to = Address(PRIVATE, 7)
    await limiter.remember(to, "t", "m")
    trips = limiter.round_trips
    assert (await limiter.admit_edit(EditTicket(to, "t", "m"))).wait == NOOP
    assert (await limiter.admit_edit(EditTicket(to, "t2", "m"))).wait > 0  # not taken
    assert limiter.round_trips - trips == 2
    assert (await limiter.admit_edit(EditTicket(to, "t2", "m"), again=True)).wait > 0
    # the window really is full: asked again, Redis says the same
    assert (await limiter.take(PRIVATE, again=True)).wait == pytest.approx(first - 0.5)
    await limiter.refund(PRIVATE)  # an entry back: the window may have room
    trips = limiter.round_trips
    assert await limiter.acquire(PRIVATE) == 0
    assert limiter.round_trips > trips  # asked Redis, and took it


async def test_a_call_answered_in_time_leaves_its_chat_entries_where_they_were_counted(
    make_limiter: Callable[..., FloodLimiter],
    clock: FakeClock,
    redis_url: str,
    redis_prefix: str,
) -> None:
    """#39: moving a call's entries to its answer cost a command a call; an
    answer within ``chat_stamp_after`` of the take reached Telegram well inside
    the windows' margin, so its entries stay where they were counted and only
    its unanswered record goes (one command in the script).  A later answer
    still moves them (#28)."""
    limiter = make_limiter()
    config = limiter.config
    assert config.chat_stamp_after <= config.answer_margin / 2
    warm = await limiter.take(PRIVATE + 1, tracked=True)  # the scripts loaded
    assert warm.stamp is not None
    await limiter.stamp(warm.stamp)
    key = limiter.keys.rate_chat(PRIVATE)
    soon = await limiter.take(PRIVATE, tracked=True)
    stamp = soon.stamp
    assert stamp is not None
    taken_at = clock.now
    clock.advance(config.chat_stamp_after / 2)
    seen = await monitored(redis_url, redis_prefix, lambda: limiter.stamp(stamp))
    assert seen == ["EVALSHA", "ZREM"], seen  # off the unanswered calls, nothing moved
    assert [at for _n, at in await entries(limiter, key)] == [taken_at]
    late = await limiter.take(PRIVATE, tracked=True)
    assert late.stamp is not None
    clock.advance(config.chat_stamp_after * 2)
    await limiter.stamp(late.stamp)
    assert [at for _n, at in await entries(limiter, key)] == [taken_at, clock.now]


async def test_a_window_this_process_just_filled_refuses_without_a_script(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """#39: the entries this process itself counted in the last
    ``full.REMEMBERED`` seconds fill its chat's window: the next new call is
    refused from them -- the wait Redis would say, with no script (an edit's
    digest still judged, one script); older own entries are not trusted (a
    refund elsewhere may have taken them), a call asked ``again`` asks Redis."""
    window = limiter.config.per_chat
    for _ in range(window.limit):
        assert await limiter.acquire(PRIVATE) == 0
        clock.advance(0.1)
    trips = limiter.round_trips
    wait = await limiter.acquire(PRIVATE)
    assert wait == pytest.approx(window.seconds - 0.3)
    assert limiter.round_trips == trips  # no script
    to = Address(PRIVATE, 7)
    assert (await limiter.admit_edit(EditTicket(to, "t", "m"))).wait == pytest.approx(wait)
    assert limiter.round_trips == trips + 1  # its digest judged, nothing taken
    assert (await limiter.take(PRIVATE, again=True)).wait == pytest.approx(wait)
    assert limiter.round_trips > trips + 1  # asked Redis: the same
    asked = limiter.round_trips
    clock.advance(full.REMEMBERED)  # own entries too old to be trusted: ask Redis
    assert await limiter.acquire(PRIVATE) == pytest.approx(wait - full.REMEMBERED)
    assert limiter.round_trips > asked


async def test_a_refusal_is_remembered_two_seconds_at_most(
    limiter: FloodLimiter, clock: FakeClock
) -> None:
    """#39: another process may give an entry back (a refund there), which this
    one does not hear of; a window remembered full longer than
    ``full.REMEMBERED`` is asked again -- a group's full minute would otherwise
    keep new calls waiting out the whole wait."""
    assert await takes(limiter, PRIVATE) == limiter.config.per_chat.limit
    first = await limiter.acquire(PRIVATE)
    assert first > full.REMEMBERED
    trips = limiter.round_trips
    clock.advance(full.REMEMBERED / 2)
    assert await limiter.acquire(PRIVATE) == pytest.approx(first - full.REMEMBERED / 2)
    assert limiter.round_trips == trips  # from memory
    clock.advance(full.REMEMBERED / 2)
    assert await limiter.acquire(PRIVATE) == pytest.approx(first - full.REMEMBERED)
    assert limiter.round_trips > trips  # asked Redis again
