"""A group's outgoing budgets learned from refusals (#24, :mod:`telegram_bot.state.budgets`):
AIMD per group, public and ephemeral apart, shared by every process, on one
Redis and on a cluster; a fake clock drives the additive increase."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable
from dataclasses import replace

import pytest

from tables import LiveConfig, TableService
from telegram_bot.state.budgets import EPHEMERAL, PUBLIC, BudgetRules, Budgets
from tests.tables.conftest import FakeClock

GROUP = -100777


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["single", "cluster"])
def live_url(request: pytest.FixtureRequest) -> str:
    """One Redis server (``single``) and a 3-master Redis Cluster (``cluster``)."""
    name = "redis_url" if request.param == "single" else "redis_cluster_url"
    return str(request.getfixturevalue(name))


@pytest.fixture
async def make_service(
    live_url: str, redis_prefix: str, clock: FakeClock
) -> AsyncIterator[Callable[[], TableService]]:
    """Services as separate bot processes would have them (each its own client),
    sharing the test's prefix: the bot's budgets go through their ``kv``."""
    made: list[TableService] = []

    def make() -> TableService:
        svc = TableService.from_url(live_url, LiveConfig(prefix=redis_prefix), clock=clock)
        made.append(svc)
        return svc

    yield make
    for svc in made:
        await svc.aclose()


@pytest.fixture
def svc(make_service: Callable[[], TableService]) -> TableService:
    return make_service()


@functools.cache
def budgets_of(svc: TableService) -> Budgets:
    """The bot's budgets over ``svc``'s key-value API: one per service, as a
    bot process has one (#39: the bot's own state, no longer the service's)."""
    return Budgets(svc.kv, clock=svc.clock)


def budgets(svc: TableService, *, counted: bool = True) -> Budgets:
    budgets_of(svc).rules = replace(budgets_of(svc).rules, counted=counted)
    return budgets_of(svc)


async def test_a_group_nothing_taught_has_the_documented_figures(svc: TableService) -> None:
    got = await budgets(svc).get(GROUP)
    assert (got.public, got.ephemeral, got.counted, got.learned) == (20, 60, True, False)
    got = await budgets(svc, counted=False).get(GROUP)
    assert (got.counted, got.learned) == (False, False)
    assert await budgets_of(svc).all() == []


async def test_a_public_refusal_halves_and_time_gives_back(
    svc: TableService, clock: FakeClock
) -> None:
    b = budgets(svc)
    got = await b.refused(GROUP, PUBLIC)
    assert (got.public, got.refused_public, got.learned) == (10, 1, True)
    assert "public write refused" in got.why
    assert (await b.refused(GROUP, PUBLIC)).public == 5
    assert (await b.refused(GROUP, PUBLIC)).public == 4  # the floor
    clock.advance(59)
    assert (await b.get(GROUP)).public == 4
    clock.advance(1)  # one minute without a refusal: one more a minute
    assert (await b.get(GROUP)).public == 5
    clock.advance(3600)
    assert (await b.get(GROUP)).public == 20  # never above the documented ceiling
    clock.advance(1)
    assert (await b.refused(GROUP, PUBLIC)).public == 10  # cut from where it stood


async def test_counted_ephemerals_cut_the_shared_minute(svc: TableService) -> None:
    got = await budgets(svc).refused(GROUP, EPHEMERAL)
    assert (got.public, got.ephemeral, got.counted, got.refused_ephemeral) == (10, 60, True, 1)


async def test_ephemerals_apart_learn_apart_until_they_prove_shared(svc: TableService) -> None:
    b = budgets(svc, counted=False)
    got = await b.refused(GROUP, EPHEMERAL)
    assert (got.public, got.ephemeral, got.counted) == (20, 30, False)
    got = await b.refused(GROUP, EPHEMERAL)  # 15 < 20: they evidently share it
    assert (got.public, got.ephemeral, got.counted) == (20, 15, True)
    assert "ephemerals count" in got.why


@pytest.mark.parametrize("kind", [PUBLIC, EPHEMERAL])
async def test_a_refusal_one_shared_minute_explains_switches_to_counted(
    svc: TableService, kind: str
) -> None:
    got = await budgets(svc, counted=False).refused(GROUP, kind, shared=True)
    assert (got.public, got.ephemeral, got.counted) == (20, 60, True)
    assert "ephemerals count" in got.why


async def test_a_public_refusal_without_ephemerals_cuts_the_public_minute(
    svc: TableService,
) -> None:
    got = await budgets(svc, counted=False).refused(GROUP, PUBLIC)
    assert (got.public, got.ephemeral, got.counted) == (10, 60, False)


async def test_every_process_sees_what_one_learned(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    a, b = make_service(), make_service()
    await budgets_of(a).refused(GROUP, PUBLIC)
    clock.advance(1)
    await budgets_of(b).refused(GROUP - 1, PUBLIC)
    assert (await budgets_of(b).get(GROUP)).public == 10
    listed = await budgets_of(a).all()
    assert [x.chat for x in listed] == [GROUP - 1, GROUP]  # the latest change first
    assert all(x.refused_public == 1 for x in listed)


async def test_a_record_expires_and_leaves_the_index(svc: TableService, clock: FakeClock) -> None:
    budgets_of(svc).rules = replace(budgets_of(svc).rules, ttl=0.05)
    await budgets_of(svc).refused(GROUP, PUBLIC)
    assert await budgets_of(svc).all() != []
    await asyncio.sleep(0.1)  # real time: the hash's 50 ms TTL runs out
    assert await budgets_of(svc).all() == []
    assert (await budgets_of(svc).get(GROUP)).learned is False


async def test_rules_and_kinds_are_checked(svc: TableService) -> None:
    with pytest.raises(ValueError, match="floor"):
        BudgetRules(floor=0)
    with pytest.raises(ValueError, match="beta"):
        BudgetRules(beta=1.0)
    with pytest.raises(ValueError, match="kind"):
        await budgets_of(svc).refused(GROUP, "x")
    assert await budgets_of(svc).all() == []  # nothing written


# ---------------------------------------------------------------- one burst, one cut (#38)
async def test_one_burst_of_refusals_cuts_once_across_processes(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """#38: six writes admitted under the documented budget, in flight together
    from two processes, all drew a 429 -- one lesson, not six halvings (20 ->
    10, not 20 -> 4).  A write admitted under the cut budget and refused again
    is a new reading: it cuts again."""
    a, b = make_service(), make_service()
    admitted = (await budgets_of(a).get(GROUP)).generation
    burst = [budgets_of(s).refused(GROUP, PUBLIC, admitted=admitted) for s in (a, b) * 3]
    answers = await asyncio.gather(*burst)
    assert sorted(x.repeat for x in answers) == [False] + [True] * 5
    got = await budgets_of(b).get(GROUP)
    assert (got.public, got.refused_public) == (10, 6)
    clock.advance(61)  # the burst's retry_after is over; one quiet minute: 11
    again = await budgets_of(a).refused(GROUP, PUBLIC, admitted=got.generation)
    assert (again.public, again.repeat) == (5, False)
    # a straggler of the first burst, however late, teaches nothing new
    late = await budgets_of(b).refused(GROUP, PUBLIC, admitted=admitted)
    assert (late.public, late.repeat, late.refused_public) == (5, True, 8)


async def test_a_burst_of_unknown_generation_cuts_once_within_its_retry_after(
    make_service: Callable[..., TableService], clock: FakeClock
) -> None:
    """Writes whose generation is unknown (sent without a token) belong to the
    burst while they arrive within the first refusal's retry_after."""
    a, b = make_service(), make_service()
    burst = [budgets_of(s).refused(GROUP, PUBLIC, burst=30.0) for s in (a, b) * 2]
    await asyncio.gather(*burst)
    assert (await budgets_of(a).get(GROUP)).public == 10
    clock.advance(29)
    assert (await budgets_of(b).refused(GROUP, PUBLIC, burst=30.0)).public == 10
    clock.advance(1)  # its retry_after is over: a new reading
    assert (await budgets_of(b).refused(GROUP, PUBLIC, burst=30.0)).public == 5


async def test_one_burst_of_ephemeral_refusals_does_not_make_them_counted(
    make_service: Callable[..., TableService],
) -> None:
    """While ephemerals are apart, a burst of ephemeral 429s halves their budget
    once (60 -> 30): not again and again below the public 20, which switched
    the group to counted for a week on one burst's say-so."""
    a, b = make_service(), make_service()
    for s in (a, b):
        budgets(s, counted=False)
    burst = [budgets_of(s).refused(GROUP, EPHEMERAL, admitted=0) for s in (a, b) * 2]
    await asyncio.gather(*burst)
    got = await budgets_of(a).get(GROUP)
    assert (got.public, got.ephemeral, got.counted, got.refused_ephemeral) == (20, 30, False, 4)


async def test_the_switch_to_counted_is_the_bursts_one_lesson(svc: TableService) -> None:
    """The first refusal of a burst that one shared minute explains switches the
    group to counted; the burst's other ephemeral refusals, admitted while
    they were apart, do not go on to cut the shared minute."""
    b = budgets(svc, counted=False)
    first = await b.refused(GROUP, EPHEMERAL, shared=True, admitted=0)
    assert (first.public, first.counted, first.generation) == (20, True, 1)
    for _ in range(3):
        got = await b.refused(GROUP, EPHEMERAL, admitted=0)
        assert (got.public, got.ephemeral, got.counted, got.repeat) == (20, 60, True, True)
    got = await b.refused(GROUP, EPHEMERAL, admitted=1)  # admitted as counted: a reading
    assert (got.public, got.counted, got.repeat) == (10, True, False)


async def test_a_repeat_keeps_the_records_life(svc: TableService, clock: FakeClock) -> None:
    """A record lives ``ttl`` after its last change; a repeat is no change."""
    budgets_of(svc).rules = replace(budgets_of(svc).rules, ttl=3600.0)
    await budgets_of(svc).refused(GROUP, PUBLIC, admitted=0)
    key = budgets_of(svc).key(GROUP)
    ttl = int(await svc.kv.store.one(lambda p: p.pttl(key)))
    await svc.kv.store.one(lambda p: p.pexpire(key, ttl // 2))
    await budgets_of(svc).refused(GROUP, PUBLIC, admitted=0)
    assert int(await svc.kv.store.one(lambda p: p.pttl(key))) <= ttl // 2
    with pytest.raises(ValueError, match="generation"):
        await budgets_of(svc).refused(GROUP, PUBLIC, admitted=-1)


@pytest.mark.parametrize("shared", [False, True])
async def test_a_change_of_one_budget_leaves_the_others_growth_alone(
    svc: TableService, clock: FakeClock, shared: bool
) -> None:
    """Each budget grows back from its own last cut: a later cut of the
    ephemeral budget, or the switch to counted, does not restart the public
    budget's minute (it lost up to 59 s of growth at every such change)."""
    b = budgets(svc, counted=False)
    got = await b.refused(GROUP, PUBLIC, admitted=0)
    assert got.public == 10
    clock.advance(90)  # 11, half way to 12
    got = await b.refused(GROUP, EPHEMERAL, shared=shared, admitted=got.generation)
    assert (got.public, got.ephemeral, got.counted) == (11, 60 if shared else 30, shared)
    clock.advance(30)
    assert (await b.get(GROUP)).public == 12  # two minutes since its cut
