"""End to end, who may do what in a group lobby: a double tap on Join seats a
player once; only the lobby's creator starts, removes AI players or opens the
settings panel (which replaces the shared lobby message for everyone) -- anyone
else gets an alert naming the reason, and nothing changes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits, SimUser
from tests.bot.e2e_kit import SAFETY, Harness, running


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def lobby_in_group(h: Harness, users: list[SimUser]) -> tuple[Message, Chat]:
    owner = users[0]
    group = owner.create_group("Card night", *users[1:])
    owner.add_bot_to(group)
    await owner.wait_message("/new", group, timeout=SAFETY)
    for u in users:
        u.start()
        await u.wait_message(timeout=SAFETY)
    owner.send("/new chuvash", group)
    lobby = await owner.wait_message("Invitation link", group, timeout=SAFETY)
    return lobby, group


async def test_a_double_tap_on_join_seats_once(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        owner, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        lobby, group = await lobby_in_group(h, [owner, bob])
        for _round in range(5):  # the callback delivered twice, handled concurrently
            taps = [bob.press("Join", message=lobby, chat=group) for _ in range(2)]
            await asyncio.gather(*(t.wait_answer(SAFETY) for t in taps))
            table = await h.svc.tables.where(bob.id)
            assert table is not None
            assert [s.user for s in table.seats] == [owner.id, bob.id]
            await bob.press("Leave", message=lobby, chat=group).wait_answer(SAFETY)
    assert not fake.stats.errors, fake.stats.errors


async def test_only_the_creator_runs_the_lobby(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        owner, bob, eve = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob", "Eve"))
        lobby, group = await lobby_in_group(h, [owner, bob, eve])
        await bob.press("Join", message=lobby, chat=group).wait_answer(SAFETY)
        await owner.press("Add AI", message=lobby, chat=group).wait_answer(SAFETY)
        await fake.world.wait_for(lambda: "AI 1" in (lobby.text or "") or None, SAFETY)
        seated = await h.svc.tables.where(owner.id)
        assert seated is not None
        tid = seated.id
        table, _, version = await h.svc.tables.get(tid)
        text, edits = lobby.text, lobby.edits
        refused = [
            (bob, "Start", "Only the lobby's creator can start the game."),
            (bob, "Remove AI", "Only the lobby's creator can remove AI players."),
            (bob, "Settings", "Only the lobby's creator can change the settings."),
            (eve, "Settings", "Only the lobby's creator can change the settings."),  # not seated
        ]
        for user, button, alert in refused:
            answer = await user.press(button, message=lobby, chat=group).wait_answer(SAFETY)
            assert answer["show_alert"], (button, answer)
            assert answer["text"] == alert
        await asyncio.sleep(0.3)  # what a refused press might still send has been sent
        assert (await h.svc.tables.get(tid))[::2] == (table, version)
        assert (lobby.text, lobby.edits) == (text, edits)
        # the creator may: the settings panel replaces the lobby message
        answer = await owner.press("Settings", message=lobby, chat=group).wait_answer(SAFETY)
        assert not answer.get("show_alert"), answer
        await fake.world.wait_for(lambda: lobby.edits > edits or None, SAFETY)
    assert not fake.stats.errors, fake.stats.errors
