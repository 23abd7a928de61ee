"""A 403 of a private chat, told apart by Telegram's answer (#38), end to end
through the fake Bot API (which answers as Telegram does) and a real Redis:

* "Forbidden: bot can't initiate conversation with a user" -- a member who never
  pressed Start plays with his hand in the group: the bot's delivery trouble,
  never his act.  The bot does not write to him in private (it remembers it,
  until he sends it something there), his seat and his hand in the group stay
  his, no offence.  The three private sends that drew it -- the nudge of a
  timeout while his hand is not in the group yet, the offer of his table after
  a refused *Join*, the arena's word that it withdrew him -- go to the group or
  nowhere.
* "Forbidden: bot was blocked by the user", "Forbidden: user is deactivated" --
  his own act: the AI plays his seat; the game's result is his, with no offence
  and no cooldown (docs/RATINGS.md)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits, SimUser
from tables import OVER
from tables.ratings import Settlement
from telegram_bot.state.chat_state import ANY_HAND
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import SAFETY, Harness, play_out, running
from tests.bot.test_e2e_walk_away import WARNING, waiting_for

ELSEWHERE = "leave it first (/leave)"
CANT_INITIATE = "Forbidden: bot can't initiate conversation with a user"


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def handled(h: Harness) -> None:
    """Until the updates in hand are handled -- what a press changed is shown
    (and any 403 it drew reported to the hook) within its update."""
    assert h.bot is not None
    deadline = time.monotonic() + SAFETY
    while h.bot.app.updates.tasks:
        assert time.monotonic() < deadline, "an update is never handled"
        await asyncio.sleep(0.02)


async def group_only_game(h: Harness, variant: str, humans: list[SimUser], group: Chat) -> str:
    """A started rated game of ``humans`` (every seat human) in ``group``, none of
    whom ever pressed Start: their hands are in the group, to each alone."""
    owner = humans[0]
    owner.send(f"/new {variant}", group)
    lobby = await owner.wait_message("Invitation link", group, timeout=SAFETY)
    for u in humans[1:]:
        answer = await u.press("Join", message=lobby, chat=group).wait_answer(SAFETY)
        assert "I will show your cards here" in str(answer["text"]), answer
    await owner.press("Start", message=lobby, chat=group).wait_answer(SAFETY)
    table = await h.svc.tables.where(owner.id)
    assert table is not None
    await h.wait_hands(table.id, humans)
    hands = (await h.ui.table(table.id)).hands
    assert all(hands[u.id] < 0 for u in humans), "a hand is not in the group"
    assert (await h.svc.tables.get(table.id))[0].rated
    return table.id


def group_of(fake: FakeTelegram, owner: SimUser, *members: SimUser) -> Chat:
    group = owner.create_group("Card night", *members)
    owner.add_bot_to(group)
    return group


async def still_his(h: Harness, tid: str, user: SimUser) -> None:
    """He sits there, the AI does not play for him, his hand is in the group."""
    table, _s, _v = await h.svc.tables.get(tid)
    seat = table.seat_of(user.id)
    assert seat is not None
    assert not table.seats[seat].ai_controlled, "his seat was handed to the AI"
    assert not table.seats[seat].left
    events = await h.svc.admin.event_page(tid, 0, 100_000)
    assert not [e for e in events if e.kind == "takeover"], events


async def no_offence(h: Harness, tid: str, users: list[SimUser]) -> None:
    """The game is played out and settled, rated: nobody has an offence, a
    cooldown or a mark against his reliability."""
    await play_out(h, tid, users, rng=random.Random(38))
    table = (await h.svc.tables.get(tid))[0]
    assert table.status == OVER
    deadline = time.monotonic() + SAFETY
    while (settled := await h.svc.ratings.settlement(tid, table.game_no)) is None:
        assert time.monotonic() < deadline, "the game was never settled"
        await asyncio.sleep(0.05)
    assert settled.counted
    for u in users:
        mine = await h.svc.ratings.of(u.id)
        assert (mine.offences, mine.cooldown_until, mine.reliability) == (0, None, 1.0), mine


# ------------------------------------------------------- never pressed Start
async def test_a_refused_join_of_a_group_only_player_leaves_him_his_seat(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """He plays in one group with his hand there and presses *Join* on another
    group's lobby: refused.  The offer of his table is not sent to him in private
    (the bot may not write to him there: the alert told him) -- and should a
    private send go out all the same (the bot's memory of him is wrong), its 403
    "can't initiate" leaves him his seat, is remembered until his /start, and
    brings no offence."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, newbie, cat = (fake.add_user(n, language_code="en") for n in ("Ann", "Newbie", "Cat"))
        group = group_of(fake, ann, newbie)
        other = group_of(fake, cat, newbie)
        tid = await group_only_game(h, "chuvash", [ann, newbie], group)
        cat.send("/new chuvash", other)
        lobby = await cat.wait_message("Invitation link", other, timeout=SAFETY)

        answer = await newbie.press("Join", message=lobby, chat=other).wait_answer(SAFETY)
        assert ELSEWHERE in str(answer["text"]), answer
        await handled(h)
        await still_his(h, tid, newbie)
        assert not newbie.chat.messages, "the bot wrote to him in private"
        assert not fake.stats.errors, fake.stats.error_texts

        # the bot believes it may write to him (wrong): Telegram refuses
        await h.ui.set_prefs(newbie.id, started=True)
        answer = await newbie.press("Join", message=lobby, chat=other).wait_answer(SAFETY)
        assert ELSEWHERE in str(answer["text"]), answer
        await handled(h)
        assert fake.stats.error_texts == ["sendMessage 403: " + CANT_INITIATE]
        await still_his(h, tid, newbie)
        assert (await h.ui.table(tid)).hands[newbie.id] < 0, "his hand in the group was dropped"
        assert not (await h.ui.prefs(newbie.id)).started  # remembered
        answer = await newbie.press("Join", message=lobby, chat=other).wait_answer(SAFETY)
        await handled(h)
        assert len(fake.stats.error_texts) == 1, "the bot wrote to him in private again"

        await no_offence(h, tid, [ann, newbie])
        newbie.start()  # he opens the private chat: the bot may write to him there
        await newbie.wait_message(timeout=SAFETY)
        assert (await h.ui.prefs(newbie.id)).started


async def test_a_group_only_player_whose_hand_is_not_there_yet_is_nudged_in_the_group(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """His time runs out while his hand in the group has not been recorded yet
    (it waits for the group's flood budget, or it failed): the nudge goes to the
    group, to him alone -- not to a private chat he never opened, whose 403
    would have handed his seat to the AI."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, default_timer=30) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        group = group_of(fake, ann, bob)
        tid = await group_only_game(h, "shchelkovsky", [ann, bob], group)
        late, _other = await waiting_for(h, tid, [ann, bob])
        placed, _old = await h.ui.swap_hand(tid, late.id, None, ANY_HAND)  # not there yet
        assert placed
        h.clock.advance(31)

        def nudged() -> Message | bool | None:
            for m in late.messages(group):
                if m.ephemeral_message_id and WARNING in (m.text or ""):
                    return m
            return bool(fake.stats.errors) or None  # the private send's 403

        found = await fake.world.wait_for(nudged, SAFETY, "the nudge")
        assert not fake.stats.errors, fake.stats.error_texts
        assert isinstance(found, Message)
        assert found.receiver_id == late.id
        table, _s, _v = await h.svc.tables.get(tid)
        seat = table.seat_of(late.id)
        assert seat is not None
        assert table.seats[seat].timeouts == 1
        await still_his(h, tid, late)
        assert not late.chat.messages


async def test_an_arena_withdraws_a_group_only_player_and_tells_him_in_its_group(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """He plays a game in one group with his hand there and joins an arena in
    another: it withdraws him (he is busy) and tells him so in its group, to him
    alone -- his game goes on as his."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob, dan = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob", "Dan"))
        group = group_of(fake, ann, bob)
        arena_group = group_of(fake, dan, bob)
        tid = await group_only_game(h, "chuvash", [ann, bob], group)
        dan.start()  # an arena's players start the bot (#38: its hands are private)
        await dan.wait_message(timeout=SAFETY)
        dan.send("/arena", arena_group)
        setup = await dan.wait_message("A new arena", arena_group, timeout=SAFETY)
        await dan.press("Announce", message=setup, chat=arena_group).wait_answer(SAFETY)
        board = await dan.wait_message("Arena ·", arena_group, timeout=SAFETY)
        await dan.press("Join", message=board, chat=arena_group).wait_answer(SAFETY)
        # an arena's Join now sends one who never started the bot to Start first
        # (#38, test_e2e_arena_private); he joined before that rule (or through
        # the service): the arena must still never write to him in private
        pending = await h.svc.arenas.current(arena_group.id)
        assert pending is not None
        await h.svc.arenas.join(pending.id, bob.id, "Bob", 1000)

        def told() -> Message | bool | None:
            for m in bob.messages(arena_group):
                if m.ephemeral_message_id and "you were playing at another" in (m.text or ""):
                    return m
            return bool(fake.stats.errors) or None  # the private send's 403

        found = await fake.world.wait_for(told, SAFETY, "the word that he left the arena")
        assert not fake.stats.errors, fake.stats.error_texts
        assert isinstance(found, Message)
        assert found.receiver_id == bob.id
        current = await h.svc.arenas.current(arena_group.id)
        assert current is not None
        me = current.player(bob.id)
        assert me is not None
        assert me.withdrawn
        await still_his(h, tid, bob)
        assert not bob.chat.messages
        await no_offence(h, tid, [ann, bob])


# ------------------------------------------------------- his own act
async def test_a_block_or_a_deleted_account_hands_the_seat_to_the_ai_without_offence(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """Mid-game of a rated game Cy deletes his account and Bob blocks the bot (the
    bot is told, as after a 403 "bot was blocked by the user"); the bot learns
    of Cy from the 403 of its next edit of his private hand ("user is
    deactivated"): the AI plays their seats to the end.  The result is theirs; no offence, no cooldown, no reliability
    mark -- walking away is leaving, not a block (docs/RATINGS.md)."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob, cy = humans = [fake.add_user(n, language_code="en") for n in ("Ann", "Bob", "Cy")]
        tid, _group = await group_lobby(h, "chuvash", humans, 0)
        table, _s, _v = await h.svc.tables.get(tid)
        assert table.rated
        cy.deactivate()  # the bot is not told: it learns from a 403
        bob.block()  # the bot is told (my_chat_member): the AI plays his seat at once --
        # which every hand shows: the edit of Cy's draws "user is deactivated"
        seats = [s for u in (bob, cy) if (s := table.seat_of(u.id)) is not None]
        assert len(seats) == 2
        deadline = time.monotonic() + SAFETY
        while (
            not (await h.svc.tables.get(tid))[0].seats[seats[0]].ai_controlled
            or not (await h.svc.tables.get(tid))[0].seats[seats[1]].ai_controlled
        ):
            assert time.monotonic() < deadline, "their seats never went to the AI"
            await asyncio.sleep(0.02)
        events = await h.svc.admin.event_page(tid, 0, 100_000)
        reasons = sorted(e.text for e in events if e.kind == "takeover")
        assert reasons == ["admin:bot:forbidden:blocked", "admin:bot:forbidden:deactivated"]
        assert set(fake.stats.error_texts) == {
            "editMessageText 403: Forbidden: user is deactivated"
        }
        for u in (bob, cy):
            assert not (await h.ui.prefs(u.id)).started
        await no_offence(h, tid, [ann])
        for u in (bob, cy):
            mine = await h.svc.ratings.of(u.id)
            assert (mine.offences, mine.cooldown_until, mine.reliability) == (0, None, 1.0), mine
            assert u.id in {c.user for c in (await _settled(h, tid)).changes}


async def _settled(h: Harness, tid: str) -> Settlement:
    table = (await h.svc.tables.get(tid))[0]
    settled = await h.svc.ratings.settlement(tid, table.game_no)
    assert settled is not None
    return settled
