"""Hypothesis-driven random games through the service, step by step against
the pure engine (with AI seats, whose moves the result reports)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from hypothesis import HealthCheck, given
from hypothesis import strategies as st

from engine import Action, GameState, new_game
from engine.ai import KINDS, SLOW_KINDS
from tables import MOVE_KINDS, LiveConfig, TableService, WriteResult
from tests.profiles import budget
from tests.tables.conftest import same_state

# the search AI (~100 ms a decision) has its own tests (tests/tables/test_deciders.py);
# here hundreds of random tables would take minutes with it
FAST_KINDS = [k for k in KINDS if k not in SLOW_KINDS]


def follow(mirror: GameState, result: WriteResult) -> None:
    for e in result.events:
        if e.kind in MOVE_KINDS:
            mirror.apply(Action.from_text(e.seat, e.text))


async def play(url: str, prefix: str, data: st.DataObject) -> None:
    variant = data.draw(st.sampled_from(["chuvash", "shchelkovsky"]), label="variant")
    top = 6 if variant == "chuvash" else 10
    humans = data.draw(st.integers(1, 4), label="humans")
    ais = data.draw(st.integers(max(0, 2 - humans), top - humans), label="ais")
    options = None
    if variant == "shchelkovsky":
        options = {"decks": data.draw(st.sampled_from([2, 4]), label="decks")}
    svc = TableService.from_url(url, LiveConfig(prefix=prefix))
    game_seed = data.draw(st.integers(0, 2**62), label="seed")
    svc.games.new_seed = lambda: game_seed
    try:
        r = await svc.lobbies.create_lobby(1, "U1", variant=variant, options=options, timer=0)
        tid = r.table_id
        for u in range(2, humans + 1):
            await svc.lobbies.join(tid, u, f"U{u}")
        for _ in range(ais):
            await svc.lobbies.add_ai(tid, 1, data.draw(st.sampled_from(FAST_KINDS)))
        r = await svc.games.start(tid, 1)
        table = r.table
        mirror = new_game(variant, humans + ais, table.seed, table.options)
        follow(mirror, r)
        moves = data.draw(st.integers(5, 60), label="moves")
        for _ in range(moves):
            table, state, version = await svc.tables.get(tid)
            assert state is not None
            assert same_state(state, mirror)
            if state.over:
                break
            seats = [s for s in state.to_act() if not table.seats[s].ai_controlled]
            seat = data.draw(st.sampled_from(seats))
            action = data.draw(st.sampled_from(state.legal_actions(seat)))
            user = table.seats[seat].user
            assert user is not None
            r = await svc.games.apply(tid, user, action.text(), version)
            assert r.version == version + 1
            follow(mirror, r)
            assert r.game_over == mirror.over
        _, state, _ = await svc.tables.get(tid)
        assert state is not None
        assert same_state(state, mirror)
    finally:
        await svc.aclose()


@pytest.mark.slow
@budget(0.25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_games_match_the_engine(
    redis_url: str, redis_prefix: str, data: st.DataObject
) -> None:
    prefix = f"{redis_prefix}{uuid.uuid4().hex[:6]}:"
    asyncio.run(play(redis_url, prefix, data))
