"""An arena's play and a busy group's budget (#38, point 15), end to end through
the fake Bot API: an arena's hands are private -- a member who keeps his hands
in the group gets them in private in the arena, and a member who never started
the bot is sent to start it by *Join*'s answer (a deep link whose Start joins
him) -- and, while the arena is on, ``/arena`` and ``/top`` answer in the
member's private chat, or in the group once a minute at low priority, never a
new group message each."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits, SimUser
from tests.bot.e2e_kit import SAFETY, Harness, running, settle


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def announce(h: Harness, owner: SimUser, group: Chat) -> tuple[str, Message]:
    """The owner's arena in ``group`` (the set-up's defaults: 2 a table, now)."""
    owner.send("/arena", group)
    setup = await owner.wait_message("A new arena", group, timeout=SAFETY)
    await owner.press("Announce", message=setup, chat=group).wait_answer(SAFETY)
    board = await owner.wait_message("Arena · Chuvash Rooster", group, timeout=SAFETY)
    current = await h.svc.arenas.current(group.id)
    assert current is not None
    return current.id, board


async def table_of(h: Harness, *users: SimUser) -> str:
    """The table the users sit at together (the arena seats them)."""
    deadline = time.monotonic() + SAFETY
    while True:
        where = [await h.svc.tables.where(u.id) for u in users]
        ids = {t.id if t is not None else None for t in where}
        if len(ids) == 1 and None not in ids:
            [tid] = ids
            assert tid is not None
            return tid
        assert time.monotonic() < deadline, "the arena never seated them together"
        await asyncio.sleep(0.05)


def bot_posts(fake: FakeTelegram, group: Chat) -> int:
    """The bot's messages in the group that every member sees."""
    world = fake.world
    return len([m for m in world.messages(group) if m.from_id == world.bot.id])


async def test_an_arenas_hands_are_private_and_join_sends_a_stranger_to_start(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """Ann started the bot but keeps her hands in the group; Bob never started
    it.  Bob's *Join* is answered with the private chat's link and leaves him
    out; its Start joins him.  Their table's hands are both private messages:
    none waits for the group's 20 messages a minute while its turn timer runs.
    Before: Bob was joined at once, and both hands went to the group."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        group = ann.create_group("Arena", bob)
        ann.add_bot_to(group)
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        await h.ui.set_prefs(ann.id, plays="group")  # her hands: in the group
        arena_id, board = await announce(h, ann, group)
        joined = await ann.press("Join", message=board, chat=group).wait_answer(SAFETY)
        assert "You are in the arena" in (joined.get("text") or "")

        told = await bob.press("Join", message=board, chat=group).wait_answer(SAFETY)
        assert (told.get("url") or "").endswith(f"?start=arena_{arena_id}"), told
        assert "private chat" in (told.get("text") or "")
        arena = await h.svc.arenas.get(arena_id)
        assert arena.player(bob.id) is None  # not in before he started the bot
        bob.follow_link(told["url"])
        await bob.wait_message("You are in the arena", timeout=SAFETY)

        tid = await table_of(h, ann, bob)
        await h.wait_hands(tid, [ann, bob])
        hands = (await h.ui.table(tid)).hands
        assert hands[ann.id] > 0
        assert hands[bob.id] > 0  # private messages, not ephemeral ones in the group
        for u in (ann, bob):
            hand = await h.hand_message(u, tid)
            assert hand is not None
            assert hand.chat_id == u.id
        assert not fake.world.chat(group.id).ephemeral_shown
    assert not fake.stats.errors, fake.stats.error_texts


async def test_hands_kept_in_the_group_come_in_private_in_an_arena_and_a_full_one_says_so(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """Ann and Cid both keep their hands in the group: an arena's table sends
    them in private all the same (before: ephemeral messages in the group,
    queued behind its budget while the turn timer ran).  An arena at its cap
    refuses a third player with words of its own."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        h.svc.arenas.config = replace(h.svc.arenas.config, max_players=2)
        ann, cid, eve = (fake.add_user(n, language_code="en") for n in ("Ann", "Cid", "Eve"))
        group = ann.create_group("Arena", cid, eve)
        ann.add_bot_to(group)
        for u in (ann, cid, eve):
            u.start()
            await u.wait_message(timeout=SAFETY)
            await h.ui.set_prefs(u.id, plays="group")
        _arena_id, board = await announce(h, ann, group)
        for u in (ann, cid):
            joined = await u.press("Join", message=board, chat=group).wait_answer(SAFETY)
            assert "You are in the arena" in (joined.get("text") or "")
        full = await eve.press("Join", message=board, chat=group).wait_answer(SAFETY)
        assert "This arena is full" in (full.get("text") or ""), full
        tid = await table_of(h, ann, cid)
        await h.wait_hands(tid, [ann, cid])
        hands = (await h.ui.table(tid)).hands
        assert (hands[ann.id] > 0, hands[cid.id] > 0) == (True, True)
        assert not fake.world.chat(group.id).ephemeral_shown
    assert not fake.stats.errors, fake.stats.error_texts


async def test_arena_and_top_in_a_busy_group_post_no_message_each(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """While the group's arena is on, ``/arena`` and ``/top`` of a member who
    started the bot go to his private chat; of members who did not, the
    group gets one answer a minute for each command, at low priority (behind
    the arena's play).  Before: a new group message for every command, at
    urgent priority."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        names = ("Ann", "Bea", "Cid", "Dan")
        ann, bea, cid, dan = (fake.add_user(n, language_code="en") for n in names)
        group = ann.create_group("Arena", bea, cid, dan)
        ann.add_bot_to(group)
        for u in (ann, bea):
            u.start()
            await u.wait_message(timeout=SAFETY)
        await announce(h, ann, group)
        await settle(h)
        posts = bot_posts(fake, group)

        # a member, not an admin (an admin's /arena is answered in the group,
        # with *Cancel*: test_e2e_arena_group), the standings in her private chat
        bea.send("/arena", group)
        mine = await bea.wait_message("Arena · Chuvash Rooster", timeout=SAFETY)
        assert mine.chat_id == bea.id
        bea.send("/top", group)
        top = await bea.wait_message(timeout=SAFETY)
        assert top.chat_id == bea.id
        await settle(h)
        assert bot_posts(fake, group) == posts

        cid.send("/arena", group)  # never started the bot: the group, once
        await fake.world.wait_for(lambda: bot_posts(fake, group) == posts + 1 or None, SAFETY)
        dan.send("/arena", group)
        cid.send("/arena", group)
        await settle(h)
        assert bot_posts(fake, group) == posts + 1  # not again within the minute
        dan.send("/top", group)
        await fake.world.wait_for(lambda: bot_posts(fake, group) == posts + 2 or None, SAFETY)
        cid.send("/top", group)
        await settle(h)
        assert bot_posts(fake, group) == posts + 2
    assert not fake.stats.errors, fake.stats.error_texts


async def test_a_members_arena_answer_says_when_it_was_true_and_links_the_live_one(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """#41: a member's ``/arena`` answer kept saying «Nobody has joined yet.»
    after people joined.  In his private chat it now says when its standings
    were true (a ``date_time`` entity of the moment he asked) and links to the
    arena's message, which stays up to date; in the group (a member who never
    started the bot) it is a reply to that message, with no standings to go
    stale."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bea, cid = (fake.add_user(n, language_code="en") for n in ("Ann", "Bea", "Cid"))
        group = ann.create_group("Arena", bea, cid, chat_type="supergroup")
        ann.add_bot_to(group)
        for u in (ann, bea):
            u.start()
            await u.wait_message(timeout=SAFETY)
        _arena_id, board = await announce(h, ann, group)
        before = int(time.time())
        bea.send("/arena", group)  # nobody has joined yet
        mine = await bea.wait_message("Arena · Chuvash Rooster", timeout=SAFETY)
        after = time.time() + 1
        assert mine.chat_id == bea.id
        text = mine.text or ""
        assert "Nobody has joined yet." not in text  # not said as if it were still true
        assert "Nobody had joined by then." in text
        assert "As of" in text
        # «🕒 As of 23:05», under the title: the first date_time entity (a
        # scheduled arena's start, a running one's end come after it)
        times = sorted((e["offset"], e) for e in mine.entities if e["type"] == "date_time")
        as_of = times[0][1]
        before_it = text.encode("utf-16-le")[: 2 * as_of["offset"]].decode("utf-16-le")
        assert before_it.endswith("As of ")  # entity offsets count UTF-16 units
        assert as_of.get("date_time_format") == "t"
        assert before <= as_of["unix_time"] <= after  # when he asked
        live = f"https://t.me/c/{str(group.id).removeprefix('-100')}/{board.message_id}"
        assert [b.get("url") for b in mine.buttons] == [live]

        for u in (ann, bea):
            await u.press("Join", message=board, chat=group).wait_answer(SAFETY)
        # the linked message is the one that follows: it names them now
        await fake.world.wait_for(
            lambda: ("Ann" in (board.text or "") and "Bea" in (board.text or "")) or None, SAFETY
        )
        assert "Nobody has joined yet." not in (board.text or "")

        cid.send("/arena", group)  # never started the bot: a reply in the group
        pointer = await cid.wait_message("standings are in this message", group, timeout=SAFETY)
        assert pointer.reply_to is not None
        assert pointer.reply_to.message_id == board.message_id
        assert "Nobody" not in (pointer.text or "")
    assert not fake.stats.errors, fake.stats.error_texts
