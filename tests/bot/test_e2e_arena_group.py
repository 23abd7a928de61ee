"""An arena when the bot loses its group, and a group admin's cancel (#38),
end to end through the fake Bot API: the bot removed (or kicked) from a group
with a running arena -- the arena cancelled, its games stopped without a
result, nobody rated or charged, each player told in private; the group
upgraded to a supergroup -- the same for the old id, whether the bot learns
it from Telegram's service messages or from a 400 with ``migrate_to_chat_id``
(never retried); a group admin cancels the arena from ``/arena``, anybody
else is refused."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits, SimUser
from sandbox.fake_api.inbox import member_update
from sandbox.fake_api.models import Chat, Message
from tables import CANCELLED as TABLE_CANCELLED
from tables.arena_rules import CANCELLED, RUNNING
from tables.records import GameResult
from telegram_bot.buttons.callbacks import ArenaCb, ArenaOp
from tests.bot.e2e_kit import SAFETY, Harness, has_game_buttons, running


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def until(what: str, check: Callable[[], Awaitable[bool]]) -> None:
    """Poll ``check`` until it is true (SAFETY: a hung test fails)."""
    deadline = time.monotonic() + SAFETY
    while not await check():
        assert time.monotonic() < deadline, f"never: {what}"
        await asyncio.sleep(0.05)


async def arena_at_play(
    fake: FakeTelegram, h: Harness, n: int = 4
) -> tuple[list[SimUser], Chat, str, dict[str, list[SimUser]]]:
    """A group whose creator announced an arena that ``n`` members joined; once
    the bot seated them all (tables of two, hands in private): the members, the
    group, the arena's id and the tables with their players."""
    users = [fake.add_user(f"M{i}", language_code="en") for i in range(n)]
    owner = users[0]
    group = owner.create_group("Arena club", *users[1:])
    owner.add_bot_to(group)
    for u in users:
        u.start()
        await u.wait_message(timeout=SAFETY)
    owner.send("/arena", group)
    setup = await owner.wait_message("A new arena", group, timeout=SAFETY)
    await owner.press("Announce", message=setup, chat=group).wait_answer(SAFETY)
    board = await owner.wait_message("Arena ·", group, timeout=SAFETY)
    for u in users:
        await u.press("Join", message=board, chat=group).wait_answer(SAFETY)
    current = await h.svc.arenas.current(group.id)
    assert current is not None
    tables: dict[str, list[SimUser]] = {}

    async def all_seated() -> bool:
        tables.clear()
        for u in users:
            t = await h.svc.tables.where(u.id)
            if t is None:
                return False
            tables.setdefault(t.id, []).append(u)
        return True

    await until("everybody seated", all_seated)
    for tid, players in tables.items():
        await h.wait_hands(tid, players)
    return users, group, current.id, tables


async def nothing_scored_nobody_charged(
    h: Harness, users: list[SimUser], arena_id: str, tables: dict[str, list[SimUser]], why: str
) -> None:
    """The arena cancelled and scoring nothing; its games stopped with no result;
    nobody sits anywhere, nobody has an offence, a cooldown or a rated game."""

    async def stopped() -> bool:
        arena = await h.svc.arenas.get(arena_id)
        loaded = [await h.svc.tables.load(tid) for tid in tables]
        return (
            arena.status == CANCELLED
            and arena.playing == ()
            and all(x.table.status == TABLE_CANCELLED for x in loaded)
        )

    await until("the arena and its games stopped", stopped)
    arena = await h.svc.arenas.get(arena_id)
    assert arena.games == 0
    assert arena.why == f"group {why}"
    for tid in tables:
        loaded = await h.svc.tables.load(tid)
        assert loaded.table.stopped == why
        assert loaded.result is None
        assert await h.svc.arenas.record(arena_id, _no_result(tid)) is None
    for u in users:
        assert await h.svc.tables.where(u.id) is None
        mine = await h.svc.ratings.of(u.id)
        assert (mine.offences, mine.cooldown_until, mine.recent) == (0, None, 0), mine
        assert all(r.games == 0 for r in mine.ratings.values()), mine


def _no_result(tid: str) -> GameResult:
    """A made-up result of a stopped table: the cancelled arena takes no score."""
    return GameResult(
        table=tid,
        game=1,
        variant="chuvash",
        chat=None,
        places=(),
        loser=None,
        draw=True,
        seats=(),
        at=0,
    )


def stopped_hand(hand: Message) -> bool | None:
    """The hand says its game ended without a result, and has no buttons left."""
    return ("ended without a result" in (hand.text or "") and not hand.buttons) or None


async def told(u: SimUser, words: str) -> None:
    await u.wait_message(words, u.chat, since=0, timeout=SAFETY)


@pytest.mark.slow
@pytest.mark.parametrize("kick", [False, True], ids=["removed", "kicked"])
async def test_the_bot_removed_from_a_group_stops_its_arena_and_charges_nobody(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, kick: bool
) -> None:
    """Removed by an admin who plays none of its games (#38: he did nothing
    to anybody's game; a player who removes it forfeits his, below)."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        users, group, arena_id, tables = await arena_at_play(fake, h)
        other = fake.add_user("Lobbyist", language_code="en")
        other.join(group)
        other.send("/new", group)  # an ordinary lobby of the same group
        await other.wait_message("Join", group, timeout=SAFETY)
        lobby = await h.svc.tables.where(other.id)
        assert lobby is not None
        admin = fake.add_user("Admin", language_code="en")
        admin.join(group)
        group.members[admin.id] = "administrator"  # promoted by the creator

        hands = {u.id: await h.hand_message(u, t) for t, ps in tables.items() for u in ps}

        admin.remove_bot_from(group, kick=kick)

        await nothing_scored_nobody_charged(h, users, arena_id, tables, "removed")
        assert (await h.svc.lobbies.lobby(lobby.id)).status == TABLE_CANCELLED
        assert await h.svc.tables.where(other.id) is None
        for u in users:  # in private, where the bot may write to him
            await told(u, "The bot was removed from the group “Arena club”")
            hand = hands[u.id]
            assert hand is not None
            await fake.world.wait_for(functools.partial(stopped_hand, hand), SAFETY)


@pytest.mark.slow
async def test_a_player_who_kicks_the_bot_mid_game_loses_it_once(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """#38: a player kicks the bot to escape the rated game he plays: that game
    ends at once as his loss -- rated, him last, the walk-away offence his --
    while the group's other game stops without a result and the cancelled
    arena scores nothing.  Each is told what happened in private.  The same
    removal delivered again (a new update id: past the update dedupe) changes
    nothing.  Before, his game was cancelled: he lost nothing."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        users, group, arena_id, tables = await arena_at_play(fake, h)
        [(mine, pair), (theirs, others)] = [
            (tid, ps) for tid, ps in tables.items() if users[1] in ps
        ] + [(tid, ps) for tid, ps in tables.items() if users[1] not in ps]
        cheat = users[1]
        [rival] = [u for u in pair if u is not cheat]
        before = await h.svc.ratings.many([cheat.id, rival.id], "chuvash")
        hand = await h.hand_message(rival, mine)
        assert hand is not None

        cheat.remove_bot_from(group, kick=True)

        async def over() -> bool:
            loaded = await h.svc.tables.load(mine)
            if loaded.result is None:
                return False
            return await h.svc.ratings.settlement(mine, loaded.result.game) is not None

        await until("his game settled", over)
        loaded = await h.svc.tables.load(mine)
        res = loaded.result
        assert res is not None
        seat = loaded.table.seats.index(next(s for s in loaded.table.seats if s.user == cheat.id))
        assert (res.loser, res.away, res.taken, res.rated) == (seat, (seat,), (seat,), True)
        settled = await h.svc.ratings.settlement(mine, res.game)
        assert settled is not None
        assert settled.counted
        assert settled.offences == {cheat.id: 0.0}  # his first: a warning
        after = await h.svc.ratings.many([cheat.id, rival.id], "chuvash")
        assert after[cheat.id].shown < before[cheat.id].shown
        assert after[rival.id].shown > before[rival.id].shown
        await until(
            "the other game stopped",
            lambda: _status_is(h, theirs, TABLE_CANCELLED),
        )
        assert (await h.svc.tables.load(theirs)).result is None
        arena = await h.svc.arenas.get(arena_id)
        assert (arena.status, arena.playing, arena.games) == (CANCELLED, (), 0)
        await told(cheat, "You removed the bot from the group “Arena club” during your rated")
        await told(rival, f"{cheat.user.first_name} removed the bot from the group “Arena club”")
        for u in others:
            await told(u, "The bot was removed from the group “Arena club”")
        # his rival's hand: the result, the rival first and him the loser
        loser_line = f"1. {rival.user.first_name}"

        def finished() -> bool | None:
            text = hand.text or ""
            shown = loser_line in text and f"{cheat.user.first_name} 🤖 is" in text
            return (shown and not has_game_buttons(hand)) or None

        try:
            await fake.world.wait_for(finished, SAFETY)
        except TimeoutError:
            raise AssertionError(f"HAND: {hand.text!r} {hand.buttons!r}") from None

        payload = member_update(fake.world, group, cheat.user, fake.world.bot, "member", "kicked")
        fake.world.enqueue("my_chat_member", payload)  # delivered again
        await until("the update taken", _queue_empty(fake))
        await asyncio.sleep(0.5)  # its handling, if it did anything
        assert (await h.svc.tables.load(mine)).result == res
        for u in users:
            mine_now = await h.svc.ratings.of(u.id)
            assert mine_now.offences == (1 if u is cheat else 0), u
        assert (await h.svc.ratings.many([cheat.id], "chuvash"))[cheat.id] == after[cheat.id]
        assert len(fake.world.find_messages(cheat.chat, "You removed the bot")) == 1


async def _status_is(h: Harness, tid: str, status: str) -> bool:
    return (await h.svc.tables.load(tid)).table.status == status


def _queue_empty(fake: FakeTelegram) -> Callable[[], Awaitable[bool]]:
    async def empty() -> bool:
        return not fake.world.updates

    return empty


@pytest.mark.slow
async def test_a_group_upgraded_to_a_supergroup_stops_its_arena_cleanly(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        users, group, arena_id, tables = await arena_at_play(fake, h)

        supergroup = users[0].upgrade_group(group)

        await nothing_scored_nobody_charged(h, users, arena_id, tables, "upgraded")
        for u in users:
            await told(u, "The group “Arena club” became a supergroup")
        word = await users[0].wait_message(
            "This group became a supergroup", supergroup, since=0, timeout=SAFETY
        )
        assert "/arena" in (word.text or "")
        # said once, though Telegram sent two service messages about it
        await asyncio.sleep(0.5)
        said = fake.world.find_messages(supergroup, "This group became a supergroup")
        assert len(said) == 1
        # the supergroup may have an arena of its own now
        users[0].send("/arena", supergroup)
        await users[0].wait_message("A new arena", supergroup, timeout=SAFETY)


@pytest.mark.slow
async def test_a_400_with_migrate_to_chat_id_stops_the_old_group_once(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """The service messages missed (the group upgraded while nobody polled):
    the first call to the old id, answered 400 with ``migrate_to_chat_id``,
    is not retried and stops the old group as they would have."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        users, group, arena_id, tables = await arena_at_play(fake, h)
        supergroup = fake.world.upgrade_group(group)  # no update reaches the bot

        users[1].send("/rules", group)  # its answer goes to the old id

        await nothing_scored_nobody_charged(h, users, arena_id, tables, "upgraded")
        await users[0].wait_message(
            "This group became a supergroup", supergroup, since=0, timeout=SAFETY
        )
        for u in users:
            await told(u, "The group “Arena club” became a supergroup")
        refused = sum(n for (_m, code), n in fake.stats.errors.items() if code == 400)
        assert 1 <= refused <= 5, fake.stats.error_texts  # no retries, no loop


async def test_the_set_up_message_shows_an_admins_choices_and_announces_them(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """The set-up message (#27) redrawn with each choice of an admin -- the
    change the set-up use case names, drawn and delivered by the publisher
    (#39: the handler edited it through the delivery itself) -- a member's
    choice refused and not shown; *Announce* makes the arena as chosen, in
    that same message."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        owner, member = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        group = owner.create_group("Set-up club", member)
        owner.add_bot_to(group)
        owner.send("/arena", group)
        setup = await owner.wait_message("A new arena", group, timeout=SAFETY)
        assert "✓ Chuvash Rooster" in setup.button_texts

        refused = member.press("Durak Shchelkovsky", message=setup, chat=group)
        assert "Only the group's admins" in ((await refused.wait_answer(SAFETY)).get("text") or "")
        owner.press("Durak Shchelkovsky", message=setup, chat=group)
        shown = await owner.wait_message("Game: Durak Shchelkovsky", group, timeout=SAFETY)
        assert shown.message_id == setup.message_id  # the same message, redrawn
        assert "✓ Durak Shchelkovsky" in shown.button_texts
        owner.press("3 seats", message=shown, chat=group)
        shown = await owner.wait_message("Players per table: 3", group, timeout=SAFETY)
        assert "Game: Durak Shchelkovsky" in (shown.text or "")  # the first choice kept

        await owner.press("Announce", message=shown, chat=group).wait_answer(SAFETY)
        board = await owner.wait_message("Arena · Durak Shchelkovsky", group, timeout=SAFETY)
        assert board.message_id == setup.message_id  # the set-up became the arena
        arena = await h.svc.arenas.current(group.id)
        assert arena is not None
        assert (arena.variant, arena.seats) == ("shchelkovsky", 3)


@pytest.mark.slow
async def test_a_group_admin_cancels_its_arena_and_a_member_is_refused(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        users, group, arena_id, tables = await arena_at_play(fake, h)
        member, admin = users[1], users[2]
        group.members[admin.id] = "administrator"  # promoted by the creator

        member.send("/arena", group)  # a member: the standings, nothing to cancel
        plain = await member.wait_message("Arena ·", timeout=SAFETY)
        assert plain.chat_id == member.id  # in his private chat (#38: a busy group spared)
        assert not plain.buttons
        users[0].send("/arena", group)  # the creator: the standings with Cancel
        own = await users[0].wait_message(
            lambda m: "Arena ·" in (m.text or "") and bool(m.buttons), group, timeout=SAFETY
        )
        assert own.button_texts == ["✖ Cancel the arena"]

        refused = await member.press("Cancel the arena", message=own, chat=group).wait_answer(
            SAFETY
        )
        assert refused.get("text") == "Only the group's admins can cancel the arena."
        assert (await h.svc.arenas.get(arena_id)).status == RUNNING

        done = await admin.press("Cancel the arena", message=own, chat=group).wait_answer(SAFETY)
        assert "The arena is cancelled" in (done.get("text") or "")
        arena = await h.svc.arenas.get(arena_id)
        assert (arena.status, arena.why) == (CANCELLED, f"admin {admin.id}")
        await fake.world.wait_for(lambda: not own.buttons or None, SAFETY)
        again = users[0].press(data=own_data(arena_id), message=own, chat=group, forged=True)
        assert "over already" in ((await again.wait_answer(SAFETY)).get("text") or "")
        # its games go on as ordinary games (they score nothing in it)
        for tid in tables:
            assert (await h.svc.tables.load(tid)).table.status != TABLE_CANCELLED


def own_data(arena_id: str) -> str:
    return ArenaCb(arena=arena_id, op=ArenaOp.CANCEL).pack()
