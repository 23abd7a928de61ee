"""Fewer taps, fewer alerts (issue 13), end to end through the fake Bot API: seats
that pass by themselves, "pass for the rest of the bout", greyed cards that
cannot be pressed, stale presses answered without a modal alert."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from engine import BOUT_PHASE
from sandbox.fake_api import FakeTelegram, Message, RateLimits, SimUser
from telegram_bot.buttons.callbacks import GameCb, parse_game
from tests.bot.e2e_kit import SAFETY, Harness, choose, game_buttons, play_out, running, settle
from tests.bot.test_e2e_invite import invite_lobby


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def button_of(message: Message, kind: str) -> dict[str, Any] | None:
    for b in game_buttons(message):
        cb = parse_game(b["callback_data"])
        if cb is not None and cb.press.kind == kind:
            return b
    return None


async def someone_with(
    h: Harness, tid: str, humans: list[SimUser], kind: str, rng: random.Random
) -> tuple[SimUser, Message, dict[str, Any]]:
    """Play on (simple players) until a hand message offers a ``kind`` button."""
    for _ in range(300):
        await settle(h)
        for u in humans:
            m = await h.hand_message(u, tid)
            if m is not None and (b := button_of(m, kind)) is not None:
                return u, m, b
        for u in humans:
            m = await h.hand_message(u, tid)
            b = choose(m, rng) if m is not None else None
            if m is not None and b is not None:
                await u.press(data=b["callback_data"], message=m).wait_answer(SAFETY)
                break
    raise AssertionError(f"no {kind} button ever")


@pytest.mark.slow
async def test_pass_for_the_bout_greyed_cards_and_stale_presses(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    seed = random.randrange(10**6)
    print("seed", seed)
    rng = random.Random(seed)
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(n) for n in ("Ann", "Bob", "Cy", "Di")]
        tid = await invite_lobby(h, "chuvash", humans, 0)
        # greyed cards: a player who cannot play a card sees it, and it sends nothing
        for u in humans:
            m = await h.hand_message(u, tid)
            assert m is not None
            disabled = [b for b in m.buttons if "disabled" in b]
            if disabled:
                with pytest.raises(ValueError, match="disabled"):
                    u.press(disabled[0]["text"], message=m)
                break
        else:
            raise AssertionError("nobody was shown a greyed card")
        # "pass for the rest of this bout", next to Pass
        u, m, b = await someone_with(h, tid, humans, "bout_pass", rng)
        answer = await u.press(data=b["callback_data"], message=m).wait_answer(SAFETY)
        assert not answer.get("show_alert")
        assert not answer.get("text")  # applied: silent
        table, state, _v = await h.svc.tables.get(tid)
        assert state is not None
        seat = table.seat_of(u.id)
        assert seat is not None
        assert table.seats[seat].bout_pass or state.phase != BOUT_PHASE
        events = await h.svc.admin.event_page(tid, 0, 10_000)
        assert [e.text for e in events if e.kind == "act" and e.seat == seat][-1] == "P"
        # the same button again (a double tap): silent, nothing changes
        before = (await h.svc.tables.get(tid))[2]
        # (his keyboard may already be redrawn: the tap was made on the one he saw)
        again = await u.press(data=b["callback_data"], message=m, forged=True).wait_answer(SAFETY)
        assert not again.get("show_alert")
        assert not again.get("text")
        assert (await h.svc.tables.get(tid))[2] == before
        # his fresh keyboard offers no pass while the bout lasts
        await settle(h)
        table, state, _v = await h.svc.tables.get(tid)
        mine = await h.hand_message(u, tid)
        assert mine is not None
        if state is not None and state.phase == BOUT_PHASE and seat != state.defender:
            assert button_of(mine, "bout_pass") is None
            actions = [parse_game(x["callback_data"]) for x in game_buttons(mine)]
            assert all(cb is not None and cb.press.action != "P" for cb in actions)
        # a stale press drawn for an older situation: a toast at most, never modal
        old = parse_game(b["callback_data"])
        assert old is not None
        forged = GameCb(game=tid, version=old.version, payload="K", stamp="AAAAAA").pack()
        toast = await u.press(data=forged, message=mine, forged=True).wait_answer(SAFETY)
        assert not toast.get("show_alert"), toast
        # the game goes on to the end; the history shows seats passing by themselves
        await play_out(h, tid, humans, rng=rng)
        events = await h.svc.admin.event_page(tid, 0, 100_000)
        assert any(e.kind == "autopass" for e in events)
