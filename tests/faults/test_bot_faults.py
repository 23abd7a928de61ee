"""The real bot (long polling, the fake Bot API) across Redis outages of its own
redis-server: ``kill -9`` and a restart on the same port, SIGSTOP and SIGCONT.
No command and no press goes unanswered (the answer says the game is
unavailable for a moment: its flood tokens come from the in-process fallback),
nothing is applied twice, the first press after Redis is back succeeds, and the
game goes on without restarting the bot (the notify subscriber resubscribes)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, Message, RateLimits, SimUser
from tables import expected_fault
from tests.bot.e2e_kit import SAFETY, Harness, choose, has_game_buttons, play_out, press, running
from tests.faults.conftest import ClusterOutage, FaultyRedis

UNAVAILABLE = "unavailable for a moment"
FAST_LOOPS = {"solo_opponents": 1, "loop_backoff_base": 0.05, "loop_backoff_cap": 0.5}


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def served(answer: dict[str, object]) -> bool:
    """The press was handled: applied, or refused by the game's own rules (a
    stale keyboard, cards that make no move) -- not for the outage."""
    text = str(answer.get("text") or "")
    return UNAVAILABLE not in text and "Sorry" not in text


async def solo_game(h: Harness, fake: FakeTelegram) -> tuple[SimUser, str]:
    ann = fake.add_user("Ann", language_code="en")
    ann.start()
    await ann.wait_message(timeout=SAFETY)
    ann.send("/play chuvash")
    await ann.wait_message(has_game_buttons, timeout=SAFETY)
    table = await h.svc.tables.where(ann.id)
    assert table is not None
    await h.wait_hands(table.id, [ann])
    return ann, table.id


async def hand(h: Harness, user: SimUser, tid: str) -> Message:
    msg = await h.hand_message(user, tid)
    assert msg is not None
    return msg


async def acts(h: Harness, tid: str) -> tuple[int, int]:
    """The table's version and its number of logged human moves."""
    _t, _s, version = await h.svc.tables.get(tid)
    events = await h.svc.admin.event_page(tid, 0, 100_000)
    return version, sum(1 for e in events if e.kind == "act")


async def commands_answered(ann: SimUser) -> None:
    """/stats, /new and /help during the outage: each gets its answer."""
    for command, expected in (("/stats", UNAVAILABLE), ("/new", UNAVAILABLE), ("/help", "/play")):
        ann.send(command)
        reply = await ann.wait_message(expected, timeout=SAFETY)
        assert reply.text is not None


def tracebacks_of_faults(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Log records that carry a traceback for a fault the code expects (#40:
    one warning line each, not a traceback per request)."""
    return [
        f"{r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.exc_info and r.exc_info[1] is not None and expected_fault(r.exc_info[1])
    ]


async def wait_resubscribed(h: Harness, before: int) -> None:
    assert h.bot is not None
    app = h.bot.app
    deadline = time.monotonic() + SAFETY
    while app.background.subscriptions <= before:
        assert time.monotonic() < deadline, "the notify subscriber never resubscribed"
        await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_kill_9_every_answer_goes_out_and_play_resumes(
    outage: FaultyRedis | ClusterOutage, fake: FakeTelegram, caplog: pytest.LogCaptureFixture
) -> None:
    """On one Redis server, and on a Redis Cluster whose masters all die (#40:
    a cluster's faults -- ``ClusterDownError``, refused connections to a dead
    node -- are expected ones too: one warning line each, no traceback)."""
    faulty_redis = outage
    caplog.set_level(logging.WARNING)
    async with running(outage.url, outage.prefix, fake, **FAST_LOOPS) as h:
        ann, tid = await solo_game(h, fake)
        assert h.bot is not None
        subscribed = h.bot.app.background.subscriptions
        before = await acts(h, tid)
        msg = await hand(h, ann, tid)
        faulty_redis.kill()
        for _press in range(3):  # presses during the outage: an alert each
            button = choose(msg)
            assert button is not None
            answer = await press(ann, msg, button)
            assert answer["show_alert"], answer
            assert UNAVAILABLE in answer["text"]
        await commands_answered(ann)
        assert h.bot.app.background.loop_failures > 0  # the background loops noticed, and live on
        faulty_redis.start()
        assert await acts(h, tid) == before  # nothing of the outage was applied
        button = choose(msg)
        assert button is not None
        answer = await press(ann, msg, button)  # the first press after the restart
        assert served(answer), answer
        version, moves = await acts(h, tid)
        assert moves <= before[1] + 1  # one press, at most one move
        await wait_resubscribed(h, subscribed)
        await play_out(h, tid, [ann], stop_after=6)  # play goes on, same bot
        assert (await acts(h, tid))[0] > version
        for _restart in range(3):  # a quick restart: the pool's connections go stale
            msg = await hand(h, ann, tid)
            button = choose(msg)
            if button is None:
                break  # the game is over
            faulty_redis.restart()
            answer = await press(ann, msg, button)  # the first press after it
            assert served(answer), answer
            await play_out(h, tid, [ann], stop_after=1)
    assert not [e for e in fake.stats.errors if e[1] != 400], fake.stats.errors
    assert tracebacks_of_faults(caplog) == []


@pytest.mark.slow
async def test_sigstop_every_answer_goes_out_and_play_resumes(
    faulty_redis: FaultyRedis, fake: FakeTelegram
) -> None:
    async with running(faulty_redis.url, "fs:", fake, **FAST_LOOPS) as h:
        ann, tid = await solo_game(h, fake)
        before = await acts(h, tid)
        msg = await hand(h, ann, tid)
        faulty_redis.pause()
        button = choose(msg)
        assert button is not None
        answer = await press(ann, msg, button)
        assert answer["show_alert"], answer
        assert UNAVAILABLE in answer["text"]
        await commands_answered(ann)
        faulty_redis.resume()
        assert await acts(h, tid) == before
        answer = await press(ann, msg, button)
        assert answer.get("text") is None, answer
        assert (await acts(h, tid))[1] <= before[1] + 1
        await play_out(h, tid, [ann], stop_after=6)


@pytest.mark.slow
async def test_a_play_cut_off_after_its_start_is_completed(
    faulty_redis: FaultyRedis, fake: FakeTelegram
) -> None:
    """/play started the game, then Redis died before its hand message went out:
    the next /play sends that hand message and offers the table; "Open my
    table" sends it again, below."""
    async with running(faulty_redis.url, "fp:", fake, **FAST_LOOPS) as h:
        ann = fake.add_user("Ann", language_code="en")
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        svc = h.svc
        start = svc.games.start

        async def start_then_die(table_id: str, user: int) -> object:
            result = await start(table_id, user)
            faulty_redis.kill()  # the reply of the start is lost with it
            return result

        setattr(svc.games, "start", start_then_die)  # noqa: B010
        ann.send("/play chuvash")
        await ann.wait_message(UNAVAILABLE, timeout=SAFETY)
        setattr(svc.games, "start", start)  # noqa: B010
        faulty_redis.start()
        table = await svc.tables.where(ann.id)
        assert table is not None
        assert table.status == "playing"
        assert (await h.ui.table(table.id)).hands.get(ann.id) is None  # never sent
        ann.send("/play")  # bare: the refusal, with his table (#41)
        refusal = await ann.wait_message("You are already at a ", timeout=SAFETY)
        assert "Open my table" in " ".join(refusal.button_texts)
        await h.wait_hands(table.id, [ann])  # the missing hand message went out
        first = await hand(h, ann, table.id)
        answer = await ann.press("🃏 Open my table", message=refusal).wait_answer(SAFETY)
        assert answer["text"] == "Here is your table."
        deadline = time.monotonic() + SAFETY
        while (await hand(h, ann, table.id)).message_id == first.message_id:
            assert time.monotonic() < deadline, "no new hand message"
            await asyncio.sleep(0.05)
        assert (await hand(h, ann, table.id)).message_id > first.message_id
        await play_out(h, table.id, [ann], stop_after=3)


async def test_a_play_cut_off_before_its_start_is_rolled_back(
    faulty_redis: FaultyRedis, fake: FakeTelegram
) -> None:
    """/play opened the lobby, then Redis died before the start: the next /play
    drops that lobby and starts a game."""
    async with running(faulty_redis.url, "fr:", fake, **FAST_LOOPS) as h:
        ann = fake.add_user("Ann", language_code="en")
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        svc = h.svc
        start = svc.games.start

        async def die_first(table_id: str, user: int) -> object:
            faulty_redis.kill()
            return await start(table_id, user)

        setattr(svc.games, "start", die_first)  # noqa: B010
        ann.send("/play chuvash")
        await ann.wait_message(UNAVAILABLE, timeout=SAFETY)
        setattr(svc.games, "start", start)  # noqa: B010
        faulty_redis.start()
        abandoned = await svc.tables.where(ann.id)
        assert abandoned is not None
        assert abandoned.status == "open"
        ann.send("/play chuvash")
        await ann.wait_message(has_game_buttons, timeout=SAFETY)
        table = await svc.tables.where(ann.id)
        assert table is not None
        assert table.status == "playing"
        assert table.id != abandoned.id
        assert (await svc.lobbies.lobby(abandoned.id)).status == "cancelled"
