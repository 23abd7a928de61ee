"""When waiting is Telegram's doing, the bot says so once (#24 item 6), end to
end: a group game of three -- two with their hands in the group, one in
private --, the fake Bot API with Telegram's limits ON.  The group's budget is
spent by writes the bot never saw (``FakeFloodControl.spend``), so the hands in
the group wait seconds for it: each of the two gets, once in the game, a line
saying that in a private chat his cards update at once, with *Private chat*
under it -- and keeps it from then on; a second hold of the same game gives
nothing new.  The private hand never gets it.  Without any hold
nobody does."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from sandbox.fake_api import FakeTelegram, Message, RateLimits, SimUser
from telegram_bot.state.hints import HintClaims
from telegram_bot.views import texts
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import TELEGRAM_SCALE, Harness, game_over, play_out, running, settle
from tests.bot.test_e2e_ephemeral import in_group

HINT = texts.FLOOD_HINT
SPENT = 6.0
"""Seconds the group's budget is spent: far beyond the threshold below."""
AFTER = 2.0
"""``flood_hint_after`` of these games (the product's: 4 s)."""


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits(), time_scale=TELEGRAM_SCALE) as server:
        yield server


def shown_to(h: Harness, user: SimUser) -> list[dict[str, object]]:
    """Every version of his hands in the group he was shown, in order."""
    return [
        e
        for e in h.fake.world.outbox
        if e["ephemeral_message_id"] is not None and e["receiver_user_id"] == user.id
    ]


def private_link(message: Message | dict[str, object]) -> bool:
    """Does the hand carry *Private chat* (the deep link to the private chat)?"""
    markup = message.reply_markup if isinstance(message, Message) else message["reply_markup"]
    rows = (markup or {}).get("inline_keyboard", []) if isinstance(markup, dict) else []
    return any("?start=" in str(b.get("url", "")) for row in rows for b in row)


async def _press_until(
    h: Harness,
    tid: str,
    humans: list[SimUser],
    rng: random.Random,
    done: Callable[[], Awaitable[bool]],
) -> None:
    """The humans press, one press at a time, until ``done()`` -- looked at while
    a press's edits still trickle out through the group's budget, too."""
    for _ in range(200):
        assert not await game_over(h, tid), "the game ended first"
        presses = asyncio.create_task(play_out(h, tid, humans, rng=rng, stop_after=1))
        try:
            while not presses.done():
                if await done():
                    return
                await asyncio.sleep(0.1)
            presses.result()
        finally:
            if not presses.done():
                presses.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await presses
    raise AssertionError("never done")


async def _hinted(h: Harness, tid: str, hinted: list[SimUser]) -> bool:
    """Was each of ``hinted`` given the hint (recorded in the chat state), and
    does his hand in the group show it?"""
    ui = await h.ui.table(tid)
    shown = [await h.hand_message(u, tid) for u in hinted]
    return all(u.id in ui.flood_hints for u in hinted) and all(
        m is not None and HINT in (m.text or "") for m in shown
    )


@pytest.mark.slow
async def test_a_hand_held_back_in_the_group_is_told_once_per_game(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    rng = random.Random(24)
    async with running(
        redis_url, redis_prefix, fake, flood_hint_after=AFTER, telegram_time_scale=TELEGRAM_SCALE
    ) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(3)]
        tid, group = await group_lobby(h, "chuvash", humans, 0)
        grouped, private = humans[:2], humans[2]
        for u in grouped:
            await in_group(h, tid, u)
        await settle(h)
        assert h.bot is not None
        delivery = h.bot.app.delivery
        fake.world.limiter.spend(group.id, True, SPENT)  # Telegram's minute is spent
        await _press_until(h, tid, humans, rng, lambda: _hinted(h, tid, grouped))
        game_no = (await h.svc.lobbies.lobby(tid)).game_no
        assert (await h.ui.table(tid)).flood_hints == {u.id: game_no for u in grouped}
        for u in grouped:
            hand = await h.hand_message(u, tid)
            assert hand is not None
            assert private_link(hand)
            assert "🔒 Private chat" in hand.button_texts
        reported = delivery.held.fired
        assert reported >= len(grouped)
        # held back again in the same game: noticed, but not told again
        fake.world.limiter.spend(group.id, True, SPENT)

        async def noticed() -> bool:
            return delivery.held.fired > reported

        await _press_until(h, tid, humans, rng, noticed)
        await settle(h)
        claims = HintClaims.of(h.svc)
        for u in grouped:  # given in this game already: no process gives it again
            assert not await claims.flood(tid, game_no, u.id)
        assert await claims.flood(tid, game_no, private.id)  # he never had it
    for u in grouped:
        # once shown, his hand kept it (for the rest of the game): told once
        flags = [HINT in str(e["text"] or "") for e in shown_to(h, u)]
        assert True in flags
        assert flags == sorted(flags), flags
        assert all(private_link(e) for e in shown_to(h, u) if HINT in str(e["text"] or ""))
    # the private hand never carries it
    assert not [m for m in private.chat.messages.values() if HINT in (m.text or "")]
    assert not [m for m in fake.messages(group) if HINT in (m.text or "")]  # nor the group's


@pytest.mark.slow
async def test_a_held_back_hand_gives_its_waited_player_his_turn_again(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """The hand of the player the game waits for is held back by the group's
    flood budget (the bot's delivery trouble, not his): his turn starts again
    (a logged ``extend`` of his seat, the new deadline a whole turn from the
    hold), once a turn, and every hand shows it."""
    rng = random.Random(41)
    async with running(
        redis_url, redis_prefix, fake, flood_hint_after=AFTER, telegram_time_scale=TELEGRAM_SCALE
    ) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(3)]
        tid, group = await group_lobby(h, "chuvash", humans, 0)
        grouped = humans[:2]
        for u in grouped:
            await in_group(h, tid, u)
        await settle(h)
        timer = (await h.svc.lobbies.lobby(tid)).timer
        assert timer > 0  # a rated game: timed
        seats = {(await h.svc.lobbies.lobby(tid)).seat_of(u.id) for u in grouped}
        fake.world.limiter.spend(group.id, True, SPENT)  # Telegram's minute is spent

        async def extended() -> bool:
            events = await h.svc.admin.event_page(tid, 0, 100_000)
            return any(e.kind == "extend" and e.seat in seats for e in events)

        await _press_until(h, tid, humans, rng, extended)
        events = await h.svc.admin.event_page(tid, 0, 100_000)
        late = [e for e in events if e.kind == "extend"][-1]
        loaded = await h.svc.tables.load(tid)
        seat = loaded.table.seats[late.seat]
        assert seat.late > 0  # marked: not twice in this turn
        if loaded.version == late.version:  # nothing moved since: his turn, its deadline
            assert loaded.state is not None
            assert late.seat in loaded.state.to_act()
            assert loaded.deadline == seat.late
        assert int(late.text) > 0


async def test_no_hint_when_nothing_holds_a_hand_back(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """No flood limit to wait for (the fake's off, ours off): forty presses with
    the hands in the group, and nobody is told anything."""
    fake.world.limiter.limits = RateLimits.off()
    settings = {"flood_hint_after": 0.5, "flood_limiter": False}
    async with running(redis_url, redis_prefix, fake, **settings) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(2)]
        tid, _group = await group_lobby(h, "chuvash", humans, 1)
        for u in humans:
            await in_group(h, tid, u)
        await play_out(h, tid, humans, rng=random.Random(7), stop_after=40)
        await settle(h)
        assert h.bot is not None
        assert h.bot.app.delivery.held.fired == 0
        assert (await h.ui.table(tid)).flood_hints == {}
    for u in humans:
        assert shown_to(h, u)
        assert not [e for e in shown_to(h, u) if HINT in str(e["text"] or "")]
