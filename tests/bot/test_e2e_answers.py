"""Presses answered before slow work (#28), end to end: *My cards*, *Open my
table* and the language buttons are answered at once -- before the hand goes out
while the chat's flood budget is spent, before the chat's command menu is set --
and nobody waits for flood tokens under the table's lock.  The fake refuses an
answer (and an ephemeral reply tied to a press) after its answer window, as
Telegram does after 15 s; here the window is short and the waits longer.

And a deleted ephemeral hand takes its queued edits with it: none goes out after
the deletion and draws 400 "message to edit not found"."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable

import pytest

from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits
from sandbox.fake_api.models import CallbackQuery, FeedEvent
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import SAFETY, choose, has_game_buttons, play_out, running, settle

WINDOW = 4.0
"""The fake's answer window (Telegram's: 15 s)."""
SPENT = 6.0
"""How long a chat's flood budget is spent: longer than the window."""


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off(), callback_answer_window=WINDOW) as server:
        yield server


async def _table_message(fake: FakeTelegram, group: Chat) -> Message:
    """The group's table message, with *My cards* (the only such row, #29: the
    started lobby has none; the table message may wait for the group's budget)."""

    def found() -> Message | None:
        return next(
            (
                m
                for m in fake.messages(group)
                if any(b.get("callback_data", "").startswith("mc:") for b in m.buttons)
            ),
            None,
        )

    return await fake.world.wait_for(found, SAFETY)


async def _resolved(fake: FakeTelegram, *queries: CallbackQuery) -> dict[str, int]:
    """Until each press is answered or refused as too old; the seq of each answer."""
    world = fake.world

    def answers() -> dict[str, int]:
        return {
            str(e.detail["query_id"]): e.seq
            for e in world.events
            if e.kind == "callback_answered" and e.detail is not None
        }

    def done() -> bool | None:
        found = answers()
        answered = sum(1 for q in queries if q.id in found)
        return answered + world.stats.late_answers >= len(queries) or None

    await world.wait_for(done, SAFETY, "the presses answered or refused")
    found = answers()
    assert world.stats.late_answers == 0, "a press was answered too late"
    return {q.id: found[q.id] for q in queries}


async def _until(check: Callable[[], bool]) -> None:
    """Until ``check()`` holds (looked at every 50 ms: not every change is an event)."""
    for _ in range(int(SAFETY / 0.05)):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("never happened")


def _first(fake: FakeTelegram, since: int, kind: str, **where: int) -> FeedEvent | None:
    for e in fake.world.events_since(since):
        detail = e.detail or {}
        if e.kind == kind and all(
            getattr(e, k, None) == v or detail.get(k) == v for k, v in where.items()
        ):
            return e
    return None


@pytest.mark.slow
async def test_my_cards_is_answered_before_the_spent_group_budget_lets_the_hand_out(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """The group's budget is spent for longer than the answer window: a member who
    does not play and a player both press *My cards*.  Both are answered before
    the player's hand goes out -- the non-seated one without waiting on the
    table's lock --, and the hand, sent once the budget allows, is no longer tied
    to the press (it would be refused as too old): no 400."""
    async with running(redis_url, redis_prefix, fake, press_reply_window=WINDOW / 2) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(2)]
        watcher = fake.add_user("W", language_code="en")
        tid, group = await group_lobby(h, "chuvash", humans, 1, watchers=[watcher])
        await settle(h)
        board = await _table_message(fake, group)
        fake.world.limiter.limits = RateLimits()  # Telegram's limits from now on
        fake.world.limiter.spend(group.id, True, SPENT)
        since = fake.world.version
        player = humans[0].press("My cards", message=board, chat=group)
        member = watcher.press("My cards", message=board, chat=group)
        answered = await _resolved(fake, player, member)
        assert _first(fake, since, "ephemeral_new") is None  # the budget is still spent
        assert player.answer is not None
        assert "only you see them" in str(player.answer["text"])
        assert member.answer is not None
        assert member.answer["text"] == "You do not play at this table."
        hand = await fake.world.wait_for(
            lambda: _first(fake, since, "ephemeral_new", user_id=humans[0].id), SAFETY
        )
        assert max(answered.values()) < hand.seq
        assert fake.stats.errors[("sendMessage", 400)] == 0, fake.stats.errors
        for _ in range(int(SAFETY / 0.05)):
            if (await h.ui.table(tid)).hands[humans[0].id] < 0:
                break
            await fake.world.wait_changed(0.05)
        shown = await h.hand_message(humans[0], tid)
        assert shown is not None
        assert has_game_buttons(shown)


@pytest.mark.slow
async def test_open_my_table_waits_for_tokens_outside_the_tables_lock(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """P0 asks for his table (*Open my table* under a refusal) while his private
    chat's budget is spent: answered at once, his new hand goes out when the
    budget allows -- and meanwhile P1's move is shown (the table's lock is not
    held while P0's hand waits for its tokens)."""
    async with running(redis_url, redis_prefix, fake) as h:
        p0, p1 = (fake.add_user(f"P{i}", language_code="en") for i in range(2))
        tid, _group = await group_lobby(h, "shchelkovsky", [p0, p1], 0)
        rng = random.Random(28)
        for _ in range(100):  # until P1 can act
            hand = await h.hand_message(p1, tid)
            if hand is not None and choose(hand) is not None:
                break
            await play_out(h, tid, [p0, p1], rng=rng, stop_after=1)
        await settle(h)
        p0.send("/new")
        refusal = await p0.wait_message("You are already at a ", timeout=SAFETY)
        old_hand = (await h.ui.table(tid)).hands[p0.id]
        fake.world.limiter.limits = RateLimits()
        fake.world.limiter.spend(p0.id, False, SPENT)
        since = fake.world.version
        ask = p0.press("🃏 Open my table", message=refusal)
        await _resolved(fake, ask)
        assert ask.answer is not None
        assert ask.answer["text"] == "Here is your table."
        await _until(lambda: fake.stats.retry_after_by_chat[p0.id] > 0)  # it waits its turn
        # P1 moves while P0's new hand waits for his chat's budget
        version, wrote = (await h.svc.tables.load(tid)).version, 0
        for _ in range(20):
            before = fake.world.version
            await play_out(h, tid, [p1], rng=rng, stop_after=1)
            if (await h.svc.tables.load(tid)).version > version:
                wrote = before
                break
        assert wrote, "P1 made no move"
        # his move is shown to him (a render, under the table's lock)
        moved = await fake.world.wait_for(
            lambda: _first(fake, wrote, "message_edited", chat_id=p1.id), SAFETY
        )
        new_hand = await fake.world.wait_for(
            lambda: next(
                (
                    e
                    for e in fake.world.events_since(since)
                    if e.kind == "message_new" and e.chat_id == p0.id
                ),
                None,
            ),
            SAFETY,
        )
        assert moved.seq < new_hand.seq  # the move was not held up by P0's hand
        for _ in range(int(SAFETY / 0.05)):
            if (await h.ui.table(tid)).hands[p0.id] != old_hand:
                break
            await fake.world.wait_changed(0.05)
        assert (await h.ui.table(tid)).hands[p0.id] == new_hand.message_id


@pytest.mark.slow
async def test_the_language_button_is_answered_before_the_menu_is_set(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """setMyCommands is slow to come back: the press is answered first."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann = fake.add_user("Ann", language_code="en")
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        fake.reply_delays["setMyCommands"] = SPENT
        ann.send("/lang")
        keyboard = await ann.wait_message("Choose your language", timeout=SAFETY)
        press = ann.press("Українська", message=keyboard)
        await _resolved(fake, press)
        assert press.answer is not None
        assert press.answer["text"] == "Тепер мова — українська."
        # the prompt says it too, in the new language (#29)
        await fake.world.wait_for(
            lambda: keyboard.text == "Тепер мова — українська." or None, SAFETY
        )
        # the slow setMyCommands comes back before the bot stops (a call still in
        # flight at the end would leave its socket open)
        await asyncio.sleep(SPENT)
        await settle(h)


@pytest.mark.slow
async def test_a_deleted_ephemeral_hand_takes_its_queued_edits_with_it(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """P0's hand is in the group; P1's move queues an edit of it (held back by
    the coalescing delay); P0 presses *My cards* again: a new hand, the old one
    deleted -- and its queued edit never goes out (Telegram would answer 400)."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, soon_delay=4.0) as h:
        p0, p1 = (fake.add_user(f"P{i}", language_code="en") for i in range(2))
        tid, group = await group_lobby(h, "chuvash", [p0, p1], 1)
        board = await _table_message(fake, group)
        await _resolved(fake, p0.press("My cards", message=board, chat=group))
        for _ in range(int(SAFETY / 0.05)):
            if (await h.ui.table(tid)).hands[p0.id] < 0:
                break
            await fake.world.wait_changed(0.05)
        old = -(await h.ui.table(tid)).hands[p0.id]
        assert old > 0
        rng = random.Random(11)
        for _ in range(100):  # until P1 can act
            hand = await h.hand_message(p1, tid)
            if hand is not None and choose(hand) is not None:
                break
            await play_out(h, tid, [p0, p1], rng=rng, stop_after=1)
        old = -(await h.ui.table(tid)).hands[p0.id]
        await settle(h, 4.5)  # nothing queued
        version = (await h.svc.tables.load(tid)).version
        for _ in range(40):  # P1 moves: P0's hand gets a queued edit
            await play_out(h, tid, [p1], rng=rng, stop_after=1)
            if (await h.svc.tables.load(tid)).version > version:
                break
        assert (await h.svc.tables.load(tid)).version > version, "P1 made no move"
        await _resolved(fake, p0.press("My cards", message=board, chat=group))
        deleted = await fake.world.wait_for(
            lambda: _first(fake, 0, "ephemeral_deleted", ephemeral_message_id=old), SAFETY
        )
        await settle(h, 5.0)  # longer than the coalescing delay: the queued edits are due
        late = [
            e
            for e in fake.world.events_since(deleted.seq)
            if e.kind == "ephemeral_edited" and (e.detail or {}).get("ephemeral_message_id") == old
        ]
        assert late == []
        assert fake.stats.errors[("editEphemeralMessageText", 400)] == 0, fake.stats.errors
        assert (await h.ui.table(tid)).hands[p0.id] < -old  # the new hand is his
