"""End to end (#41, the points found after the third pass): what the messages
of a finished group game say once it is over.

- The lobby message above the table no longer says «The game has started»
  once the table below shows the result: it points to the result."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import SAFETY, play_out, running


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def test_the_lobby_line_gives_way_to_the_result_below(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        tid, group = await group_lobby(h, "chuvash", [ann, bob], 0)
        lobby_msg = await fake.world.wait_for(
            lambda: next(
                (m for m in fake.messages(group) if "The game has started" in (m.text or "")),
                None,
            ),
            SAFETY,
        )
        table_msg = await fake.world.wait_for(
            lambda: next((m for m in fake.messages(group) if "Players" in (m.text or "")), None),
            SAFETY,
        )
        hands = {u.id: await h.hand_message(u, tid) for u in (ann, bob)}
        for u in (ann, bob):
            mine = hands[u.id]
            assert mine is not None
            assert mine.chat.id == u.id  # his hand in his private chat
        await play_out(h, tid, [ann, bob], rng=random.Random(5))
        await fake.world.wait_for(lambda: "Game over" in (table_msg.text or "") or None, SAFETY)
        # d. the line announcing the start gives way to the result below
        await fake.world.wait_for(
            lambda: "The game is over: the result is below." in (lobby_msg.text or "") or None,
            SAFETY,
            "the lobby message still announces the start above the result",
        )
        assert "The game has started" not in (lobby_msg.text or "")
    assert not fake.stats.errors, fake.stats.error_texts
