"""An arena end to end (#27) through the fake Bot API: an admin sets it up and
announces it, six members join, the bot seats them at tables as ordinary games
(hands in private), a restart in the middle of the first round loses nothing,
the second round is seated by itself without an immediate rematch, and once
its time is up the running games finish and the podium is posted."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits, SimUser
from tables.arena_rules import FINISHED
from telegram_bot.app import BotApp
from tests.bot.e2e_kit import (
    SAFETY,
    TELEGRAM_SCALE,
    Harness,
    is_over,
    play_out,
    running,
    settle,
    shows_result,
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


PATIENCE = 300.0
"""The arena's patience in this test: longer than any game takes on a loaded
machine, so a pair waits for new opponents as long as games are running."""


def patient(h: Harness) -> None:
    h.svc.arenas.config = replace(h.svc.arenas.config, patience=PATIENCE)


async def tables_of(h: Harness, users: list[SimUser]) -> dict[str, list[SimUser]]:
    """The table each user sits at now, and who sits there."""
    out: dict[str, list[SimUser]] = {}
    for u in users:
        t = await h.svc.tables.where(u.id)
        assert t is not None, f"{u.id} sits nowhere"
        out.setdefault(t.id, []).append(u)
    return out


async def seated(h: Harness, users: list[SimUser], exclude: set[str]) -> dict[str, list[SimUser]]:
    """Until every user sits at a table not in ``exclude`` (the arena seats them)."""
    deadline = time.monotonic() + SAFETY
    while True:
        where = [await h.svc.tables.where(u.id) for u in users]
        if all(t is not None and t.id not in exclude for t in where):
            return await tables_of(h, users)
        assert time.monotonic() < deadline, "the arena never seated everybody"
        await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_an_arena_of_six_in_a_group_with_a_restart(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        patient(h)
        users = [fake.add_user(f"P{i}", language_code="en") for i in range(6)]
        owner = users[0]
        group = owner.create_group("Arena night", *users[1:])
        owner.add_bot_to(group)
        await owner.wait_message("/new", group, timeout=SAFETY)
        for u in users:
            u.start()
            await u.wait_message(timeout=SAFETY)

        users[1].send("/arena", group)  # not an admin: what an arena is
        help_ = await users[1].wait_message("A group admin starts one", group, timeout=SAFETY)
        assert not help_.buttons
        owner.send("/arena", group)
        setup = await owner.wait_message("A new arena", group, timeout=SAFETY)
        refused = await users[1].press("Announce", message=setup, chat=group).wait_answer(SAFETY)
        assert "Only the group's admins" in (refused.get("text") or "")
        await owner.press("Announce", message=setup, chat=group).wait_answer(SAFETY)
        board = await owner.wait_message("Arena · Chuvash Rooster", group, timeout=SAFETY)
        assert board.message_id == setup.message_id  # the set-up became the arena

        for u in users:
            joined = await u.press("Join", message=board, chat=group).wait_answer(SAFETY)
            assert "You are in the arena" in (joined.get("text") or ""), joined
        again = await users[2].press("Join", message=board, chat=group).wait_answer(SAFETY)
        assert "already" in (again.get("text") or "")

        current = await h.svc.arenas.current(group.id)
        assert current is not None
        arena_id = current.id

        # round 1: three tables of two, every hand in private
        first = await seated(h, users, set())
        assert sorted(len(v) for v in first.values()) == [2, 2, 2]
        for tid, players in first.items():
            table = (await h.svc.tables.load(tid)).table
            assert (table.arena, table.chat, table.rated) == (arena_id, group.id, True)
            await h.wait_hands(tid, players)
        rng = random.Random(27)
        some_tid, some_players = next(iter(first.items()))
        await play_out(h, some_tid, some_players, rng=rng, stop_after=3)
        await h.restart()  # mid-round: the arena and its games go on
        patient(h)
        for tid, players in first.items():
            await play_out(h, tid, players, rng=rng)
            for u in players:  # the result, without Rematch (#38: the arena seats again)
                hand = await h.hand_message(u, tid)
                assert shows_result(hand), hand.text if hand else None
                assert not is_over(hand), hand.button_texts if hand else None

        # the scores reached the arena once, and its message shows them
        arena = await h.svc.arenas.get(arena_id)
        assert arena.games >= 3
        await fake.world.wait_for(lambda: "games: 3" in (board.text or "") or None, SAFETY)

        # round 2, seated by the arena itself as games end: the players of the
        # first two tables meet new opponents; the last two, who could only
        # meet again while games run, wait a while (patience) and then do
        ab = [u for tid in list(first)[:2] for u in first[tid]]
        c = first[list(first)[2]]
        second = await seated(h, ab, set(first))
        pairs_before = {frozenset(u.id for u in v) for v in first.values()}
        pairs_after = {frozenset(u.id for u in v) for v in second.values()}
        assert sorted(len(v) for v in second.values()) == [2, 2]
        assert not pairs_before & pairs_after
        assert [await h.svc.tables.where(u.id) for u in c] == [None, None]  # waiting
        h.clock.advance(PATIENCE + 1)
        again = await seated(h, c, set(first))
        assert [len(v) for v in again.values()] == [2]

        # time is up: the games running finish (the turn timers hand the seats of
        # players who stopped to the AI), then the podium
        deadline = time.monotonic() + SAFETY
        while (await h.svc.arenas.get(arena_id)).status != FINISHED:
            assert time.monotonic() < deadline, "the arena never finished"
            h.clock.advance(61 if h.clock.offset else 46 * 60)
            await asyncio.sleep(0.2)
        podium = await owner.wait_message("The arena is over", group, timeout=SAFETY)
        assert "🥇" in (podium.text or "")
        await fake.world.wait_for(lambda: not board.buttons or None, SAFETY)
        final = await h.svc.arenas.get(arena_id)
        assert final.games >= 6
        assert final.playing == ()
        # no table message per game in the group: the arena's message speaks for them
        for tid in [*first, *second, *again]:
            assert (await h.ui.table(tid)).table_message is None, tid
    assert not fake.stats.errors, fake.stats.error_texts


@pytest.mark.slow
async def test_two_processes_seat_and_score_two_arenas_once(
    redis_url: str, redis_prefix: str
) -> None:
    """A second bot process shares the timers (the shards' leases): two arenas in
    two groups are woken by either; each game is scored once, each player
    sits at one table at a time.  The flood limiter is on, as in production:
    what each message shows is shared there, so the two processes never both
    send the same edit (without it, a loaded machine let both edit a board
    to the same text: Telegram's 400 "message is not modified", #37) --
    with Telegram's time 10 times as fast, on the fake's side too."""
    async with (
        FakeTelegram(limits=RateLimits(), time_scale=TELEGRAM_SCALE) as fake,
        running(redis_url, redis_prefix, fake, telegram_time_scale=TELEGRAM_SCALE) as h,
    ):
        other = BotApp(h.settings(), clock=h.clock)  # timers and sweeps, no polling
        await other.setup()
        other.start_background()
        try:
            arenas: list[tuple[str, list[SimUser]]] = []
            for g in range(2):
                users = [fake.add_user(f"G{g}P{i}", language_code="en") for i in range(4)]
                group = users[0].create_group(f"Arena {g}", *users[1:])
                users[0].add_bot_to(group)
                for u in users:
                    u.start()
                users[0].send("/arena", group)
                setup = await users[0].wait_message("A new arena", group, timeout=SAFETY)
                await users[0].press("Announce", message=setup, chat=group).wait_answer(SAFETY)
                board = await users[0].wait_message("Arena ·", group, timeout=SAFETY)
                for u in users:
                    await u.press("Join", message=board, chat=group).wait_answer(SAFETY)
                current = await h.svc.arenas.current(group.id)
                assert current is not None
                arenas.append((current.id, users))
            rng = random.Random(3)
            for arena_id, users in arenas:
                first = await seated(h, users, set())
                assert sorted(len(v) for v in first.values()) == [2, 2]
                for tid, players in first.items():
                    await h.wait_hands(tid, players)
                    await play_out(h, tid, players, rng=rng)
                second = await seated(h, users, set(first))
                assert sorted(len(v) for v in second.values()) == [2, 2]
                arena = await h.svc.arenas.get(arena_id)
                games = await h.svc.arenas.games(arena_id, 0, 100)
                assert arena.games == len(games) == 2
                assert sorted(g["table"] for g in games) == sorted(first)
                assert sorted(sum((t.users for t in arena.playing), ())) == sorted(
                    u.id for u in users
                )
        finally:
            await other.aclose()
    assert not fake.stats.errors, fake.stats.error_texts


async def test_a_player_at_another_table_is_withdrawn_and_told_why(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (fake.add_user(n, language_code="ru") for n in ("Ann", "Bob"))
        group = ann.create_group("Arena", bob)
        ann.add_bot_to(group)
        for u in (ann, bob):
            u.start()
            await u.wait_message(timeout=SAFETY)
        bob.send("/new chuvash")  # a private lobby: he sits there
        lobby = await h.svc.tables.where(bob.id)
        deadline = time.monotonic() + SAFETY
        while lobby is None:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
            lobby = await h.svc.tables.where(bob.id)
        ann.send("/arena", group)
        setup = await ann.wait_message("Новая арена", group, timeout=SAFETY)
        await ann.press("Объявить", message=setup, chat=group).wait_answer(SAFETY)
        board = await ann.wait_message("Арена ·", group, timeout=SAFETY)
        for u in (ann, bob):
            await u.press("Присоединиться", message=board, chat=group).wait_answer(SAFETY)
        told = await bob.wait_message("вы играли за другим", timeout=SAFETY)
        assert "Очки сохранились" in (told.text or "")
        current = await h.svc.arenas.current(group.id)
        assert current is not None
        me = current.player(bob.id)
        assert me is not None
        assert me.withdrawn
        assert await h.svc.tables.where(ann.id) is None  # she waits for a new opponent
    assert not fake.stats.errors, fake.stats.error_texts


async def test_an_arena_game_sends_each_player_one_hand(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """#41, seen in the sandbox: each arena game came to each player twice --
    a hand left at the game's first version (its turn «ended 7 minutes ago»,
    its cards answering «This is an old message») above the one played on."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        patient(h)
        owner, other = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        group = owner.create_group("Arena night", other)
        owner.add_bot_to(group)
        await owner.wait_message("/new", group, timeout=SAFETY)
        for u in (owner, other):
            u.start()
            await u.wait_message(timeout=SAFETY)
        owner.send("/arena", group)
        setup = await owner.wait_message("A new arena", group, timeout=SAFETY)
        await owner.press("Announce", message=setup, chat=group).wait_answer(SAFETY)
        board = await owner.wait_message("Arena · Chuvash Rooster", group, timeout=SAFETY)
        for u in (owner, other):
            await u.press("Join", message=board, chat=group).wait_answer(SAFETY)
        [(tid, players)] = (await seated(h, [owner, other], set())).items()
        await h.wait_hands(tid, players)
        await settle(h, quiet=1.0)
        for u in players:
            hands = fake.world.find_messages(u.id, "An arena game")
            assert len(hands) == 1, [m.text for m in hands]
    assert not fake.stats.errors, fake.stats.error_texts
