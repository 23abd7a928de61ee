"""Fair play when someone walks away (#25), end to end through the fake Bot API:
the player whose time runs out is told at once in a new message -- in his
private chat, or as an ephemeral message in the group while his hand is there
-- that the next timeout gives his seat to the AI; the others see it on the
table; the next timeout tells him the AI plays his seat, with *Take my seat
back*.  The turn's deadline is a ``date_time`` entity each client counts down."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, Message, RateLimits, SimUser
from telegram_bot.buttons.callbacks import SeatCb, parse_game
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import SAFETY, Harness, play_out, record_seeds, running
from tests.bot.test_e2e_ephemeral import in_group

WARNING = "If it runs out once more, the AI takes your seat"
TAKEN = "the AI plays your seat now"
SEEN = "time ran out once"


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def waiting_for(h: Harness, tid: str, humans: list[SimUser]) -> tuple[SimUser, SimUser]:
    """The human the game waits for, and another."""
    table, state, _v = await h.svc.tables.get(tid)
    assert state is not None
    seat = state.to_act()[0]
    late = next(u for u in humans if u.id == table.seats[seat].user)
    return late, next(u for u in humans if u is not late)


def countdown(message: Message | None) -> bool:
    """The deadline as a ``date_time`` entity (shown relative: a countdown)."""
    return message is not None and any(e.get("type") == "date_time" for e in message.entities)


async def hand_says(h: Harness, user: SimUser, tid: str, text: str) -> Message:
    """Until his hand message says ``text``."""
    deadline = time.monotonic() + SAFETY
    while True:
        msg = await h.hand_message(user, tid)
        if msg is not None and text in (msg.text or ""):
            return msg
        assert time.monotonic() < deadline, f"his hand never said {text!r}"
        await asyncio.sleep(0.05)


async def warned_then_taken(
    h: Harness, tid: str, humans: list[SimUser], told: object
) -> tuple[Message, Message]:
    """The turn's time runs out twice for the player the game waits for (the
    bot's own timer loop makes the moves); the two messages he was told with
    (``told(user, text)`` waits for one)."""
    late, other = await waiting_for(h, tid, humans)
    assert countdown(await h.hand_message(other, tid))
    assert countdown(await h.hand_message(late, tid))
    h.clock.advance(31)
    warning = await told(late, WARNING)  # type: ignore[operator]
    # the other one's table says it, until the late one moves again
    await hand_says(h, other, tid, SEEN)
    table, state, _v = await h.svc.tables.get(tid)
    assert state is not None
    seat = table.seat_of(late.id)
    assert seat is not None
    assert table.seats[seat].timeouts == 1
    assert not table.seats[seat].ai_controlled
    if seat not in state.to_act():  # the automatic move ended his turn: wait for it again
        for _ in range(200):
            table, state, version = await h.svc.tables.get(tid)
            assert state is not None
            if seat in state.to_act() or state.over:
                break
            mover = state.to_act()[0]
            user = table.seats[mover].user
            assert user is not None
            await h.svc.games.apply(tid, user, state.legal_actions(mover)[0].text(), version)
    assert not state.over, "the game ended before his second timeout"
    h.clock.advance(31)
    taken = await told(late, TAKEN)  # type: ignore[operator]
    table, _s, _v = await h.svc.tables.get(tid)
    assert table.seats[seat].ai_controlled
    return warning, taken


async def test_in_private_he_is_warned_then_told_the_ai_took_his_seat(
    fake: FakeTelegram, store_url: str, redis_prefix: str
) -> None:
    async with running(store_url, redis_prefix, fake, flood_limiter=False, default_timer=30) as h:
        humans = [fake.add_user(n, language_code="en") for n in ("Ann", "Bob", "Cy")]
        for u in humans:
            u.start()
            await u.wait_message(timeout=SAFETY)
        humans[0].send("/new shchelkovsky")
        lobby = await humans[0].wait_message("Invitation link", timeout=SAFETY)
        code = (lobby.text or "").rsplit("start=", 1)[1].split()[0]
        for u in humans[1:]:
            u.start(code)
            await u.wait_message("You joined", timeout=SAFETY)
        record_seeds(h.svc)
        await humans[0].press("Start", message=lobby).wait_answer(SAFETY)
        await h.wait_hands(code, humans)

        async def told(user: SimUser, text: str) -> Message:
            msg = await user.wait_message(text, timeout=SAFETY)
            assert msg.message_id not in (await h.ui.table(code)).hands.values()  # a new one
            return msg

        _warning, taken = await warned_then_taken(h, code, humans, told)
        late = next(u for u in humans if taken in u.chat.messages.values())
        hand = await hand_says(h, late, code, "AI plays your seat")
        # the notice answers his hand, which holds *Take my seat back*; it has no
        # button of its own, which would outlive the game (#40)
        assert taken.reply_to is not None
        assert taken.reply_to.message_id == hand.message_id
        assert any("Take my seat back" in b.get("text", "") for b in hand.buttons)
        assert taken.buttons == []
        others = [u for u in humans if u is not late]
        await play_out(h, code, others)  # the AI plays his seat to the end
        await hand_says(h, late, code, "Game over")
        assert live_buttons(late, code) == []  # nothing in his chat offers the game
    assert not fake.stats.errors, fake.stats.error_texts


def live_buttons(user: SimUser, table_id: str) -> list[str]:
    """The buttons of ``user``'s private chat that still act on the table's
    game: a move, or *Take my seat back*."""
    found = []
    for m in user.chat.messages.values():
        for b in m.buttons:
            data = b.get("callback_data") or ""
            game = parse_game(data)
            if (game is not None and game.game == table_id) or data == seat_back(table_id):
                found.append(f"{m.message_id}: {b.get('text')}")
    return found


def seat_back(table_id: str) -> str:
    return SeatCb(game=table_id, op="back").pack()


async def test_in_the_group_he_is_nudged_where_his_hand_is(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, default_timer=30) as h:
        humans = [fake.add_user(n, language_code="en") for n in ("Di", "Ed", "Flo")]
        tid, group = await group_lobby(h, "shchelkovsky", humans, 0)
        for u in humans:
            await in_group(h, tid, u)

        async def told(user: SimUser, text: str) -> Message:
            def nudge() -> Message | None:
                return next(
                    (
                        m
                        for m in user.messages(group)
                        if m.ephemeral_message_id and text in (m.text or "")
                    ),
                    None,
                )

            msg = await fake.world.wait_for(nudge, SAFETY, f"an ephemeral {text!r}")
            assert msg.receiver_id == user.id
            assert not [m for u in humans if u is not user for m in u.messages(group) if m is msg]
            return msg

        await warned_then_taken(h, tid, humans, told)
    assert not fake.stats.errors, fake.stats.error_texts
