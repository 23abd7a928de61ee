"""A rated game's leave cools the player down at once (#38, point 2), through
the bot and the fake Bot API: his next rated lobby refuses him, saying why and
for how long, while the AI still plays out the game he left."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from tables import GameResult
from tests.bot.e2e_kit import SAFETY, has_lobby_buttons, running, settle


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def test_a_leaver_is_refused_his_next_rated_lobby_at_once(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob, cat = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob", "Cat"))
        for u in (ann, cat):
            u.start()
            await u.wait_message(timeout=SAFETY)
        # an offence of Ann's an hour ago: the next one means 10 minutes
        earlier = GameResult(
            table="before",
            game=1,
            variant="chuvash",
            chat=None,
            places=(2, 1),
            loser=0,
            draw=False,
            seats=((ann.id, "Ann"), (99, "Zed")),
            at=int(h.clock() * 1000) - 3_600_000,
            rated=True,
            away=(0,),
            taken=(0,),
        )
        assert await h.svc.ratings.settle(earlier) is not None
        ann.send("/new")
        lobby = await ann.wait_message(has_lobby_buttons, timeout=SAFETY)
        table = await h.svc.tables.where(ann.id)
        assert table is not None
        assert table.rated
        bob.follow_link(f"https://t.me/{fake.world.bot.username}?start={table.id}")
        await bob.wait_message("You joined", timeout=SAFETY)
        await ann.press("Start", message=lobby).wait_answer(SAFETY)
        await h.wait_hands(table.id, [ann, bob])
        ann.send("/leave")
        await ann.wait_message("You left the game", timeout=SAFETY)
        # Cat's rated lobby: Ann follows its link while Bob still plays the AI
        cat.send("/new")
        await cat.wait_message(has_lobby_buttons, timeout=SAFETY)
        other = await h.svc.tables.where(cat.id)
        assert other is not None
        assert other.rated
        ann.follow_link(f"https://t.me/{fake.world.bot.username}?start={other.id}")
        refusal = await ann.wait_message("You left rated games unfinished", timeout=SAFETY)
        assert "10 min" in (refusal.text or "")
        await settle(h)
        assert (await h.svc.tables.load(table.id)).table.status == "playing"
        seated = (await h.svc.lobbies.lobby(other.id)).seats
        assert [s.user for s in seated] == [cat.id]


async def test_a_cooling_player_is_refused_an_arena_by_its_join(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """#39, the one cooldown check: *Join* on an arena refuses a player in a
    cooldown from rated games, saying why and for how long, as a rated lobby
    does -- the refusal comes from the arena's own join (inside its
    compare-and-set), no longer from a check of the bot's beside it."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, cat = (fake.add_user(n, language_code="en") for n in ("Ann", "Cat"))
        for u in (ann, cat):
            u.start()
            await u.wait_message(timeout=SAFETY)
        now = int(h.clock() * 1000)
        for i, at in enumerate((now - 3_600_000, now)):  # two offences: 10 minutes
            walked = GameResult(
                table=f"before{i}", game=1, variant="chuvash", chat=None, places=(2, 1),
                loser=0, draw=False, seats=((ann.id, "Ann"), (99, "Zed")), at=at, rated=True,
                away=(0,), taken=(0,),
            )  # fmt: skip
            assert await h.svc.ratings.settle(walked) is not None
        group = cat.create_group("Arena", ann)
        cat.add_bot_to(group)
        cat.send("/arena", group)
        setup = await cat.wait_message("A new arena", group, timeout=SAFETY)
        await cat.press("Announce", message=setup, chat=group).wait_answer(SAFETY)
        board = await cat.wait_message("Arena · Chuvash Rooster", group, timeout=SAFETY)
        told = await ann.press("Join", message=board, chat=group).wait_answer(SAFETY)
        assert "You left rated games unfinished" in (told.get("text") or ""), told
        assert "10 min" in (told.get("text") or ""), told
        arena = await h.svc.arenas.current(group.id)
        assert arena is not None
        assert arena.player(ann.id) is None
        joined = await cat.press("Join", message=board, chat=group).wait_answer(SAFETY)
        assert "You are in the arena" in (joined.get("text") or "")
    assert not fake.stats.errors, fake.stats.error_texts
