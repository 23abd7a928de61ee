"""The flood limiter with a group's learned budget (#24): which windows an
ephemeral write counts in (with the group's public writes, or apart), the
public minute cut by a 429, and the switch to "counted" that a 429 shows --
on the real Redis, a fake clock passed into the scripts."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from tables import LiveConfig, TableService
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.flood.gate import (
    LAST_RESORT,
    CallOptions,
    FloodGate,
    OutgoingStats,
    Receipt,
)
from telegram_bot.delivery.flood.limiter import FloodConfig, FloodLimiter
from telegram_bot.delivery.flood.rates import Verdict
from telegram_bot.delivery.waiting_line import ACTOR, OTHERS, OWN_VIEW, TABLE, Priority, RankedLine
from telegram_bot.state.budgets import BudgetRules, Budgets
from tests.tables.conftest import FakeClock

GROUP = -100555
PACE = 1.4  # seconds between two writes: inside the group chat's own 3 in any 4 s


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def make_limiter(
    redis_url: str, redis_prefix: str, clock: FakeClock
) -> AsyncIterator[Callable[..., FloodLimiter]]:
    """Limiters as separate bot processes (each its own service and client),
    with the groups' learned budgets; ``counted``: the starting assumption."""
    made: list[TableService] = []

    def make(*, counted: bool = True) -> FloodLimiter:
        svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix), clock=clock)
        budgets = Budgets(svc.kv, BudgetRules(counted=counted), clock=clock)
        made.append(svc)
        return FloodLimiter(svc.kv, FloodConfig(), clock=clock, budgets=budgets)

    yield make
    for svc in made:
        await svc.aclose()


async def zcard(limiter: FloodLimiter, key: str) -> int:
    """A window's entries (not its records below 0: the unanswered calls and
    the key's '~', #39)."""
    return int(await limiter.kv.store.one(lambda p: p.zcount(key, 0, "+inf")))


async def take(limiter: FloodLimiter, to: Address | None = None) -> float:
    return (await limiter.take(to or Address(GROUP))).wait


async def test_counted_ephemerals_share_the_groups_minute(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    limiter = make_limiter(counted=True)
    for i in range(20):
        assert await take(limiter, Address(GROUP, i + 1, receiver=i + 1)) == 0
        clock.advance(PACE)
    assert await zcard(limiter, limiter.keys.rate_group(GROUP)) == 20
    assert await take(limiter) > 0  # a public write waits for the minute


async def test_ephemerals_apart_leave_the_public_minute_alone(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    limiter = make_limiter(counted=False)
    for i in range(25):  # more than the public 20, each to its own member's message
        assert await take(limiter, Address(GROUP, i + 1, receiver=i + 1)) == 0
        clock.advance(PACE)
    k = limiter.keys
    assert await zcard(limiter, k.rate_group(GROUP)) == 0
    assert await zcard(limiter, k.rate_ephemeral(GROUP)) == 25
    for _ in range(20):  # the public minute is whole
        assert await take(limiter) == 0
        clock.advance(PACE)
    assert await take(limiter) > 0
    # one member's messages keep the per-chat pace: 3 in any 4 s
    for _ in range(3):
        assert await take(limiter, Address(GROUP, 99, receiver=99)) == 0
    assert await take(limiter, Address(GROUP, 99, receiver=99)) > 0


async def test_one_members_ephemeral_sends_and_edits_share_his_window(
    make_limiter: Callable[..., FloodLimiter],
) -> None:
    """Telegram, not counting ephemerals in the group, counts them as messages
    to their receiver: a send to him and edits of two of his messages fill his
    window (3 in any 3 s) -- the CI's 429s of an in-group game came from the
    per-message windows, which let a send and another message's edit through."""
    limiter = make_limiter(counted=False)
    assert await take(limiter, Address(GROUP, receiver=7)) == 0  # a new ephemeral message
    assert await take(limiter, Address(GROUP, 1, receiver=7)) == 0
    assert await take(limiter, Address(GROUP, 2, receiver=7)) == 0
    assert await take(limiter, Address(GROUP, 3, receiver=7)) > 0
    assert await take(limiter, Address(GROUP, receiver=7)) > 0
    # another member's window is his own
    assert await take(limiter, Address(GROUP, 4, receiver=8)) == 0
    assert await zcard(limiter, limiter.keys.rate_receiver(GROUP, 7)) == 3


async def test_a_429_cuts_the_public_minute_for_every_process(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    a, b = make_limiter(), make_limiter()
    learned = await a.refused(GROUP)
    assert learned is not None
    assert learned.public == 10
    clock.advance(a.config.budget_refresh)  # b's cached reading is renewed
    for _ in range(10):
        assert await take(b) == 0
        clock.advance(PACE)
    assert await take(b) > 0  # the 11th in the minute waits
    assert await take(a) > 0


async def test_a_429_the_shared_minute_explains_makes_ephemerals_counted(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """Telegram counts ephemerals after all: the group's public and ephemeral
    writes of the minute reached its budget when an ephemeral one was refused."""
    limiter = make_limiter(counted=False)
    for i in range(10):
        assert await take(limiter) == 0
        assert await take(limiter, Address(GROUP, i + 1, receiver=i + 1)) == 0
        clock.advance(2 * PACE)
    k = limiter.keys

    async def below_zero(key: str) -> int:  # the records of the first window (#39)
        return int(await limiter.kv.store.one(lambda p: p.zcount(key, "-inf", "(0")))

    assert await below_zero(k.rate_ephemeral(GROUP)) > 0  # its '~'
    learned = await limiter.refused(Address(GROUP, receiver=1))
    assert learned is not None
    assert learned.counted
    assert await below_zero(k.rate_group(GROUP)) == 0  # the minute got no record
    # from now on an ephemeral write counts in the group's minute: it is full
    assert await take(limiter, Address(GROUP, 50, receiver=50)) > 0


async def test_a_private_chat_learns_nothing(make_limiter: Callable[..., FloodLimiter]) -> None:
    limiter = make_limiter()
    assert await limiter.refused(42) is None
    assert await limiter.budget(42) is None


async def until(condition: Callable[[], bool]) -> None:
    """Let the other tasks run (their Redis round trips too) until ``condition``."""
    for _ in range(2000):
        if condition():
            return
        await asyncio.sleep(0.005)
    raise AssertionError("the tasks never got there")


async def test_a_groups_waiting_calls_go_by_what_they_are_worth(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """#24, item 2: while the group's minute is full, the table message's edit
    waits first; the presser's own view, asked later, still gets the first
    write the minute lets through.  (Before, both slept out the wait and the
    one that had waited longer -- the table -- went first.)"""
    limiter = make_limiter(counted=True)
    for _ in range(20):
        assert await take(limiter) == 0
        clock.advance(PACE)
    woken = asyncio.Event()
    sleeping: list[float] = []

    async def sleep(seconds: float) -> None:
        sleeping.append(seconds)
        await woken.wait()

    gate = FloodGate(limiter, sleep=sleep, max_wait=600.0, stats=OutgoingStats())
    admitted: list[str] = []

    async def write(name: str, options: CallOptions) -> None:
        assert await gate.admit(Address(GROUP), None, options)
        admitted.append(name)

    table = asyncio.create_task(write("table", CallOptions(Priority.DEFERRED, rank=TABLE)))
    await until(lambda: len(sleeping) == 1)  # the table's edit sleeps out the minute
    own = asyncio.create_task(write("own view", CallOptions(Priority.URGENT)))
    line = gate.chats.line(GROUP)
    await until(lambda: len(sleeping) == 2 or line.outranked(TABLE))
    clock.advance(max(sleeping))  # the oldest write of the minute left it: room for one
    woken.set()
    await until(lambda: bool(admitted))
    assert admitted == ["own view"]
    clock.advance(60.0)
    await asyncio.wait_for(table, 5)
    await asyncio.wait_for(own, 5)
    assert admitted == ["own view", "table"]
    assert len(gate.chats) == 0  # an idle chat's line is dropped


async def test_a_chat_line_serves_by_rank_and_ages_the_table() -> None:
    clock = FakeClock()
    line = RankedLine(age=8.0, clock=clock)
    await line.acquire(OWN_VIEW)  # the head
    served: list[int] = []

    async def wait(rank: int) -> None:
        await line.acquire(rank)
        served.append(rank)
        line.release()

    tasks = [asyncio.create_task(wait(r)) for r in (TABLE, OTHERS, OWN_VIEW, ACTOR)]
    await asyncio.sleep(0)
    assert line.outranked(ACTOR)
    line.release()
    await asyncio.gather(*tasks)
    assert served == [OWN_VIEW, ACTOR, OTHERS, TABLE]
    assert line.idle
    # a table edit that waited 3 x 8 s counts as an own view: it is not starved
    await line.acquire(OWN_VIEW)
    served.clear()
    late = asyncio.create_task(wait(TABLE))
    await asyncio.sleep(0)
    clock.advance(25.0)
    new = asyncio.create_task(wait(OWN_VIEW))
    await asyncio.sleep(0)
    line.release()
    await asyncio.gather(late, new)
    assert served == [TABLE, OWN_VIEW]


async def test_a_call_past_its_patience_still_waits_for_a_token(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#27's arena benchmark drew a 429: under a long overload a call waited past
    ``max_wait`` and went out without a token, into a full window.  Past its
    patience a call leaves the lines (nobody's turn to wait for any more) but
    still takes its token: it goes out when a window has room, counted."""
    limiter, other = make_limiter(counted=True), make_limiter(counted=True)
    for _ in range(20):
        assert await take(limiter) == 0
        clock.advance(PACE)
    grabbed: list[float] = []  # another process takes each room first, 3 times

    async def sleep(seconds: float) -> None:
        clock.advance(seconds)
        if len(grabbed) < 3 and await take(other) == 0:
            grabbed.append(clock())

    tokens: list[float] = []
    take_token = limiter.take

    async def counted_take(*args: Any, **kwargs: Any) -> Verdict:
        verdict = await take_token(*args, **kwargs)
        if verdict.wait == 0:
            tokens.append(clock())
        return verdict

    monkeypatch.setattr(limiter, "take", counted_take)
    gate = FloodGate(limiter, sleep=sleep, max_wait=20.0, stats=OutgoingStats())
    options = CallOptions(Priority.DEFERRED, rank=TABLE)
    start = clock()
    assert await asyncio.wait_for(gate.admit(Address(GROUP), None, options), 5)
    assert clock() - start < 20.0 * LAST_RESORT  # not the last resort: a token
    assert len(grabbed) == 3  # it ran out of patience long before
    assert len(tokens) == 1  # and still went out with a token of the minute
    assert tokens[0] > grabbed[-1]
    assert await take(limiter) > 0  # the minute is full again: it counted
    assert len(gate.chats) == 0


async def test_one_burst_of_429s_through_the_gates_cuts_the_budget_once(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """#38: each call's receipt keeps the budget generation its tokens were
    taken under, and its 429 passes it back (``FloodGate.hold``): three calls
    of two processes admitted under the documented 20 and refused together
    cut the budget once, to 10.  A call admitted under the cut budget and
    refused again is a new reading: 5."""
    a, b = make_limiter(), make_limiter()

    async def sleep(seconds: float) -> None:  # on the limiters' clock
        clock.advance(seconds)
        await asyncio.sleep(0)

    gates = [FloodGate(x, sleep=sleep, max_wait=600.0, stats=OutgoingStats()) for x in (a, b)]
    calls = [(gates[0], Receipt()), (gates[1], Receipt()), (gates[0], Receipt())]
    ticket = await gates[0].prepay(
        Address(GROUP), Priority.DEFERRED
    )  # the third's tokens, paid ahead
    for i, (gate, receipt) in enumerate(calls):
        options = CallOptions(prepaid=ticket) if i == 2 else CallOptions()
        assert await gate.admit(Address(GROUP), None, options, receipt=receipt)
        assert receipt.generation == 0  # the documented budget: no record yet
    await asyncio.gather(
        *(gate.hold(Address(GROUP), 3.0, generation=r.generation) for gate, r in calls)
    )
    budget = await a.budget(GROUP)
    assert budget is not None
    assert (budget.public, budget.refused_public) == (10, 3)
    clock.advance(3.0)  # the hold is over
    later = Receipt()
    assert await gates[1].admit(Address(GROUP), None, CallOptions(), receipt=later)
    assert later.generation == budget.generation  # admitted under the cut budget
    await gates[1].hold(Address(GROUP), 3.0, generation=later.generation)
    again = await b.budget(GROUP)
    assert again is not None
    assert (again.public, again.refused_public) == (5, 4)


async def test_a_429_of_unknown_generation_within_the_bursts_retry_after_cuts_nothing(
    make_limiter: Callable[..., FloodLimiter], clock: FakeClock
) -> None:
    """A call that went out without its tokens (the gate's last resort) has no
    generation: its 429 belongs to the burst while it comes within the first
    429's retry_after."""
    limiter = make_limiter()
    budgets = limiter.budgets
    assert budgets is not None
    gate = FloodGate(limiter, sleep=asyncio.sleep, max_wait=600.0, stats=OutgoingStats())
    await gate.hold(Address(GROUP), 30.0, generation=0)
    clock.advance(10.0)
    await gate.hold(Address(GROUP), 30.0)
    budget = await budgets.get(GROUP)
    assert (budget.public, budget.refused_public) == (10, 2)
    clock.advance(20.0)
    await gate.hold(Address(GROUP), 30.0)
    assert (await budgets.get(GROUP)).public == 5
