"""End to end, the hard cases: stale buttons, double presses, another player's
button, forged data; turn timers, AI takeover and taking the seat back; leaving
mid-game; a bot restart mid-game; rematch; the deep link for a user who never
started the bot; a normal game under Telegram's limits gets no 429."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from typing import Any, Literal

import pytest
from aiogram.types import InlineKeyboardMarkup

from sandbox.fake_api import FakeTelegram, Message, RateLimits, SimUser
from telegram_bot.buttons.callbacks import GameCb, LobbyOp, SeatCb, parse_game
from telegram_bot.delivery.address import Address
from telegram_bot.delivery.coalesce import Urgency
from telegram_bot.state.snapshot import Snapshot
from tests.bot.e2e_kit import (
    SAFETY,
    Harness,
    assert_no_hidden_cards,
    choose,
    game_buttons,
    has_game_buttons,
    is_over,
    op,
    play_out,
    record_seeds,
    running,
)
from tests.bot.test_e2e_invite import invite_lobby


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


class WatchedLock(asyncio.Lock):
    """A table's render lock that tells when someone queues for it."""

    def __init__(self) -> None:
        super().__init__()
        self._queued = asyncio.Event()

    async def acquire(self) -> Literal[True]:
        if self.locked():
            self._queued.set()
        return await super().acquire()

    async def queued(self) -> None:
        """Until a second caller waits for the lock."""
        await self._queued.wait()
        self._queued.clear()


async def mover(
    h: Harness, tid: str, humans: list[SimUser]
) -> tuple[SimUser, Message, dict[str, Any]]:
    """(user, his hand message, a button he may press now)."""
    for _ in range(200):
        for u in humans:
            m = await h.hand_message(u, tid)
            if m is None:
                continue
            b = choose(m)
            if b is not None:
                return u, m, b
        await asyncio.sleep(0.05)
    raise AssertionError("nobody can move")


async def test_stale_double_press_foreign_and_forged_buttons(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user("Ann"), fake.add_user("Bob")]
        tid = await invite_lobby(h, "chuvash", humans, 0)  # records the seeds
        # double press: two taps of one button before any answer -> exactly one move
        u, m, b = await mover(h, tid, humans)
        _t, _s, v0 = await h.svc.tables.get(tid)
        q1 = u.press(data=b["callback_data"], message=m)
        q2 = u.press(data=b["callback_data"], message=m)
        a1, a2 = await q1.wait_answer(SAFETY), await q2.wait_answer(SAFETY)
        _t, _s, v1 = await h.svc.tables.get(tid)
        assert v1 == v0 + 1 or v1 == v0  # one move (or a selection toggle: none)
        assert [a1["show_alert"], a2["show_alert"]].count(True) <= 1
        # a stale button (drawn before his hand or options changed: an older version
        # and another stamp): a short notice (a toast, not a modal alert) and his
        # fresh keyboard -- silent if he already moved from it (a double tap);
        # nothing changes (issue 13)
        u, m, b = await mover(h, tid, humans)
        if parse_game(b["callback_data"]).press.action == "P":  # type: ignore[union-attr]
            b = next((x for x in game_buttons(m) if x["callback_data"] != b["callback_data"]), b)
        old = b["callback_data"]
        cb = parse_game(old)
        assert cb is not None
        assert len(cb.stamp) == 6
        other_stamp = ("A" if cb.stamp[0] != "A" else "B") + cb.stamp[1:]
        stale = GameCb(
            game=cb.game, version=cb.version - 1, payload=cb.payload, stamp=other_stamp
        ).pack()
        loaded = await h.svc.tables.load(tid)
        seat = loaded.table.seat_of(u.id)
        assert seat is not None
        repeated = loaded.moved_since(seat, cb.version - 1)
        before = loaded.version
        for data in (
            stale,
            GameCb(game=cb.game, version=cb.version - 1, payload=cb.payload).pack(),
        ):
            # ... and without a stamp (a keyboard of an older release): stale too
            answer = await u.press(data=data, message=m, forged=True).wait_answer(SAFETY)
            assert not answer.get("show_alert"), answer
            if cb.press.action != "P":
                assert (await h.svc.tables.get(tid))[2] == before
                if repeated:
                    assert not answer.get("text"), answer
                else:
                    assert "out of date" in answer["text"]
        # an older version with his current stamp (others moved, his hand and options
        # did not change): the press means what it meant and is honoured
        honoured = GameCb(
            game=cb.game, version=cb.version - 1, payload=cb.payload, stamp=cb.stamp, sel=cb.sel
        ).pack()
        answer = await u.press(data=honoured, message=m, forged=True).wait_answer(SAFETY)
        assert not answer.get("show_alert"), answer
        _t, _s, before = await h.svc.tables.get(tid)
        # another player's button (his data pressed in my chat): alert, no change
        other = humans[1] if u is humans[0] else humans[0]
        mine = await h.hand_message(other, tid)
        answer = await other.press(data=old, message=mine, forged=True).wait_answer(SAFETY)
        assert (await h.svc.tables.get(tid))[2] == before
        # pressed on a message that is not his hand message (the lobby copy)
        lobby_copy = other.messages()[-2]
        answer = await other.press(data=old, message=lobby_copy, forged=True).wait_answer(SAFETY)
        assert answer["show_alert"]
        assert (await h.svc.tables.get(tid))[2] == before
        # forged / malformed payloads
        for data in ("g:zzz:1:c7S", "g:" + tid + ":1:DROP", "l:x:??", "garbage"):
            answer = await other.press(data=data, message=mine, forged=True).wait_answer(SAFETY)
            assert answer["show_alert"], data
        assert (await h.svc.tables.get(tid))[2] == before
        await play_out(h, tid, humans)
        assert await assert_no_hidden_cards(h, tid, humans) > 5
    assert not fake.stats.errors


@pytest.mark.slow
async def test_timers_takeover_take_back_leave_restart_rematch(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user("Cy"), fake.add_user("Di"), fake.add_user("Ed")]
        owner = humans[0]
        owner.start()
        await owner.wait_message(timeout=SAFETY)
        owner.send("/new chuvash")
        lobby = await owner.wait_message("Invitation link", timeout=SAFETY)
        code = (lobby.text or "").rsplit("start=", 1)[1].split()[0]
        await owner.press(data=op(code, LobbyOp.SETTINGS), message=lobby).wait_answer(SAFETY)
        # answered first, then shown: the settings keyboard comes with the edit
        await fake.world.wait_for(lambda: "players at most" in (lobby.text or "") or None, SAFETY)
        await owner.press(data=f"l:{code}:{LobbyOp.SET.value}:timer=30", message=lobby).wait_answer(
            SAFETY
        )
        for friend in humans[1:]:
            friend.start(code)
            await friend.wait_message(timeout=SAFETY)
        record_seeds(h.svc)
        await owner.press(data=op(code, LobbyOp.START), message=lobby).wait_answer(SAFETY)
        await h.wait_hands(code, humans)
        # the timer runs out: the move is made for the players the game waits for
        h.clock.advance(31)
        assert h.bot is not None
        hooks = h.bot.app.timer_hooks  # the bot's own part of a tick (its render marks)
        await h.svc.timers.tick(hooks=hooks)
        events = await h.svc.admin.event_page(code, 0, 10_000)
        await fake.world.wait_for(lambda: True, 1)
        assert any(e.kind == "timeout" for e in events)
        assert any(e.kind == "auto" for e in events)
        # repeated timeouts: the AI takes the seat, the player sees a take-back button
        for _ in range(4):
            h.clock.advance(31)
            await h.svc.timers.tick(hooks=hooks)
        events = await h.svc.admin.event_page(code, 0, 10_000)
        taken = [e for e in events if e.kind == "takeover"]
        assert taken
        table, _s, _v = await h.svc.tables.get(code)
        seat = taken[0].seat
        user = next(u for u in humans if u.id == table.seats[seat].user)
        back = SeatCb(game=code, op="back").pack()

        def has_back() -> object:
            m = fake.world.messages(user.chat)
            return any(b.get("callback_data") == back for x in m for b in x.buttons) or None

        await fake.world.wait_for(has_back, SAFETY, "the take-back button")
        msg = await h.hand_message(user, code)
        assert msg is not None
        table, _s, _v = await h.svc.tables.get(code)
        if table.status == "playing":
            await user.press(data=back, message=msg).wait_answer(SAFETY)
            table, _s, _v = await h.svc.tables.get(code)
            assert not table.seats[seat].ai_controlled or table.status != "playing"
        # leaving mid-game: the AI plays his seat for good
        if table.status == "playing":
            leaver = humans[2]
            leaver.send("/leave")
            await leaver.wait_message("You left", timeout=SAFETY)
            table, _s, _v = await h.svc.tables.get(code)
            assert next(s for s in table.seats if s.user == leaver.id).left
        stayers = humans[:2]
        # a bot restart mid-game continues the same game
        await play_out(h, code, stayers, stop_after=5)
        _t, _s, v_before = await h.svc.tables.get(code)
        await h.restart()
        record_seeds(h.svc)
        _t, _s, v_after = await h.svc.tables.get(code)
        assert v_after == v_before
        h.clock.offset = 0.0
        await play_out(h, code, stayers, rng=random.Random(3))
        for u in stayers:
            assert is_over(await h.hand_message(u, code))
        # rematch (#38): it starts once every present player said yes -- the same
        # seats for those who did, a new game, new hand messages; Ed, who left,
        # is not dealt in
        for u in stayers:
            if (await h.svc.tables.get(code))[0].status == "playing":
                break  # the others walked away (the AI played them): started already
            msg = await h.hand_message(u, code)
            assert msg is not None
            rematch = next(b for b in msg.buttons if ":re" in b.get("callback_data", ""))
            await u.press(data=rematch["callback_data"], message=msg).wait_answer(SAFETY)
        await owner.wait_message(has_game_buttons, timeout=SAFETY)
        table, _s, _v = await h.svc.tables.get(code)
        assert table.game_no == 2
        assert humans[2].id not in [s.user for s in table.seats]
        again = [u for u in stayers if table.seat_of(u.id) is not None]
        assert owner in again
        await h.wait_hands(code, again)
        await play_out(h, code, again, rng=random.Random(4))
        assert await assert_no_hidden_cards(h, code, again) > 5


async def test_the_invitation_link_seats_a_newcomer_in_private(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """The lobby's invitation link opens the private chat and seats him (a *Join*
    press in the group seats him too, to play there: test_e2e_ephemeral)."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, newbie = fake.add_user("Ann"), fake.add_user("Newbie")
        group = ann.create_group("G", newbie)
        ann.add_bot_to(group)
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        ann.send("/new", group)
        lobby = await ann.wait_message("Invitation link", group, timeout=SAFETY)
        link = (
            f"https://t.me/{fake.bot_user.username}?start="
            + ((lobby.text or "").rsplit("start=", 1)[1].split()[0])
        )
        newbie.follow_link(link)
        await newbie.wait_message("You joined", timeout=SAFETY)
        table = await h.svc.tables.where(newbie.id)
        assert table is not None
        assert len(table.seats) == 2
        await fake.world.wait_for(lambda: "Newbie" in (lobby.text or "") or None, SAFETY)
        # unknown commands, /rules, /lang
        newbie.send("/frobnicate")
        await newbie.wait_message("do not know", timeout=SAFETY)
        newbie.send("/lang uk")
        await newbie.wait_message("українська", timeout=SAFETY)
        newbie.send("/rules")
        await newbie.wait_message("щолковськ", timeout=SAFETY)


@pytest.mark.slow
async def test_a_normal_game_gets_no_429(redis_url: str, redis_prefix: str) -> None:
    """At Telegram's real pace on purpose (#37): the other whole games run its
    time faster (``TELEGRAM_SCALE``); this one keeps the windows at their real
    length, with the machine's real latency against them."""
    async with (
        FakeTelegram(limits=RateLimits()) as fake,
        running(redis_url, redis_prefix, fake, solo_opponents=1) as h,
    ):
        solo = fake.add_user("Solo")
        solo.start()
        await solo.wait_message(timeout=SAFETY)
        solo.send("/play chuvash")
        await solo.wait_message(has_game_buttons, timeout=SAFETY)
        table = await h.svc.tables.where(solo.id)
        assert table is not None
        await h.wait_hands(table.id, [solo])
        await play_out(h, table.id, [solo], rng=random.Random(5))
        assert is_over(await h.hand_message(solo, table.id))
        assert fake.stats.retry_after == 0, fake.stats.refusals
        assert not [k for k in fake.stats.errors if k[1] == 429]


@pytest.mark.slow
async def test_a_moves_own_notification_renders_nothing_more(
    redis_url: str, redis_prefix: str, fake: FakeTelegram, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every write is announced to all bot processes (pub/sub), and each re-renders
    the table.  The process that made the move renders it itself (the actor's own
    edit at once), so its own announcement renders nothing more -- even when it
    reaches the table's lock first (under load), which used to render the move
    once more as everybody's deferred update: a second edit of every hand."""
    from engine import view

    async with running(redis_url, redis_prefix, fake) as h:
        alice, bob = fake.add_user("Alice"), fake.add_user("Bob")
        bob.start()
        tid = await invite_lobby(h, "chuvash", [alice, bob], 0)
        assert h.bot is not None
        pub = h.bot.app.publisher
        assert pub is not None
        delivery = h.bot.app.delivery
        # what the publisher renders: the versions it loads to render, the edits it asks
        renders: list[int] = []
        edits: list[tuple[int, Urgency]] = []
        real_snapshot, real_edit = pub.snapshots.load, delivery.edit

        async def loaded(table_id: str) -> Snapshot:
            snap = await real_snapshot(table_id)
            renders.append(snap.version)
            return snap

        async def edit(
            to: Address,
            text: str,
            markup: InlineKeyboardMarkup | None = None,
            urgency: Urgency = Urgency.NOW,
            *,
            version: str = "",
            gap: float | None = None,
        ) -> int | None:
            edits.append((to.chat, urgency))
            return await real_edit(to, text, markup, urgency, version=version, gap=gap)

        monkeypatch.setattr(pub.snapshots, "load", loaded)
        monkeypatch.setattr(delivery, "edit", edit)
        lock = WatchedLock()
        monkeypatch.setattr(pub.locks, "of", lambda table_id: lock)
        _table, state, version = await h.svc.tables.get(tid)
        assert state is not None
        seat = state.to_act()[0]
        user = (alice, bob)[seat]
        shown = {}
        for u in (alice, bob):
            m = await h.hand_message(u, tid)
            assert m is not None
            shown[u.id] = m.version
        async with lock:  # the table is being rendered: the move's render queues
            result = await h.svc.games.apply(tid, user.id, view(state, seat)["legal"][0], version)
            announced = asyncio.create_task(pub.refresh(tid, min_version=result.version))
            await lock.queued()  # the announcement's re-render waits first
            own = asyncio.create_task(
                pub.refresh(tid, seats=result.changed_seats, actor=user.id, wrote=result.version)
            )
            await asyncio.sleep(0)
        await asyncio.wait_for(asyncio.gather(announced, own), SAFETY)
        assert renders == [result.version]  # rendered once: the actor's own render
        other = (bob, alice)[seat].id
        assert len(edits) == 2
        assert dict(edits)[user.id] is Urgency.NOW
        assert dict(edits)[other] is not Urgency.NOW
        await h.bot.app.delivery.flush()
        for u in (alice, bob):  # both hands show the move (greyed cards carry no version)
            m = await h.hand_message(u, tid)
            assert m is not None
            assert m.version > shown[u.id]
            versions = {cb.version for b in m.buttons if (cb := parse_game(b.get("callback_data")))}
            assert versions <= {result.version}

        # should the mover's own refresh fail, the announcement's renders after all
        renders.clear()
        edits.clear()
        _table, state, version = await h.svc.tables.get(tid)
        assert state is not None
        seat = state.to_act()[0]
        user = (alice, bob)[seat]
        failures = [RuntimeError("redis went away")]

        async def flaky_snapshot(table_id: str) -> Snapshot:
            if failures:
                raise failures.pop()
            return await loaded(table_id)

        monkeypatch.setattr(pub.snapshots, "load", flaky_snapshot)
        async with lock:
            result = await h.svc.games.apply(tid, user.id, view(state, seat)["legal"][0], version)
            announced = asyncio.create_task(pub.refresh(tid, min_version=result.version))
            await lock.queued()
            own = asyncio.create_task(
                pub.refresh(tid, seats=result.changed_seats, actor=user.id, wrote=result.version)
            )
            await asyncio.sleep(0)
        with pytest.raises(RuntimeError):
            await asyncio.wait_for(own, SAFETY)
        await asyncio.wait_for(announced, SAFETY)
        assert renders == [result.version]
        assert not failures
        assert edits
        assert all(u is not Urgency.NOW for _c, u in edits)
        assert pub.shown[tid] == result.version
