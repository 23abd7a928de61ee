"""A racer for tests/tables/test_races.py: plays random moves on one table as fast
as it can, keeping the moves the service accepted.  Importable by spawned
processes."""

from __future__ import annotations

import asyncio
import random

from tables import LiveConfig, LiveError, StaleVersion, TableService

Accepted = tuple[int, int, int, str]  # (expected version, new version, seat, action text)


async def race(svc: TableService, table_id: str, seed: int, attempts: int) -> list[Accepted]:
    rng = random.Random(seed)
    accepted: list[Accepted] = []
    for _ in range(attempts):
        table, state, version = await svc.tables.get(table_id)
        assert state is not None
        if state.over:
            break
        seats = [s for s in state.to_act() if not table.seats[s].ai_controlled]
        seat = rng.choice(seats)
        action = rng.choice(state.legal_actions(seat)).text()
        user = table.seats[seat].user
        assert user is not None
        try:
            r = await svc.games.apply(table_id, user, action, version)
        except StaleVersion:
            continue
        except LiveError as e:  # the game ended meanwhile; anything else is a failure
            if e.code != "game_over":
                raise
            break
        accepted.append((version, r.version, seat, action))
        await asyncio.sleep(0)
    return accepted


def race_in_process(
    url: str, prefix: str, table_id: str, seed: int, attempts: int
) -> list[Accepted]:
    async def main() -> list[Accepted]:
        svc = TableService.from_url(url, LiveConfig(prefix=prefix))
        try:
            result: list[Accepted] = await race(svc, table_id, seed, attempts)
            return result
        finally:
            await svc.aclose()

    return asyncio.run(main())
