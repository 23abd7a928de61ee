"""A whole group game for each variant: the bot is added to a group, /new, Join,
Add AI, Start, players press buttons of their hand messages to the end; rematch,
/stats and /top; no hidden card ever shown; no 429."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import (
    SAFETY,
    assert_no_hidden_cards,
    is_over,
    play_out,
    running,
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


@pytest.mark.parametrize(
    ("variant", "n_humans", "n_ai"),
    [("chuvash", 2, 1), pytest.param("shchelkovsky", 3, 1, marks=pytest.mark.slow)],
)
async def test_group_game_to_the_end(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, variant: str, n_humans: int, n_ai: int
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(n_humans)]
        tid, group = await group_lobby(h, variant, humans, n_ai)
        table_msg = await fake.world.wait_for(
            lambda: next((m for m in fake.messages(group) if m.text and "Players" in m.text), None),
            SAFETY,
        )
        await play_out(h, tid, humans, rng=random.Random(7))
        for u in humans:
            assert is_over(await h.hand_message(u, tid))
        await fake.world.wait_for(lambda: "Game over" in (table_msg.text or ""), SAFETY)
        assert is_over(table_msg)
        checked = await assert_no_hidden_cards(h, tid, humans)
        assert checked > 10
        # stats and the chat's leaderboard
        humans[0].send("/stats")
        stats = await humans[0].wait_message("games: 1", timeout=SAFETY)
        assert stats.text
        humans[0].send("/top", group)
        await humans[0].wait_message("P0", group, timeout=SAFETY)
    assert not fake.stats.errors, fake.stats.errors
