"""Many asyncio tasks and several OS processes race moves on one game: exactly
one move is applied per version, and the final state is the pure engine's
replay of the accepted moves."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

import pytest

from tables import LiveConfig, TableService
from tests.tables._racer import Accepted, race, race_in_process
from tests.tables.conftest import new_table, replay_current_game, same_state


async def check_accepted(svc: TableService, tid: str, accepted: list[Accepted]) -> None:
    versions = [a[0] for a in accepted]
    assert len(versions) == len(set(versions)), "two moves applied at one version"
    assert all(new == old + 1 for old, new, _, _ in accepted)
    log = [e for e in await svc.admin.event_page(tid, 0, 100_000) if e.kind == "act"]
    assert sorted((e.version, e.seat, e.text) for e in log) == sorted(
        (new, seat, text) for _, new, seat, text in accepted
    )
    _, state, _ = await svc.tables.get(tid)
    assert state is not None
    assert same_state(state, await replay_current_game(svc, tid))


@pytest.mark.slow
async def test_asyncio_tasks_race_on_one_game(make_service: Callable[..., TableService]) -> None:
    services = [make_service() for _ in range(3)]
    tid = await new_table(services[0], 4, variant="shchelkovsky")
    results = await asyncio.gather(
        *(race(services[i % 3], tid, seed=i, attempts=50) for i in range(24))
    )
    accepted = [a for r in results for a in r]
    assert accepted
    await check_accepted(services[0], tid, accepted)


@pytest.mark.slow
async def test_processes_race_on_one_game(
    make_service: Callable[..., TableService], live_url: str, config: LiveConfig
) -> None:
    svc = make_service()
    tid = await new_table(svc, 5, variant="chuvash")
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=4, mp_context=ctx) as pool:
        futures = [
            pool.submit(race_in_process, live_url, config.prefix, tid, seed, 120)
            for seed in range(4)
        ]
        results = [f.result(timeout=300) for f in futures]
    accepted = [a for r in results for a in r]
    assert accepted
    await check_accepted(svc, tid, accepted)
