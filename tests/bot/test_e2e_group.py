"""A whole group game for each variant: the bot is added to a group, /new, Join,
Add AI, Start, players press buttons of their hand messages to the end; rematch,
/stats and /top; no hidden card ever shown; no 429."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import Chat, FakeTelegram, RateLimits, SimUser
from tests.bot.e2e_kit import (
    SAFETY,
    Harness,
    assert_no_hidden_cards,
    is_over,
    play_out,
    record_seeds,
    running,
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def group_lobby(h: Harness, variant: str, humans: list[SimUser], ai: int) -> tuple[str, Chat]:
    fake = h.fake
    owner = humans[0]
    group = owner.create_group("Card night", *humans[1:])
    owner.add_bot_to(group)
    await owner.wait_message("/new", group, timeout=SAFETY)  # the two-line how-to
    for u in humans:
        u.start()
        await u.wait_message(timeout=SAFETY)
    owner.send(f"/new {variant}", group)
    lobby = await owner.wait_message("Invitation link", group, timeout=SAFETY)
    for u in humans[1:]:
        answer = await u.press("Join", message=lobby, chat=group).wait_answer(SAFETY)
        assert answer["url"] is None, answer
    for _ in range(ai):
        await owner.press("Add AI", message=lobby, chat=group).wait_answer(SAFETY)
    table = await h.svc.where(owner.id)
    assert table is not None
    assert len(table.seats) == len(humans) + ai
    record_seeds(h.svc)
    await owner.press("Start", message=lobby, chat=group).wait_answer(SAFETY)
    for u in humans:
        await fake.wait_message(u.chat, "Players", timeout=SAFETY)
    await h.wait_hands(table.id, humans)
    return table.id, group


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
