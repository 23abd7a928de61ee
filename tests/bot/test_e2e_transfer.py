"""End to end (#41, «a Transfer press that did nothing»): in a solo
Shchelkovsky game (a player against two AIs, his private chat, a turn timer),
every press of *Transfer* (S8) is answered -- the press that makes the move,
the same button pressed again and again while it is made and after, the
transfer chosen among a card's moves, and a transfer button of a keyboard
that is out of date -- and exactly one transfer is made.

The report (nine presses over ~70 s, no answer, no edit until the turn timer
ran out) reproduces with the sandbox's fake Bot API as it was before c99fdd8:
with a card's moves open (cover, transfer, pass-ticket), the keyboard drew
«↪ 9♠️» twice -- in the choice and in the action row -- with one callback
data, and the fake refused a press of such a data: nothing reached the bot.
Telegram itself sends such a press, but one move is one button now.  The
other paths a Transfer press can take (:mod:`telegram_bot.usecases.press`)
are answered, each."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from engine import view
from sandbox.fake_api import FakeTelegram, Message, RateLimits, SimUser
from telegram_bot.buttons.callbacks import GameCb, parse_game
from tests.bot.e2e_kit import (
    SAFETY,
    Harness,
    choose,
    game_buttons,
    has_game_buttons,
    running,
    settle,
    shows_result,
)

SEED = 1
"""The deal (and so the AIs' play): pinned, so the walk below meets both a
transfer button of its own and a card whose moves include a transfer."""


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def transfer_button(message: Message) -> dict[str, Any] | None:
    for b in game_buttons(message):
        cb = parse_game(b["callback_data"])
        if cb is not None and cb.press.kind == "action" and cb.press.action[:1] == "R":
            return b
    return None


async def transfers_made(h: Harness, tid: str, seat: int) -> int:
    events = await h.svc.admin.event_page(tid, 0, 100_000)
    return sum(1 for e in events if e.kind == "act" and e.seat == seat and e.text[:1] == "R")


async def solo_game(h: Harness, user: SimUser) -> str:
    user.send("/play shchelkovsky")
    await user.wait_message(has_game_buttons, timeout=SAFETY)
    table = await h.svc.tables.where(user.id)
    assert table is not None
    await h.wait_hands(table.id, [user])
    return table.id


async def play_until(
    h: Harness, tid: str, user: SimUser, found: Callable[[Message], Any], rng: random.Random
) -> tuple[Message, Any]:
    """Simple moves (never a transfer) until ``found(his hand)`` is truthy."""
    for _ in range(500):
        await settle(h, 0.1)
        m = await h.hand_message(user, tid)
        assert m is not None
        assert not shows_result(m), "the game ended first"
        hit = found(m)
        if hit:
            return m, hit
        b = choose(m, rng)
        if b is None:
            continue
        cb = parse_game(b["callback_data"])
        assert cb is not None
        if cb.press.kind == "action" and cb.press.action[:1] == "R":  # cover or take instead
            others = [
                x
                for x in game_buttons(m)
                if (c := parse_game(x["callback_data"])) is not None
                and c.press.kind == "action"
                and c.press.action[:1] in "CK"
            ]
            b = others[0]
        await user.press(data=b["callback_data"], message=m).wait_answer(SAFETY)
    raise AssertionError("never found")


async def test_every_transfer_press_is_answered_and_one_transfer_is_made(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    rng = random.Random(SEED)
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, default_timer=60) as h:
        h.svc.games.new_seed = lambda: SEED
        bob = fake.add_user("Bob", language_code="ru")
        bob.start()
        await bob.wait_message(timeout=SAFETY)
        tid = await solo_game(h, bob)
        table, _s, _v = await h.svc.tables.get(tid)
        assert table.timer == 60
        assert [s.ai is not None for s in table.seats] == [False, True, True]
        seat = 0

        # 1. the Transfer button pressed nine times at once (a player who sees no
        # change presses again): every press answered, no modal alert, one transfer
        m, b = await play_until(h, tid, bob, transfer_button, rng)
        before = await transfers_made(h, tid, seat)
        shown = m.version
        presses = [bob.press(data=b["callback_data"], message=m) for _ in range(9)]
        answers = await asyncio.gather(*(q.wait_answer(SAFETY) for q in presses))
        assert all(not a.get("show_alert") for a in answers), answers
        assert await transfers_made(h, tid, seat) == before + 1
        await fake.world.wait_for(lambda: m.version != shown or None, SAFETY, "his hand edited")

        # 2. the same button again, from the keyboard he pressed (now out of
        # date): answered, silently or with a short notice -- no second transfer
        for _ in range(3):
            again = await bob.press(data=b["callback_data"], message=m, forged=True).wait_answer(
                SAFETY
            )
            assert not again.get("show_alert"), again
        assert await transfers_made(h, tid, seat) == before + 1

        # 3. a transfer of an older situation's keyboard, drawn for another stamp:
        # a short notice and his fresh keyboard
        await settle(h)
        now = await h.hand_message(bob, tid)
        assert now is not None
        old = parse_game(b["callback_data"])
        assert old is not None
        stale = GameCb(game=tid, version=old.version, payload=old.payload, stamp="AAAAAA").pack()
        toast = await bob.press(data=stale, message=now, forged=True).wait_answer(SAFETY)
        assert not toast.get("show_alert"), toast

        # 4. a transfer chosen among a card's moves (cover it or pass it on)
        def card_with_transfer(msg: Message) -> dict[str, Any] | None:
            t = transfer_button(msg)
            if t is None:
                return None
            r = parse_game(t["callback_data"])
            assert r is not None
            card = r.press.action[1:]
            for x in game_buttons(msg):
                c = parse_game(x["callback_data"])
                if c is not None and c.press.kind == "card" and c.press.card == card:
                    return x
            return None

        shown_to, card = await play_until(h, tid, bob, card_with_transfer, rng)
        before = await transfers_made(h, tid, seat)
        tapped = await bob.press(data=card["callback_data"], message=shown_to).wait_answer(SAFETY)
        assert not tapped.get("show_alert"), tapped
        await settle(h)
        fresh = await h.hand_message(bob, tid)
        assert fresh is not None
        m = fresh
        state = (await h.svc.tables.get(tid))[1]
        assert state is not None
        moves = view(state, seat)["legal"]
        # the choice is open: «✖ Back» closes it, the transfer is one of its moves
        kinds = [c.press.kind for x in game_buttons(m) if (c := parse_game(x["callback_data"]))]
        assert "back" in kinds, m.button_texts
        assert any(t[:1] == "C" for t in moves)  # he could cover it, too
        choice = transfer_button(m)
        assert choice is not None, (m.button_texts, moves)
        # one button a move: a client that sends nothing for a data two buttons
        # carry (the sandbox's did, before c99fdd8) still gets this press through
        datas = [x["callback_data"] for x in game_buttons(m)]
        assert datas.count(choice["callback_data"]) == 1, m.button_texts
        done = await bob.press(data=choice["callback_data"], message=m).wait_answer(SAFETY)
        assert not done.get("show_alert"), done
        assert await transfers_made(h, tid, seat) == before + 1
    assert not fake.stats.errors, fake.stats.error_texts


class SlowDecider:
    """The AI thinking ``delay`` seconds a move (a loaded machine, a hard AI):
    a move the AI answers in the same write takes that long per AI move."""

    def __init__(self, inner: Any, delay: float) -> None:
        self.inner = inner
        self.delay = delay

    async def decide(self, kind: str, seed: str, state: Any, seat: int) -> Any:
        await asyncio.sleep(self.delay)
        return await self.inner.decide(kind, seed, state, seat)

    def close(self) -> None:
        self.inner.close()


async def test_a_transfer_the_ai_is_slow_to_answer_is_answered_at_every_press(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """The transfer hands the attack to an AI, whose answer comes in the same
    write: while the AI thinks (here 1 s a move, past the 3 s a press waits for
    its outcome, #37), the player presses Transfer again and again.  Every
    press is answered, the transfer is made once and his hand shows it."""
    rng = random.Random(SEED)
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, default_timer=60) as h:
        h.svc.games.new_seed = lambda: SEED
        bob = fake.add_user("Bob", language_code="en")
        bob.start()
        await bob.wait_message(timeout=SAFETY)
        tid = await solo_game(h, bob)
        m, b = await play_until(h, tid, bob, transfer_button, rng)
        before = await transfers_made(h, tid, 0)
        shown = m.version
        h.svc.games.decider = SlowDecider(h.svc.games.decider, 1.0)
        presses = []
        for _ in range(9):
            presses.append(bob.press(data=b["callback_data"], message=m, forged=True))
            await asyncio.sleep(0.5)
        answers = await asyncio.gather(*(q.wait_answer(SAFETY) for q in presses))
        assert all(not a.get("show_alert") for a in answers), answers
        await fake.world.wait_for(lambda: m.version != shown or None, SAFETY, "his hand edited")
        assert await transfers_made(h, tid, 0) == before + 1
    assert not fake.stats.errors, fake.stats.error_texts


class CountingDecider(SlowDecider):
    """:class:`SlowDecider` that keeps every decision it was asked for."""

    def __init__(self, inner: Any, delay: float) -> None:
        super().__init__(inner, delay)
        self.asked: list[str] = []

    async def decide(self, kind: str, seed: str, state: Any, seat: int) -> Any:
        self.asked.append(seed)  # the table's seed, the ply and the seat: one state
        return await super().decide(kind, seed, state, seat)


async def test_taps_while_the_ai_thinks_ask_it_each_decision_once(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """#41 (found in the sandbox): a player tapping on while the AI answers his
    move -- each tap planned the same move with its AI decisions before its
    write was refused, and thousands of taps queued as many decisions in the
    worker pool, which the turn timers wait in too: every table's timers
    stalled.  His taps of one table take turns now, and a tap of the button
    being handled is answered at once: the AI is asked each decision once."""
    rng = random.Random(SEED)
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, default_timer=60) as h:
        h.svc.games.new_seed = lambda: SEED
        bob = fake.add_user("Bob", language_code="en")
        bob.start()
        await bob.wait_message(timeout=SAFETY)
        tid = await solo_game(h, bob)
        m, b = await play_until(h, tid, bob, transfer_button, rng)
        before = await transfers_made(h, tid, 0)
        shown = m.version
        decider = CountingDecider(h.svc.games.decider, 0.5)
        h.svc.games.decider = decider
        presses = []
        for _ in range(8):
            presses.append(bob.press(data=b["callback_data"], message=m, forged=True))
            await asyncio.sleep(0.1)
        answers = await asyncio.gather(*(q.wait_answer(SAFETY) for q in presses))
        assert all(not a.get("show_alert") for a in answers), answers
        await fake.world.wait_for(lambda: m.version != shown or None, SAFETY, "his hand edited")
        assert await transfers_made(h, tid, 0) == before + 1
        assert decider.asked, "the AI answers the transfer"
        twice = [seed for seed in set(decider.asked) if decider.asked.count(seed) > 1]
        assert twice == [], f"decisions asked again: {decider.asked}"
    assert not fake.stats.errors, fake.stats.error_texts
