"""End to end, the AI levels (issue 15): the lobby's settings set the level of
its AI seats, a hard AI (the search player, thinking in the bot's process pool)
plays a game to the end against the fake Bot API, and the level is shown next to
the AI's name; ``/play hard`` starts a game against hard AIs."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits, SimUser
from telegram_bot.buttons.callbacks import LobbyCb, LobbyOp, PlayCb
from tests.bot.e2e_kit import SAFETY, Harness, has_game_buttons, play_out, running


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


async def test_play_expert_starts_a_game_against_expert_ais(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """#43: the expert level, above hard, typed in Ukrainian; named by the AI's name."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, ai_workers=1) as h:
        kat = fake.add_user("Kat", language_code="uk")
        kat.start()
        await kat.wait_message(timeout=SAFETY)
        kat.send("/play chuvash експерт")
        await kat.wait_message(has_game_buttons, timeout=SAFETY)
        table = await h.svc.tables.where(kat.id)
        assert table is not None
        await h.wait_hands(table.id, [kat])
        table, _state, _v = await h.svc.tables.get(table.id)
        assert table.variant == "chuvash"
        assert [s.ai for s in table.seats][1:] == ["expert", "expert"]
        hand = await h.hand_message(kat, table.id)
        assert hand is not None
        assert "(експерт)" in (hand.text or "")
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


ELSEWHERE_SHCHELKOVSKY = (
    "You are already at a Durak Shchelkovsky table (a private game): leave it first (/leave)."
)


async def left_solo(h: Harness, user: SimUser) -> None:
    """/leave his solo game: the AI plays it out, and he sits nowhere."""
    user.send("/leave")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SAFETY
    while await h.svc.tables.where(user.id) is not None:
        assert loop.time() < deadline, "still seated after /leave"
        await h.fake.world.wait_changed(0.5)


async def test_play_offers_each_game_and_level_and_remembers_the_last(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """#41: /play started a normal game at once, a level only typed.  Now /play
    alone offers each game and level, one tap each; the last choice (tapped or
    typed) comes first next time; a tap on an old keyboard while he plays gets
    what /play says then; forged data changes nothing."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, ai_workers=1) as h:
        ann = fake.add_user("Ann", language_code="en")
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        ann.send("/play")
        choice = await ann.wait_message(lambda m: bool(m.buttons), timeout=SAFETY)
        assert "choose the game and the AI's level" in (choice.text or "")
        assert choice.button_texts == [
            "Chuvash Rooster", "easy", "normal", "hard", "expert",
            "Durak Shchelkovsky", "easy", "normal", "hard", "expert",
        ]  # fmt: skip
        assert [b.get("disabled") for b in choice.buttons if "callback_data" not in b] == [{}, {}]
        assert await h.svc.tables.where(ann.id) is None  # nothing started yet

        forged = ann.press(data="pl:chuvash:insane", message=choice, forged=True)
        assert (await forged.wait_answer(SAFETY))["text"] == "This button is not valid."
        assert await h.svc.tables.where(ann.id) is None

        easy = PlayCb(variant="shchelkovsky", level="easy").pack()
        tapped = await ann.press(data=easy, message=choice).wait_answer(SAFETY)
        assert not tapped["show_alert"]
        await ann.wait_message(has_game_buttons, timeout=SAFETY)
        table = await h.svc.tables.where(ann.id)
        assert table is not None
        assert table.variant == "shchelkovsky"
        assert [s.ai for s in table.seats][1:] == ["easy", "easy"]

        ann.send("/play")  # while he plays: where his table is, no choice
        refused = await ann.wait_message(ELSEWHERE_SHCHELKOVSKY, timeout=SAFETY)
        assert refused.button_texts == ["🃏 Open my table"]
        # the old keyboard tapped now: the same answer, nothing else changes
        stale = PlayCb(variant="chuvash", level="normal").pack()
        await ann.press(data=stale, message=choice).wait_answer(SAFETY)
        again = await ann.wait_message(ELSEWHERE_SHCHELKOVSKY, timeout=SAFETY)
        assert again.message_id > refused.message_id
        assert again.button_texts == refused.button_texts
        now = await h.svc.tables.where(ann.id)
        assert now is not None
        assert (now.id, now.variant, now.game_no) == (table.id, "shchelkovsky", table.game_no)

        await left_solo(h, ann)
        ann.send("/play")  # his last choice first, the most prominent
        offer = await ann.wait_message(lambda m: bool(m.buttons), timeout=SAFETY)
        first = offer.keyboard[0]
        assert [b["text"] for b in first] == ["▶ Again: Shchelkovsky · easy"]
        assert (first[0]["callback_data"], first[0].get("style")) == (easy, "primary")

        ann.send("/play chuvash")  # typed: at once, and remembered too
        await ann.wait_message(has_game_buttons, timeout=SAFETY)
        typed = await h.svc.tables.where(ann.id)
        assert typed is not None
        assert (typed.variant, [s.ai for s in typed.seats][1:]) == (
            "chuvash",
            ["heuristic", "heuristic"],
        )
        await left_solo(h, ann)
        ann.send("/play")
        offer = await ann.wait_message(lambda m: bool(m.buttons), timeout=SAFETY)
        assert offer.keyboard[0][0]["text"] == "▶ Again: Chuvash · normal"
        await ann.press("▶ Again: Chuvash · normal", message=offer).wait_answer(SAFETY)
        await ann.wait_message(has_game_buttons, timeout=SAFETY)
        last = await h.svc.tables.where(ann.id)
        assert last is not None
        assert (last.variant, last.id != typed.id) == ("chuvash", True)
    assert not fake.stats.errors, fake.stats.error_texts
