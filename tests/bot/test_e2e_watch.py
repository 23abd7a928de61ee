"""Spectators end to end (issue #16): a group member who does not play presses
*Watch* under the group's table message and follows the game in his private
chat, updated to the end -- never a hidden card (the leak check covers his
messages: public cards only); a player pressing it is told his cards are in
his chat; a lobby that forbids spectators shows no *Watch* and refuses
``/watch``."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, Message, RateLimits
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import SAFETY, assert_no_hidden_cards, cards_in, play_out, running

WATCH = "👀 Watch in private"


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def test_spectator_follows_the_game_without_hands(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(2)]
        carol = fake.add_user("Carol", language_code="en")
        carol.start()
        await carol.wait_message(timeout=SAFETY)
        tid, group = await group_lobby(h, "chuvash", humans, 1, watchers=[carol])

        def table_message() -> Message | None:
            return next((m for m in fake.messages(group) if WATCH in m.button_texts), None)

        table = await fake.world.wait_for(table_message, SAFETY)
        answer = await humans[0].press(WATCH, message=table, chat=group).wait_answer(SAFETY)
        assert "you play at this table" in (answer.get("text") or "").lower()
        # nothing refused: a toast, and no claim about where his cards are (#29)
        assert not answer["show_alert"], answer
        assert "private chat" not in (answer.get("text") or "")
        answer = await carol.press(WATCH, message=table, chat=group).wait_answer(SAFETY)
        assert "You are watching" in (answer.get("text") or "")
        mine = await carol.wait_message("Players", timeout=SAFETY)
        assert "Fair deal" in (mine.text or "")
        assert not cards_in(mine.text or "") - cards_in(table.text or "")  # the public view
        shown = mine.version
        await play_out(h, tid, humans, rng=random.Random(4))
        await fake.world.wait_for(lambda: "Game over" in (mine.text or "") or None, SAFETY)
        assert mine.version > shown + 1  # updated as the game went
        assert "python" not in (mine.text or "")  # the check is behind its button (#29)
        assert mine.button_texts == ["🎞 Replay", "🔎 Check the deal"]
        checked = await assert_no_hidden_cards(h, tid, [*humans, carol])
        spectator = [e for e in fake.world.outbox if e["chat_id"] == carol.id]
        assert len(spectator) > 2
        assert checked > 10
    assert not fake.stats.errors, fake.stats.error_texts


async def test_a_lobby_may_forbid_spectators(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(f"Q{i}", language_code="en") for i in range(2)]
        dave = fake.add_user("Dave", language_code="en")
        dave.start()
        await dave.wait_message(timeout=SAFETY)
        owner = humans[0]
        group = owner.create_group("No audience", humans[1], dave)
        owner.add_bot_to(group)
        await owner.wait_message("/new", group, timeout=SAFETY)
        for u in humans:
            u.start()
            await u.wait_message(timeout=SAFETY)
        owner.send("/new chuvash", group)
        lobby = await owner.wait_message("Invitation link", group, timeout=SAFETY)
        await humans[1].press("Join", message=lobby, chat=group).wait_answer(SAFETY)
        await owner.press("⚙ Settings", message=lobby, chat=group).wait_answer(SAFETY)
        await fake.world.wait_for(lambda: "🙈 no spectators" in lobby.button_texts or None, SAFETY)
        await owner.press("🙈 no spectators", message=lobby, chat=group).wait_answer(SAFETY)
        await fake.world.wait_for(lambda: "✓ no spectators" in lobby.button_texts or None, SAFETY)
        table = await h.svc.tables.where(owner.id)
        assert table is not None
        assert table.spectators is False
        await owner.press("◀ Back", message=lobby, chat=group).wait_answer(SAFETY)
        await fake.world.wait_for(lambda: "Start" in " ".join(lobby.button_texts) or None, SAFETY)
        await owner.press("Start", message=lobby, chat=group).wait_answer(SAFETY)
        await h.wait_hands(table.id, humans)
        msg = await fake.world.wait_for(
            lambda: next((m for m in fake.messages(group) if "Players" in (m.text or "")), None),
            SAFETY,
        )
        assert WATCH not in msg.button_texts
        dave.send(f"/watch {table.id}")
        await dave.wait_message("does not allow spectators", timeout=SAFETY)
    assert not fake.stats.errors, fake.stats.error_texts
