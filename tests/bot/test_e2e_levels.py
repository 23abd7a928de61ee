"""End to end, the AI levels (issue 15): the lobby's settings set the level of
its AI seats, a hard AI (the search player, thinking in the bot's process pool)
plays a game to the end against the fake Bot API, and the level is shown next to
the AI's name; ``/play hard`` starts a game against hard AIs."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from telegram_bot.buttons.callbacks import LobbyCb, LobbyOp
from tests.bot.e2e_kit import SAFETY, has_game_buttons, play_out, running


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


@pytest.mark.slow
async def test_a_hard_ai_seat_plays_a_group_game_to_the_end(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, ai_workers=1) as h:
        ann = fake.add_user("Ann", language_code="en")
        group = ann.create_group("Card night")
        ann.add_bot_to(group)
        await ann.wait_message("/new", group, timeout=SAFETY)
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        ann.send("/new chuvash", group)
        lobby = await ann.wait_message("Invitation link", group, timeout=SAFETY)
        seated = await h.svc.tables.where(ann.id)
        assert seated is not None
        tid = seated.id
        await ann.press("Settings", message=lobby, chat=group).wait_answer(SAFETY)
        hard = LobbyCb(code=tid, op=LobbyOp.SET, arg="level=hard").pack()
        await fake.world.wait_for(
            lambda: any(b.get("callback_data") == hard for b in lobby.buttons) or None, SAFETY
        )
        await ann.press(data=hard, message=lobby, chat=group).wait_answer(SAFETY)
        await fake.world.wait_for(lambda: "✓ hard" in lobby.button_texts or None, SAFETY)
        assert "🤖 normal" in lobby.button_texts  # the row's mark on the others (#29)
        await ann.press("Back", message=lobby, chat=group).wait_answer(SAFETY)
        await fake.world.wait_for(lambda: "Add AI" in " ".join(lobby.button_texts) or None, SAFETY)
        await ann.press("Add AI", message=lobby, chat=group).wait_answer(SAFETY)
        await fake.world.wait_for(lambda: "AI 1 (hard)" in (lobby.text or "") or None, SAFETY)
        table, _state, _v = await h.svc.tables.get(tid)
        assert [s.ai for s in table.seats] == [None, "search"]
        await ann.press("Start", message=lobby, chat=group).wait_answer(SAFETY)
        await h.wait_hands(tid, [ann])
        hand = await h.hand_message(ann, tid)
        assert hand is not None
        assert "AI 1 (hard)" in (hand.text or "")  # the level by the AI's name at the table
        assert "AI 1 · hard" not in (hand.text or "")  # not «AI 1 · hard passes» in the moves
        assert await play_out(h, tid, [ann]) > 0
        table, state, _v = await h.svc.tables.get(tid)
        assert state is not None
        assert state.over
        assert table.status == "over"
        decider = h.bot.app.decider if h.bot is not None else None
        assert decider is not None
        # the search AI thought in the pool's worker, not on the bot's event loop
        assert getattr(decider, "pooled", 0) > 0
        assert getattr(decider, "last_pid", None) not in (None, os.getpid())
        assert getattr(decider, "fallbacks", -1) == 0
    assert not fake.stats.errors, fake.stats.error_texts


async def test_play_hard_starts_a_game_against_hard_ais(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, ai_workers=1) as h:
        bob = fake.add_user("Bob", language_code="ru")
        bob.start()
        await bob.wait_message(timeout=SAFETY)
        bob.send("/play чемпион")  # neither a game nor a level: how to say it
        await bob.wait_message("/play", timeout=SAFETY)
        assert await h.svc.tables.where(bob.id) is None
        bob.send("/play shchelkovsky сложный")
        await bob.wait_message(has_game_buttons, timeout=SAFETY)
        table = await h.svc.tables.where(bob.id)
        assert table is not None
        await h.wait_hands(table.id, [bob])
        table, _state, _v = await h.svc.tables.get(table.id)
        assert table.variant == "shchelkovsky"
        assert [s.ai for s in table.seats][1:] == ["search", "search"]
        hand = await h.hand_message(bob, table.id)
        assert hand is not None
        assert "Компьютер 1 (сложный)" in (hand.text or "")
    assert not fake.stats.errors, fake.stats.error_texts


async def test_play_hard_in_a_group_links_to_a_hard_solo_game(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """/play in a group answers with a deep link to a private game (issue 13);
    the level asked for goes with it."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, ai_workers=1) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        group = ann.create_group("Card night", bob)
        ann.add_bot_to(group)
        await ann.wait_message("/new", group, timeout=SAFETY)
        ann.send("/play shchelkovsky hard", group)
        offer = await ann.wait_message("private chat", group, timeout=SAFETY)
        solo = next(b["url"] for b in offer.buttons if "url" in b)
        assert solo.endswith("?start=play_shchelkovsky_hard")
        bob.follow_link(solo)
        await bob.wait_message(has_game_buttons, timeout=SAFETY)
        table = await h.svc.tables.where(bob.id)
        assert table is not None
        table, _state, _v = await h.svc.tables.get(table.id)
        assert table.variant == "shchelkovsky"
        assert [s.ai for s in table.seats][1:] == ["search", "search"]
    assert not fake.stats.errors, fake.stats.error_texts
