"""The rolling-restart soak (#28), a minute: 3 bot processes, 50 live games,
one random process stopped -- SIGTERM, and separately SIGKILL -- and started
again every 12 s, 3 times (:mod:`harness.soak`).  Nothing lost, nothing
applied twice, no game stuck, no 429; no press unanswered beyond those in
flight at a SIGKILL (a SIGTERM leaves none).  ``bench/faults.py --soak`` runs
the same for ten minutes and more."""

from __future__ import annotations

import random

import pytest

from harness.soak import soak

# one worker runs these one after another (#37): the soak's three bot processes
# never share the two cores with the CPU-bound solver and tournament tests
pytestmark = pytest.mark.xdist_group("heavy")


@pytest.mark.slow
@pytest.mark.parametrize("kill", ["SIGTERM", "SIGKILL"])
async def test_rolling_restarts_lose_nothing(kill: str, redis_url: str, redis_prefix: str) -> None:
    seed = random.randrange(10**6)
    print(f"seed {seed}")
    # 3 restarts, one every 12 s (bench/faults.py --soak: ten minutes and more)
    report = await soak(
        redis_url, redis_prefix, kill=kill, games=50, seconds=48, every=12, seed=seed
    )
    print(report.table())
    print("\n".join(report.details))  # all of them; the assertions show the first
    details = "\n".join(report.details[:10])
    assert report.restarts == 3
    assert report.games_played >= 50
    assert report.stops_not_clean == 0, details
    assert report.lost == 0, details
    assert report.applied_twice == 0, details
    assert report.stuck == 0, details
    assert report.retry_after == 0, details
    assert report.unanswered_beyond_kills == 0, details
    if kill == "SIGTERM":
        assert report.unanswered == 0
