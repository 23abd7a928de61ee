"""The fleet's worst case stays inside Telegram's windows (#28): three limiters
(three bot processes) on the real Redis, one fake clock, bursts to many chats
and groups; every message counted when it goes out.  In ANY second the fleet
sends at most 30, in any minute at most 20 to one group, in any 3 s at most 3
to one chat -- a token bucket's burst plus its refill let 45 and 37 through."""

from __future__ import annotations

import asyncio
import math
import random
from bisect import bisect_left
from collections import defaultdict
from collections.abc import AsyncIterator, Callable

import pytest

from tables import LiveConfig, TableService
from telegram_bot.delivery.flood.limiter import FloodConfig, FloodLimiter
from tests.tables.conftest import FakeClock


def most_in_a_window(times: list[float], seconds: float) -> int:
    """The most of ``times`` in any window [t, t + seconds)."""
    times = sorted(times)
    return max((bisect_left(times, t + seconds) - i for i, t in enumerate(times)), default=0)


@pytest.fixture
async def limiters(
    redis_url: str, redis_prefix: str
) -> AsyncIterator[Callable[[FakeClock], list[FloodLimiter]]]:
    made: list[TableService] = []

    def make(clock: FakeClock) -> list[FloodLimiter]:
        out = []
        for _ in range(3):
            svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
            made.append(svc)
            out.append(FloodLimiter(svc.kv, FloodConfig(), clock=clock))
        return out

    yield make
    for svc in made:
        await svc.aclose()


@pytest.mark.parametrize("seed", [1, 2])
async def test_no_window_of_telegrams_holds_more_than_its_limit(
    limiters: Callable[[FakeClock], list[FloodLimiter]], seed: int
) -> None:
    print(f"seed {seed}")
    rng = random.Random(seed)
    clock = FakeClock()
    fleet = limiters(clock)
    groups = [-100 - i for i in range(3)]
    chats = [*groups, *range(1, 300)]
    sent: list[tuple[float, int]] = []
    for _ in range(600):  # 0.1 s steps: 60 s, bursts and lulls
        burst = rng.choice([0, 0, 1, 3, 10, 60])
        for _ in range(burst):
            chat = rng.choice(groups) if rng.random() < 0.4 else rng.choice(chats)
            if await rng.choice(fleet).acquire(chat) == 0:
                sent.append((clock.now, chat))
        clock.advance(0.1)
    per_chat: dict[int, list[float]] = defaultdict(list)
    for at, chat in sent:
        per_chat[chat].append(at)
    overall = most_in_a_window([at for at, _ in sent], 1.0)
    in_group = max(most_in_a_window(per_chat[g], 60.0) for g in groups)
    in_chat = max(most_in_a_window(times, 3.0) for times in per_chat.values())
    print(f"most in 1 s {overall}, in a group's 60 s {in_group}, in a chat's 3 s {in_chat}")
    assert overall <= 30
    assert in_group <= 20
    assert in_chat <= 3
    assert len(sent) > 600  # and the fleet does send


def test_the_table_message_leaves_the_groups_reserve_free() -> None:
    """The group's table message, edited at most every ``TABLE_DELAY``, takes at
    most the group window's limit less its reserve: the rest of the minute stays
    for lobby messages, replies and hands (#28: every 3 s it alone took 20 in
    a minute, and a lobby message then drew a 429)."""
    from telegram_bot.settings import Settings

    window = FloodConfig().per_group
    table_edits = math.floor(window.seconds / Settings().table_delay) + 1  # both ends
    assert table_edits <= window.limit - window.reserve
    assert window.reserve >= 4


async def test_an_idle_lease_never_gives_back_another_processes_entries(
    limiters: Callable[[FakeClock], list[FloodLimiter]],
) -> None:
    """#28 (the fleet e2e's 429s): a process idle past the window gave back its
    unused leased entries as "the oldest counted since my lease" -- gone from
    the window already, so the entries of another process's messages went in
    their place, and the fleet sent 33 in a second."""
    clock = FakeClock()
    a, b, _c = limiters(clock)
    assert await a.acquire(1) == 0  # a leases 5, uses 1: 4 unused
    clock.advance(5.0)  # they left the window
    limit = a.config.overall.limit
    sent = sum([await b.acquire(chat) == 0 for chat in range(100, 100 + limit)])
    assert sent == limit  # b fills the window with messages that went out
    assert await a.acquire(2) > 0  # a's stale entries give it nothing
    # every entry of b's messages is still there (a's stale ones may linger
    # until a later add trims them: they no longer count)
    members = a.kv.script("return redis.call('ZRANGE', KEYS[1], 0, -1)")
    names = await members([a.keys.rate_all()], [])
    assert sum(n.decode().startswith(b.journal.prefix) for n in names) == limit
    count = a.kv.script("return redis.call('ZCOUNT', KEYS[1], ARGV[1], '+inf')")
    assert await count([a.keys.rate_all()], [repr(clock() - a.config.overall.seconds)]) == limit


@pytest.mark.parametrize("seed", [3, 4])
async def test_concurrent_calls_refusals_and_refunds_keep_the_limits(
    limiters: Callable[[FakeClock], list[FloodLimiter]], seed: int
) -> None:
    """As the bot: many calls at once in each process (a lease in flight while
    others are refused by their chat and give their entries back), refunds of
    messages that did not go out, lulls longer than the windows.  Every
    message that went out counts in Telegram's windows."""
    print(f"seed {seed}")
    rng = random.Random(seed)
    clock = FakeClock()
    fleet = limiters(clock)
    chats = [-100, -101, *range(1, 40)]
    sent: list[float] = []

    async def call(limiter: FloodLimiter, chat: int) -> None:
        if await limiter.acquire(chat) == 0:
            if rng.random() < 0.2:  # did not go out (a no-op edit, overtaken)
                await limiter.refund(chat, held=rng.choice([0.0, 0.1, 0.5]))
            else:
                sent.append(clock.now)

    for _ in range(900):  # 0.05 s steps
        burst = rng.choice([0, 0, 0, 1, 2, 5, 20, 40])
        await asyncio.gather(*(call(rng.choice(fleet), rng.choice(chats)) for _ in range(burst)))
        clock.advance(rng.choice([0.05, 0.05, 0.05, 2.0]))
    most = most_in_a_window(sent, 1.0)
    print(f"sent {len(sent)}, most in 1 s {most}")
    assert most <= 30
    assert len(sent) > 300


async def test_unused_leased_entries_go_back_only_when_the_window_runs_short(
    limiters: Callable[[FakeClock], list[FloodLimiter]],
) -> None:
    """#39: removing a lapsed lease's unused entries cost a command a lease.
    While the fleet-wide window had half its entries free at the last lease
    they stay (they leave by themselves within its seconds); once it runs
    short they go back with the next lease, as before (#28)."""
    clock = FakeClock()
    a, b, _c = limiters(clock)
    key, window = a.keys.rate_all(), a.config.overall
    members = a.kv.script("return redis.call('ZRANGE', KEYS[1], 0, -1)")

    async def mine(prefix: str = "") -> int:
        prefix = prefix or a.journal.prefix
        return sum(n.decode().startswith(f"{prefix}") for n in await members([key], []))

    assert await a.acquire(1) == 0  # a lease of 5, one used
    batch = a.config.lease
    clock.advance(a.config.lease_ttl * 2)  # it lapsed: 4 unused
    assert await a.acquire(2) == 0  # the window was nearly all free: they stay
    assert await mine() == 2 * batch
    for chat in range(100, 100 + window.limit // 2):  # b takes half
        assert await b.acquire(chat) == 0
    clock.advance(a.config.lease_ttl * 2)
    assert await a.acquire(3) == 0  # a lease that left the window short of half
    short = a.lease.name
    assert await mine(f"{short}:") == batch
    clock.advance(a.config.lease_ttl * 2)
    assert await a.acquire(4) == 0  # its unused entries go back with this one
    assert await mine(f"{short}:") == 1  # the one used stays
