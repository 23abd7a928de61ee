"""A bot process that dies between a write and its render loses no update
(issue #12): the render is marked pending in Redis until its edits went out,
and another process (two ``BotApp`` on one Redis and one fake Bot API)
renders a table whose mark outlived its process -- the group's table message
and the hands show the final state.  Plus the marks' own rules on a real
Redis and on a real 3-master Redis Cluster."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from tables import LiveConfig, TableService
from tables.client import make_client
from telegram_bot.app import BotApp
from telegram_bot.buttons.callbacks import LobbyOp
from telegram_bot.buttons.moves import Selection
from telegram_bot.publishing.repair import GONE
from telegram_bot.state.pending_renders import SCRIPTS, RenderMarks
from telegram_bot.views.hand import hand_screen
from telegram_bot.views.table import table_screen
from tests.bot.e2e_kit import SAFETY, Harness
from tests.bot.test_e2e_redelivery import Processes, group_lobby, lobby_data
from tests.tables.conftest import FakeClock

SLOW = {"soon_delay": 1000.0, "later_delay": 1000.0, "table_delay": 1000.0}
"""Process a's coalesced edits wait long: they are still pending when it dies."""


def crash(app: BotApp) -> None:
    """What a killed process loses: its pending (coalesced) edits, and the
    watch that keeps its renders' marks alive."""
    assert app.publisher is not None
    app.publisher.guard.abandon()
    for slot in app.delivery.edits.slots.values():
        slot.pending = None


async def test_a_render_lost_with_its_process_is_repaired_by_another(
    redis_url: str, redis_prefix: str
) -> None:
    async with FakeTelegram(limits=RateLimits.off()) as fake:
        h = Harness(fake, redis_url, redis_prefix, extra={"render_grace": 0.4})
        a = BotApp(h.settings().model_copy(update=SLOW), clock=h.clock)
        b = BotApp(h.settings(), clock=h.clock)
        try:
            for app in (a, b):
                await app.setup()
            p = Processes(fake, h, [a], 1, True)  # every update goes to process a
            ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
            lobby, group, tid = await group_lobby(p, [ann, bob])
            await p.press(bob, lobby, lobby_data(tid, LobbyOp.JOIN))
            await p.press(ann, lobby, lobby_data(tid, LobbyOp.START))
            assert a.publisher is not None
            assert b.publisher is not None
            before = await b.publisher.snapshots.load(tid)
            assert before.ui.table_message is not None
            shown = group.messages[before.ui.table_message].text
            # a's write and its render, as a press's: the mover's own edit at once,
            # the other hand and the group's table coalesced -- then a dies
            t, state = before.table, before.loaded.state
            assert state is not None
            seat = state.to_act()[0]
            mover = t.seats[seat].user
            assert mover is not None
            action = state.legal_actions(seat)[0]
            wrote = await a.svc.games.apply(tid, mover, action, before.version)
            await a.publisher.refresh(tid, actor=mover, wrote=wrote.version)
            crash(a)
            assert group.messages[before.ui.table_message].text == shown  # not redrawn
            b.start_background()  # b's sweep finds the mark a left behind
            after = await b.publisher.snapshots.load(tid)
            assert after.version == wrote.version
            username = (await b.bot.me()).username or ""
            want = table_screen(after, username)[0]
            deadline = time.monotonic() + SAFETY
            while group.messages[before.ui.table_message].source != want:
                assert time.monotonic() < deadline, "the lost render was never repaired"
                await asyncio.sleep(0.02)
            for s, seated in enumerate(after.table.seats):
                if seated.user is None:
                    continue
                user = {ann.id: ann, bob.id: bob}[seated.user]
                mid = after.ui.hands[seated.user]
                text = hand_screen(after, s, "en", Selection())[0]
                while user.chat.messages[mid].source != text:
                    assert time.monotonic() < deadline, f"hand of {seated.user} never repaired"
                    await asyncio.sleep(0.02)
            marks = b.publisher.guard.marks
            assert marks is not None
            while await marks.kv.hgetall(marks.keys_of(tid)[1]):  # cleared once delivered
                assert time.monotonic() < deadline, "the mark was never cleared"
                await asyncio.sleep(0.02)
        finally:
            for app in (a, b):
                with contextlib.suppress(Exception):
                    await app.aclose()


# ---------------------------------------------------------------- the marks' rules
@pytest.fixture
async def kv_svc(redis_url: str, redis_prefix: str) -> AsyncIterator[TableService]:
    svc = TableService.from_url(redis_url, LiveConfig(prefix=redis_prefix))
    yield svc
    await svc.aclose()


async def test_a_mark_is_kept_by_its_owner_and_claimed_once_it_outlived_it(
    kv_svc: TableService,
) -> None:
    clock = FakeClock()
    marks = [RenderMarks(kv_svc.kv, grace=5, shards=3, clock=clock, max_tries=2) for _ in "ab"]
    owner, other = marks
    assert await owner.set("T1", 7)
    assert await other.claim_due() == []  # the owner still has time
    clock.advance(4)
    await owner.keep("T1")  # still waiting for its edits
    clock.advance(4)
    assert await other.claim_due() == []
    assert not await owner.clear("T1", 6)  # an older render does not clear it
    await owner.set("T1", 5)  # neither does an older mark lower it
    clock.advance(6)
    claimed = await other.claim_due()
    assert [(c.table, c.version, c.tries) for c in claimed] == [("T1", 7, 1)]
    assert await owner.claim_due() == []  # claimed once: its deadline moved on
    clock.advance(6)
    assert [c.tries for c in await owner.claim_due()] == [2]
    clock.advance(6)
    assert [c.tries for c in await other.claim_due()] == [-1]  # given up: dropped
    clock.advance(6)
    assert await other.claim_due() == []
    # a newer version starts over; a render of it (or newer) clears it
    await owner.set("T2", 3)
    await owner.set("T2", 4)
    assert not await owner.clear("T2", 3)
    assert await owner.clear("T2", 4)
    await owner.set("T3", 9)
    assert await owner.clear("T3", GONE)  # the table is gone
    clock.advance(60)
    assert await other.claim_due() == []


async def test_the_marks_scripts_run_on_the_cluster(
    redis_cluster_url: str, redis_prefix: str
) -> None:
    config = LiveConfig(prefix=redis_prefix)
    async with TableService(make_client(redis_cluster_url, config), config, owns_client=True) as s:
        clock = FakeClock()
        marks = RenderMarks(s.kv, grace=1, shards=8, clock=clock)
        assert len({marks.keys(k)[0] for k in range(8)}) == 8
        for n in range(20):
            assert await marks.set(f"T{n}", n)
        clock.advance(2)
        claimed = await marks.claim_due()
        assert sorted(c.table for c in claimed) == sorted(f"T{n}" for n in range(20))
        for n in range(20):
            assert await marks.clear(f"T{n}", n)
        assert await marks.keep("T1") is False  # cleared: nothing to keep
        assert set(SCRIPTS) == {"SET_LUA", "KEEP_LUA", "CLEAR_LUA", "CLAIM_LUA"}
