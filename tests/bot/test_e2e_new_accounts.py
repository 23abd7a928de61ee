"""#38 through the fake Bot API: a new account's lobby says, from the first
join, that its game is not rated for him and why -- not silently casual."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from tests.bot.e2e_kit import SAFETY, running


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def test_a_new_accounts_lobby_says_its_game_is_not_rated_and_why(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(
        redis_url, redis_prefix, fake, flood_limiter=False, rated_after_games=5, rated_after_days=2
    ) as h:
        ann = fake.add_user("Ann", language_code="en")
        bob = fake.add_user("Bob", language_code="en")
        group = ann.create_group("Card night", bob)
        ann.add_bot_to(group)
        await ann.wait_message("/new", group, timeout=SAFETY)
        for u in (ann, bob):
            u.start()
            await u.wait_message(timeout=SAFETY)
        ann.send("/new chuvash", group)
        lobby = await ann.wait_message("Invitation link", group, timeout=SAFETY)
        assert "Not rated for Ann yet" in (lobby.text or ""), lobby.text
        await bob.press("Join", message=lobby, chat=group).wait_answer(SAFETY)
        await fake.world.wait_for(lambda: "Ann, Bob yet" in (lobby.text or "") or None, SAFETY)
        text = lobby.text or ""
        assert "🎲 Casual game" in text  # no two of them would count against each other
        assert "🏆" not in text.split("Casual game")[1]
        table = await h.svc.tables.where(ann.id)
        assert table is not None
        assert table.fresh == (ann.id, bob.id)
        assert not table.rated_now
    assert not fake.stats.errors, fake.stats.error_texts
