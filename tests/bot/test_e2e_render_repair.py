"""A bot process that dies between a write and its render loses no update
(issue #12): the render is marked pending in Redis until its edits went out,
and another process (two ``BotApp`` on one Redis and one fake Bot API)
renders a table whose mark outlived its process -- the group's table message
and the hands show the final state, on a Redis server and on a Redis Cluster
(``store_url``, #40).  Plus the marks' own rules on a real Redis and on a real
3-master Redis Cluster."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import pytest

from engine import view
from sandbox.fake_api import FakeTelegram, RateLimits
from tables import LiveConfig, TableService
from tables.client import make_client
from telegram_bot.app import BotApp
from telegram_bot.buttons.callbacks import GameCb, LobbyOp
from telegram_bot.buttons.moves import Selection, stamp
from telegram_bot.publishing.repair import GONE
from telegram_bot.state.pending_renders import SCRIPTS, RenderMarks
from telegram_bot.state.snapshot import group_of, hand_target
from telegram_bot.usecases.press import ButtonPress, PressStatus
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


@pytest.mark.slow
async def test_a_render_lost_with_its_process_is_repaired_by_another(
    store_url: str, redis_prefix: str
) -> None:
    async with FakeTelegram(limits=RateLimits.off()) as fake:
        h = Harness(fake, store_url, redis_prefix, extra={"render_grace": 0.4})
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


async def test_a_process_killed_between_a_move_and_its_render_leaves_it_to_another(
    store_url: str, redis_prefix: str
) -> None:
    """A move's render is marked pending before the move is written (#28, seen
    in the SIGKILL soak as a game stuck on a hand never redrawn): a process
    killed right after the write -- before its render even began -- leaves the
    mark, and another process redraws the mover's hand."""
    async with FakeTelegram(limits=RateLimits.off()) as fake:
        h = Harness(fake, store_url, redis_prefix, extra={"render_grace": 0.4})
        a = BotApp(h.settings(), clock=h.clock)
        b = BotApp(h.settings(), clock=h.clock)
        try:
            for app in (a, b):
                await app.setup()
            p = Processes(fake, h, [a], 1, True)  # every update goes to process a
            ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
            lobby, _group, tid = await group_lobby(p, [ann, bob])
            await p.press(bob, lobby, lobby_data(tid, LobbyOp.JOIN))
            await p.press(ann, lobby, lobby_data(tid, LobbyOp.START))
            assert a.publisher is not None
            before = await a.publisher.snapshots.load(tid)
            state = before.loaded.state
            assert state is not None
            seat = state.to_act()[0]
            mover = before.table.seats[seat].user
            assert mover is not None
            action = state.legal_actions(seat)[0]
            mid = before.ui.hands[mover]
            chat, _key, _receiver = hand_target(mover, mid, group_of(before.table))
            button = GameCb(
                game=tid,
                version=before.version,
                payload=action.text(),
                stamp=stamp(view(state, seat)),
            )
            press = ButtonPress(mover, button, chat, mid, request_id="killed-1")
            assert a.cases is not None
            outcome = await a.cases.press(press)  # written; a dies before rendering it
            assert outcome.status is PressStatus.APPLIED
            crash(a)
            user = {ann.id: ann, bob.id: bob}[mover]
            shown = user.chat.messages[mid].source
            b.start_background()  # b's sweep finds the mark a's press left
            after = await b.publisher.snapshots.load(tid) if b.publisher else before
            assert after.version == outcome.version
            want = hand_screen(after, seat, "en", Selection())[0]
            assert shown != want
            deadline = time.monotonic() + SAFETY
            while user.chat.messages[mid].source != want:
                assert time.monotonic() < deadline, "the mover's hand was never redrawn"
                await asyncio.sleep(0.02)
        finally:
            for app in (a, b):
                with contextlib.suppress(Exception):
                    await app.aclose()


async def test_a_process_killed_between_a_timeout_and_its_render_leaves_it_to_another(
    redis_url: str, redis_prefix: str
) -> None:
    """A timer's write (a timeout move) is marked pending before it is written,
    as a press is (#28: the SIGKILL soak once left a game stuck after a
    timeout whose process died before rendering it): another process that
    missed the write's notify note still redraws the hand of the timed-out
    player."""
    async with FakeTelegram(limits=RateLimits.off()) as fake:
        h = Harness(fake, redis_url, redis_prefix, extra={"render_grace": 0.4, "default_timer": 30})
        a = BotApp(h.settings(), clock=h.clock)
        b = BotApp(h.settings(), clock=h.clock)
        try:
            for app in (a, b):
                await app.setup()
            p = Processes(fake, h, [a], 1, True)  # every update goes to process a
            ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
            lobby, _group, tid = await group_lobby(p, [ann, bob])
            await p.press(bob, lobby, lobby_data(tid, LobbyOp.JOIN))
            await p.press(ann, lobby, lobby_data(tid, LobbyOp.START))
            assert a.publisher is not None
            before = await a.publisher.snapshots.load(tid)
            assert before.loaded.deadline is not None  # a turn timer runs
            state = before.loaded.state
            assert state is not None
            seat = state.to_act()[0]
            sleeper = before.table.seats[seat].user
            assert sleeper is not None
            mid = before.ui.hands[sleeper]
            user = {ann.id: ann, bob.id: bob}[sleeper]
            shown = user.chat.messages[mid].source
            h.clock.advance(31)  # his time ran out
            written = await a.svc.timers.tick(hooks=a.timer_hooks)  # a writes the timeout ...
            assert [r.table_id for r in written] == [tid]
            crash(a)  # ... and dies before rendering it (on_result never ran)
            b.start_background()  # b subscribes after the write's note: it missed it
            assert b.publisher is not None
            after = await b.publisher.snapshots.load(tid)
            assert after.version == written[0].version
            want = hand_screen(after, seat, "en", Selection())[0]
            assert shown != want
            deadline = time.monotonic() + SAFETY
            while user.chat.messages[mid].source != want:
                assert time.monotonic() < deadline, "the timed-out hand was never redrawn"
                await asyncio.sleep(0.02)
        finally:
            for app in (a, b):
                with contextlib.suppress(Exception):
                    await app.aclose()


@pytest.mark.slow
async def test_a_start_its_process_never_rendered_is_rendered_by_another(
    redis_url: str, redis_prefix: str
) -> None:
    """A game's start is marked pending while its hands go out (#28: the SIGKILL
    soak once left a /play game whose hand never came): a process killed
    after the start's write and mark, before any hand went out, leaves the
    start -- not a move -- to another process: every player gets his hand,
    the group its table message, once."""
    async with FakeTelegram(limits=RateLimits.off()) as fake:
        h = Harness(fake, redis_url, redis_prefix, extra={"render_grace": 0.4})
        a = BotApp(h.settings(), clock=h.clock)
        b = BotApp(h.settings(), clock=h.clock)
        try:
            for app in (a, b):
                await app.setup()
            p = Processes(fake, h, [a], 1, True)  # every update goes to process a
            ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
            for u in (ann, bob):  # they started the bot: private hands
                u.start()
                await a.ui.set_prefs(u.id, started=True)
            lobby, group, tid = await group_lobby(p, [ann, bob])
            await p.press(bob, lobby, lobby_data(tid, LobbyOp.JOIN))
            before = {u.id: len(u.chat.messages) for u in (ann, bob)}
            in_group = len(group.messages)
            wrote = await a.svc.games.start(tid, ann.id)  # a's write ...
            assert a.publisher is not None
            await a.publisher.guard.start(tid, wrote.version)  # ... its start's mark
            crash(a)  # ... and a dies before a hand went out
            assert {u.id: len(u.chat.messages) for u in (ann, bob)} == before
            b.start_background()  # b's sweep finds the mark: the start is repaired
            assert b.publisher is not None
            deadline = time.monotonic() + SAFETY
            while len((await b.ui.table(tid)).hands) < 2 or (
                (await b.ui.table(tid)).table_message is None
            ):
                assert time.monotonic() < deadline, "the start was never rendered"
                await asyncio.sleep(0.02)
            ui = await b.ui.table(tid)
            snap = await b.publisher.snapshots.load(tid)
            for u in (ann, bob):
                seat = snap.table.seat_of(u.id)
                assert seat is not None
                want = hand_screen(snap, seat, "en", Selection())[0]
                assert u.chat.messages[ui.hands[u.id]].source == want
                assert len(u.chat.messages) == before[u.id] + 1  # one hand each
            assert ui.started == snap.table.game_no
            assert len(group.messages) > in_group
            await asyncio.sleep(1.0)  # more sweeps: the start is not rendered twice
            assert [len(u.chat.messages) for u in (ann, bob)] == [
                before[ann.id] + 1,
                before[bob.id] + 1,
            ]
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


async def test_renders_waiting_at_once_keep_their_mark_with_one_script(
    kv_svc: TableService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#39: each render that waits for its edits keeps its table's mark every
    ``grace / 2``; several of one table waiting at once sent one script each
    for the same deadline.  A keep within ``grace / 4`` of the last deadline
    this process gave is answered here; the mark never falls due meanwhile."""
    clock = FakeClock()
    owner, other = (RenderMarks(kv_svc.kv, grace=4, clock=clock) for _ in "ab")
    sent: list[object] = []
    script = owner._keep

    async def counted(keys: list[str], args: list[str | int]) -> object:
        sent.append(args)
        return await script(keys, args)

    monkeypatch.setattr(owner, "_keep", counted)
    assert await owner.set("T1", 3)  # due at 4
    clock.advance(0.5)
    assert await owner.keep("T1")  # a second render of it, just after the first
    assert sent == []
    clock.advance(1.5)
    assert await owner.keep("T1")  # due at 6 now
    clock.advance(0.5)
    assert await owner.keep("T1")
    assert len(sent) == 1
    clock.advance(2.5)  # 5: past the first deadline, not the kept one
    assert await other.claim_due() == []
    assert await owner.keep("T1")  # due at 9
    assert len(sent) == 2
    assert await owner.clear("T1", 3)
    assert await owner.keep("T1") is False  # cleared: asked, nothing to keep
    assert len(sent) == 3
