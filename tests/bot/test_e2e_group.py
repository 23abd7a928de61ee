"""A whole group game for each variant: the bot is added to a group, /new, Join,
Add AI, Start, players press buttons of their hand messages to the end; rematch,
/stats and /top; no hidden card ever shown; no 429."""

from __future__ import annotations

import random
import re
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
    [
        ("chuvash", 3, 0),  # rated: every seat human (#25)
        ("chuvash", 2, 1),  # casual: an AI seat
        pytest.param("shchelkovsky", 3, 1, marks=pytest.mark.slow),
    ],
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
        rated = n_ai == 0
        # #25: the result shows each rating and its change in a rated game only
        await fake.world.wait_for(
            lambda: ("Ratings" in (table_msg.text or "")) == rated or None, SAFETY
        )
        if rated:
            # the ratings' lines, up to the deal's commitment under them (#41)
            section = (table_msg.text or "").split("Ratings", 1)[1].strip().split("\n\n")[0]
            lines = section.splitlines()
            assert len(lines) == n_humans
            assert all(re.search(r"^P\d \d+\? \([+−]\d+\)$", line) for line in lines), lines
        checked = await assert_no_hidden_cards(h, tid, humans)
        assert checked > 10
        # stats and the chat's leaderboard
        humans[0].send("/stats")
        stats = await humans[0].wait_message("games: 1", timeout=SAFETY)
        assert stats.text
        humans[0].send("/top", group)
        if rated:  # the group's players by rating (#25): all new, so listed apart
            top = await humans[0].wait_message("New players", group, timeout=SAFETY)
            assert all(f"P{i} " in (top.text or "") for i in range(n_humans))
            humans[1].send("/rating")
            mine = await humans[1].wait_message("Reliability", timeout=SAFETY)
            assert "games: 1" in (mine.text or "")
            assert "100%" in (mine.text or "")
        else:
            await humans[0].wait_message("No rated games in this chat yet", group, timeout=SAFETY)
    assert not fake.stats.errors, fake.stats.error_texts
