"""No hot key in the flood limiter (issue #12): every key of a chat carries the
chat's hash tag, every script call names keys of ONE Redis Cluster slot, and
the fleet-wide window is leased in small batches -- while the fleet-wide limit
still holds over several limiters (fake clock, real Redis)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from redis.crc import key_slot

from tables import LiveConfig, TableService
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.flood.limiter import (
    NOOP,
    STALE,
    EditTicket,
    FloodConfig,
    FloodLimiter,
    Window,
    table_version,
)
from tests.bot.flood_kit import last_digest, shown
from tests.tables.conftest import FakeClock

PRIVATE = 42
GROUP = -100123


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def make_limiter(
    redis_url: str, redis_prefix: str, clock: FakeClock
) -> AsyncIterator[Callable[..., FloodLimiter]]:
    """Limiters on their own table services (like separate bot processes)."""
    made: list[TableService] = []

    def make(config: FloodConfig | None = None) -> FloodLimiter:
        svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
        made.append(svc)
        return FloodLimiter(svc.kv, config or FloodConfig(), clock=clock)

    yield make
    for svc in made:
        await svc.aclose()


Calls = list[list[str]]


def spy(script: Any, calls: Calls) -> Any:
    async def run(keys: list[str], args: list[Any]) -> Any:
        calls.append(list(keys))
        return await script(keys, args)

    return run


async def edit_wait(limiter: FloodLimiter, edit: EditTicket) -> float:
    """The wait :meth:`FloodLimiter.admit_edit` answers for ``edit``."""
    return (await limiter.admit_edit(edit)).wait


def spied(limiter: FloodLimiter, calls: Calls) -> None:
    for name in ("_script", "_headroom", "_refund", "_charge", "_hold"):
        setattr(limiter, name, spy(getattr(limiter, name), calls))
    limiter.lease.script = spy(limiter.lease.script, calls)


async def test_every_script_call_names_keys_of_one_slot(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    limiter = make_limiter()
    calls: Calls = []
    spied(limiter, calls)
    for chat in (PRIVATE, GROUP, GROUP - 1):
        await limiter.acquire(chat)
        await limiter.admit_edit(EditTicket(Address(chat, 7), "t", "m", table_version("T", 3)))
        prepaid = EditTicket(Address(chat, 7), "t2", "m", table_version("T", 4), prepaid=True)
        await limiter.admit_edit(prepaid)
        await limiter.headroom(chat)
        await limiter.refund(chat)
        await limiter.hold(chat, 2.0)
        clock.advance(1.0)
    await limiter.acquire(None)
    assert await limiter.charge() == 0  # the journal: every entry is there already
    assert calls, "the spy saw no script call"
    slots = {key_slot(k.encode()) for keys in calls for k in keys}
    assert len(slots) > 3  # the chats spread over the slots ...
    for keys in calls:  # ... but no call spans two
        assert len({key_slot(k.encode()) for k in keys}) == 1, keys
    for chat in (PRIVATE, GROUP):
        for key in (limiter.keys.rate_chat(chat), limiter.keys.sent_digest(chat, 7)):
            assert f"rl:{{c:{chat}}}:" in key
        assert key_slot(limiter.keys.rate_chat(chat).encode()) != key_slot(
            limiter.keys.rate_all().encode()
        )


async def test_the_overall_window_is_leased_in_batches(
    make_limiter: Callable[..., FloodLimiter],
) -> None:
    limiter = make_limiter(FloodConfig(overall=Window(100, 1.0), lease=5))
    for chat in range(1000, 1050):
        assert await limiter.acquire(chat) == 0
    assert limiter.lease.leases == 10  # 50 messages, 5 entries a lease
    count = limiter.kv.script("return redis.call('ZCARD', KEYS[1])")
    assert await count([limiter.keys.rate_all()], []) == 50


async def test_an_unused_lease_goes_back_to_the_fleet(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """Leased entries are no hoard: stale ones are not used (and go back), so
    after a pause the fleet gets one window's limit, not that plus every
    allowance."""
    config = FloodConfig(overall=Window(6, 10.0), lease=5, lease_ttl=0.25)
    a, b = make_limiter(config), make_limiter(config)
    assert await a.acquire(1) == 0  # a leases 5, uses 1
    assert await b.acquire(2) == 0  # b gets the last token
    assert await b.acquire(3) > 0  # a sits on 4: b waits
    clock.advance(10)  # the window is empty again; a's 4 are stale
    got = 0
    for chat in range(100, 120):
        for limiter in (a, b):
            got += await limiter.acquire(chat) == 0
    assert got == 6  # the limit, not 6 + 4
    # the stale 4 went back with a's second lease; one refusal, then a waits
    # without asking Redis again
    assert a.lease.leases == 3


async def test_the_fleet_wide_limit_holds_over_two_limiters(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """A message goes out within ``lease_ttl`` of the lease that counted it: in
    any window of ``seconds - lease_ttl`` the fleet sends at most the limit."""
    seed = 12
    print(f"seed {seed}")
    rng = random.Random(seed)
    limit, seconds, ttl = 10, 1.0, 0.25
    config = FloodConfig(
        overall=Window(limit, seconds), per_chat=Window(100, 1.0), lease=5, lease_ttl=ttl
    )
    limiters = [make_limiter(config), make_limiter(config)]
    taken: list[float] = []
    start = clock.now
    for step in range(400):  # 20 s in steps of 0.05 s
        for _ in range(rng.randint(0, 3)):
            limiter = rng.choice(limiters)
            if await limiter.acquire(rng.randint(1, 50)) == 0:
                taken.append(clock.now)
        clock.advance(0.05)
        assert step >= 0
    span = clock.now - start
    for t in taken:
        assert sum(1 for u in taken if t <= u < t + seconds - ttl) <= limit
    assert len(taken) >= 0.6 * limit / seconds * span  # and the fleet does get its pace


async def test_an_edit_never_shows_an_older_version(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    a, b = make_limiter(), make_limiter()
    v = {n: table_version("T1", n) for n in range(1, 10)}
    assert await edit_wait(a, EditTicket(Address(PRIVATE, 9), "v5", "kb", v[5])) == 0
    zrange = a.kv.script("return redis.call('ZRANGE', KEYS[1], 0, -1)")
    bucket = await zrange([a.keys.rate_chat(PRIVATE)], [])
    assert (
        await edit_wait(b, EditTicket(Address(PRIVATE, 9), "v4", "kb", v[4])) == STALE
    )  # nothing taken
    assert (
        await edit_wait(b, EditTicket(Address(PRIVATE, 9), "v4", "kb", v[4], prepaid=True)) == STALE
    )
    assert await zrange([a.keys.rate_chat(PRIVATE)], []) == bucket
    assert await shown(b, Address(PRIVATE, 9)) == ("v5:kb", "T1#5")
    assert await edit_wait(b, EditTicket(Address(PRIVATE, 9), "v5", "kb", v[5])) == NOOP
    # same version: allowed
    assert await edit_wait(b, EditTicket(Address(PRIVATE, 9), "v5", "kb2", v[5])) == 0
    clock.advance(5)
    assert await edit_wait(b, EditTicket(Address(PRIVATE, 9), "v6", "kb", v[6])) == 0
    assert (
        await edit_wait(a, EditTicket(Address(PRIVATE, 9), "v5", "kb", v[5], prepaid=True)) == STALE
    )
    # a no-op of a newer version raises the version shown
    assert await edit_wait(a, EditTicket(Address(PRIVATE, 9), "v6", "kb", v[8])) == NOOP
    assert await shown(a, Address(PRIVATE, 9)) == ("v6:kb", "T1#8")
    assert await edit_wait(b, EditTicket(Address(PRIVATE, 9), "v7", "kb", v[7])) == STALE
    # unversioned edits (a notice) are never refused and keep the version
    clock.advance(5)
    assert await edit_wait(b, EditTicket(Address(PRIVATE, 9), "note", "kb")) == 0
    assert await shown(b, Address(PRIVATE, 9)) == ("note:kb", "T1#8")
    # another table in the same message (a rematch) starts its own versions
    clock.advance(5)
    assert (
        await edit_wait(b, EditTicket(Address(PRIVATE, 9), "new", "kb", table_version("T2", 1)))
        == 0
    )
    assert await shown(b, Address(PRIVATE, 9)) == ("new:kb", "T2#1")


async def test_a_failed_edit_forgets_the_content_but_keeps_the_version(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """After a refused edit (a 429) the message's content is unknown, but an older
    version than it was asked to show is still refused -- also a retry of it
    made by another process after the forget."""
    a, b = make_limiter(), make_limiter()
    v7 = EditTicket(Address(PRIVATE, 11), "v7", "kb", table_version("T1", 7))
    assert await edit_wait(a, v7) == 0
    await b.forget(Address(PRIVATE, 11))
    assert await last_digest(a, Address(PRIVATE, 11)) is None  # the content is unknown
    assert await shown(a, Address(PRIVATE, 11)) == ("?:?", "T1#7")
    clock.advance(5)
    assert (
        await edit_wait(a, EditTicket(Address(PRIVATE, 11), "v5", "kb", table_version("T1", 5)))
        == STALE
    )
    assert await edit_wait(a, v7) == 0  # sent again
    await a.forget(Address(PRIVATE, 12))  # no record: nothing to keep
    assert await shown(a, Address(PRIVATE, 12)) is None
    assert await edit_wait(a, EditTicket(Address(PRIVATE, 13), "x", "kb")) == 0
    await a.forget(Address(PRIVATE, 13))  # no version: the record goes
    assert await shown(a, Address(PRIVATE, 13)) is None


async def test_the_last_edit_of_a_message_outlives_its_lease(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """#39: a message's last edit is kept in its record with the lease: the
    release keeps it (and what the message shows), another process's deferred
    edit still waits its gap."""
    a, b = make_limiter(), make_limiter()
    to = Address(GROUP, 5)
    verdict = await a.admit_edit(EditTicket(to, "v1", "kb", "tab#3", owner="o"))
    assert verdict.wait == 0
    clock.advance(0.5)
    assert await a.release_edit(to, "o", verdict.stamp)
    assert await shown(b, to) == ("v1:kb", "tab#3")
    assert (await b.headroom(to, 3.0)).message == pytest.approx(2.5)
    clock.advance(2.5)
    assert await b.headroom(to, 3.0) == (0, 0, 0)  # go -- and claimed
    assert await shown(a, to) == ("v1:kb", "tab#3")  # what it shows, as it was
    assert (await a.headroom(to, 3.0)).message == pytest.approx(3.0)


async def test_the_last_edit_of_a_message_is_shared(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """Any process's edit starts the message's gap; a deferred edit that finds
    nothing to wait for claims it at once (before its tokens are even taken)."""
    a, b = make_limiter(), make_limiter()
    assert await edit_wait(a, EditTicket(Address(GROUP, 5), "v1", "kb")) == 0
    assert (await b.headroom(Address(GROUP, 5), 3.0)).message == pytest.approx(3.0)
    assert (await b.headroom(Address(GROUP, 6), 3.0)).message == 0  # another message
    assert (await b.headroom(GROUP)).message == 0  # not asked
    clock.advance(1)
    assert (await b.headroom(Address(GROUP, 5), 3.0)).message == pytest.approx(2.0)
    clock.advance(2)
    assert await b.headroom(Address(GROUP, 5), 3.0) == (0, 0, 0)  # go -- and claimed
    assert (await a.headroom(Address(GROUP, 5), 3.0)).message == pytest.approx(3.0)
    assert (await a.headroom(Address(GROUP, 5), 1.0)).message == pytest.approx(1.0)  # its own gap
