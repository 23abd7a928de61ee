"""Playing without leaving the group (issue 14): *My cards* on the group's table
message shows the presser's hand as an ephemeral message in the group (only he
sees it), edited in place as the game goes; the private hand is the fallback.
The leak check runs on every delivered message, ephemeral ones included."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits, SimUser
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import (
    SAFETY,
    Harness,
    assert_no_hidden_cards,
    choose,
    has_game_buttons,
    is_over,
    play_out,
    running,
    settle,
)

HERE = "only you see them"


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def table_message(fake: FakeTelegram, group: Chat) -> Message | None:
    return next(
        (
            m
            for m in fake.messages(group)
            if any(b.get("callback_data", "").startswith("mc:") for b in m.buttons)
        ),
        None,
    )


async def my_cards(h: Harness, user: SimUser, group: Chat) -> dict[str, object]:
    """He presses *My cards* on the table message; the answer."""
    board = await h.fake.world.wait_for(lambda: table_message(h.fake, group), SAFETY)
    return await user.press("My cards", message=board, chat=group).wait_answer(SAFETY)


async def in_group(h: Harness, tid: str, user: SimUser) -> Message:
    """His hand, shown in the group as an ephemeral message to him alone."""
    answer = await my_cards(h, user, await _group(h, tid))
    assert HERE in str(answer["text"]), answer
    mid = await _hand_in_group(h, tid, user)  # answered first, then shown (#28)
    assert mid < 0, "the hand is not the ephemeral one"
    hand = await h.hand_message(user, tid)
    assert hand is not None
    assert hand.message_id == 0
    assert hand.receiver_id == user.id
    assert has_game_buttons(hand)
    return hand


async def _group(h: Harness, tid: str) -> Chat:
    table = await h.svc.lobbies.lobby(tid)
    assert table.chat is not None
    return h.fake.world.chat(table.chat)


async def _hand_in_group(h: Harness, tid: str, user: SimUser) -> int:
    """Until his hand is an ephemeral message in the group; minus its id."""
    for _ in range(int(SAFETY / 0.05)):
        mid = (await h.ui.table(tid)).hands.get(user.id, 1)
        if mid < 0:
            return mid
        await asyncio.sleep(0.05)
    return 1


async def _private_hand(h: Harness, tid: str, user: SimUser) -> int:
    """Until his hand is a private message again; its id."""
    for _ in range(int(SAFETY / 0.05)):
        mid = (await h.ui.table(tid)).hands.get(user.id, -1)
        if mid > 0:
            return mid
        await asyncio.sleep(0.05)
    return -1


async def result_once(h: Harness, tid: str, humans: list[SimUser], group: Chat) -> None:
    """The game is over: each player whose hand was in the group sees the result
    once, in the table message -- his ephemeral hand is deleted, not edited into
    a second copy of it (#29)."""
    await settle(h)
    for u in humans:
        assert await h.hand_message(u, tid) is None
        assert not [m for m in u.messages(group) if m.ephemeral_message_id], u
        over = [m for m in u.messages(group) if "Game over" in (m.text or "")]
        assert len(over) == 1, [m.text for m in over]
        assert is_over(over[0])  # with Rematch


def ephemeral_entries(fake: FakeTelegram) -> list[dict[str, object]]:
    return [e for e in fake.world.outbox if e["ephemeral_message_id"] is not None]


async def test_whole_game_from_ephemeral_hands(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(2)]
        watcher = fake.add_user("W", language_code="en")
        tid, group = await group_lobby(h, "chuvash", humans, 1, watchers=[watcher])
        for u in humans:
            await in_group(h, tid, u)
        # a member who does not play gets a toast, and no hand
        answer = await my_cards(h, watcher, group)
        assert answer["text"] == "You do not play at this table.", answer
        await play_out(h, tid, humans, rng=random.Random(14))
        await result_once(h, tid, humans, group)
        for u in humans:
            assert (await h.ui.prefs(u.id)).plays == "group"
        edits = [e for e in ephemeral_entries(fake) if e["kind"] == "edit"]
        assert len(edits) > 10, "the ephemeral hands were not edited in place"
        for e in ephemeral_entries(fake):  # each one shown to its receiver alone
            assert e["visible_to"] == [e["receiver_user_id"]], e
        assert not [m for m in watcher.messages(group) if m.ephemeral_message_id]
        checked = await assert_no_hidden_cards(h, tid, [*humans, watcher])
        assert checked > 20
    assert not fake.stats.errors, fake.stats.error_texts


@pytest.mark.slow
async def test_one_in_private_one_in_the_group(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(2)]
        tid, _group = await group_lobby(h, "shchelkovsky", humans, 0)
        private = humans[0].chat.messages[(await h.ui.table(tid)).hands[humans[0].id]]
        await in_group(h, tid, humans[0])
        # his private hand is no longer edited: it becomes a note, no card button
        await fake.world.wait_for(
            lambda: "in the group now" in (private.text or "") or None, SAFETY
        )
        assert [b for b in private.buttons if "url" not in b] == [], private.buttons
        assert private.buttons[0]["url"].endswith(f"?start={tid}")
        await play_out(h, tid, humans, rng=random.Random(41))
        await settle(h)
        hands = (await h.ui.table(tid)).hands
        # his hand in the group went with the game's end (#29); the private one stays
        assert humans[0].id not in hands
        assert hands[humans[1].id] > 0
        assert is_over(await h.hand_message(humans[1], tid))
        await result_once(h, tid, humans[:1], _group)
        assert await assert_no_hidden_cards(h, tid, humans) > 10
    assert not fake.stats.errors, fake.stats.error_texts


@pytest.mark.slow
async def test_failed_ephemeral_edit_falls_back_to_private(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """The ephemeral hand is gone (deleted behind the bot's back): its next edit
    fails, and his private hand takes over; the game goes on to the end."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(2)]
        tid, group = await group_lobby(h, "chuvash", humans, 1)
        hand = await in_group(h, tid, humans[0])
        rng = random.Random(3)
        for _ in range(100):  # until P1 (in private) can move: his move edits P0's hand
            if choose(await h.hand_message(humans[1], tid) or hand) is not None:
                break
            await play_out(h, tid, humans, rng=rng, stop_after=1)
        private_before = len(humans[0].messages())
        bot = fake.make_bot()
        try:
            assert hand.ephemeral_message_id is not None
            await bot.delete_ephemeral_message(
                chat_id=group.id,
                receiver_user_id=humans[0].id,
                ephemeral_message_id=hand.ephemeral_message_id,
            )
        finally:
            await bot.session.close()
        mid = -1
        for _ in range(20):  # P1 presses (a selection redraws only his own hand)
            await play_out(h, tid, [humans[1]], rng=rng, stop_after=1)
            await settle(h, 2.5)  # P0's update may be deferred (he only watches)
            mid = (await h.ui.table(tid)).hands.get(humans[0].id, -1)
            if mid > 0:
                break
        assert mid > 0, "no fallback to the private hand"
        await play_out(h, tid, humans, rng=rng)
        assert len(humans[0].messages()) > private_before
        assert is_over(await h.hand_message(humans[0], tid))
        assert await assert_no_hidden_cards(h, tid, humans) > 10


@pytest.mark.slow
async def test_offline_player_opens_his_cards_in_private(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """Telegram does not tell the bot that an ephemeral edit missed an offline
    user; he opens his cards in private (*In private*, a deep link) and plays on
    there: the private hand is the durable one."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(2)]
        tid, group = await group_lobby(h, "chuvash", humans, 1)
        hand = await in_group(h, tid, humans[0])
        rng = random.Random(8)
        for _ in range(100):  # until P1 (in private) can move: his move edits P0's hand
            if choose(await h.hand_message(humans[1], tid) or hand) is not None:
                break
            await play_out(h, tid, humans, rng=rng, stop_after=1)
        hand = await h.hand_message(humans[0], tid) or hand
        humans[0].set_online(False)
        shown = hand.version
        missed: list[dict[str, object]] = []
        for _ in range(20):  # P1 presses (a selection redraws only his own hand)
            await play_out(h, tid, [humans[1]], rng=rng, stop_after=1)
            await settle(h, 2.5)  # P0's update may be deferred (he only watches)
            missed = [e for e in ephemeral_entries(fake) if e["visible_to"] == []]
            if missed:
                break
        assert missed, "no ephemeral edit missed the offline player"
        assert hand.version == shown  # his app kept what it had
        humans[0].set_online(True)
        board = table_message(fake, group)
        assert board is not None
        link = next(b["url"] for b in board.buttons if b.get("url"))
        humans[0].follow_link(link)
        assert await _private_hand(h, tid, humans[0]) > 0
        assert (await h.ui.prefs(humans[0].id)).plays == "private"
        # his hand in the group goes: one live hand, not two (#29 item 20)
        await settle(h)
        assert not [m for m in humans[0].messages(group) if m.ephemeral_message_id]
        assert not [m for m in group.ephemeral.values() if m.receiver_id == humans[0].id]
        await play_out(h, tid, humans, rng=rng)
        assert is_over(await h.hand_message(humans[0], tid))
        assert await assert_no_hidden_cards(h, tid, humans) > 10


async def test_cards_brought_back_to_private_mid_game_come_below(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """#41: the group's greeting says where each player's cards come (his
    private chat if he started one with the bot, else the group, to him
    alone); mid-game *Private chat* under the table answers «Your cards are
    below.» -- never «The game has started» -- and his hand is the message
    below that answer: from the group, and again once it is in private."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(2)]
        tid, group = await group_lobby(h, "chuvash", humans, 1)
        greeting = next(m for m in fake.messages(group) if "Hi! I run" in (m.text or ""))
        assert "started a private chat with me, your cards come there" in (greeting.text or "")
        assert "if not, they show up right here, where only you see them" in (greeting.text or "")
        p0 = humans[0]
        await in_group(h, tid, p0)
        board = table_message(fake, group)
        assert board is not None
        link = next(b["url"] for b in board.buttons if b.get("url"))
        for _ in range(2):  # from the group; then again, his hand in private already
            old = (await h.ui.table(tid)).hands[p0.id]
            sent = p0.follow_link(link)
            said = await p0.wait_message("Your cards are below.", timeout=SAFETY)
            assert said.text == "Your cards are below."
            assert said.message_id > sent.message_id

            async def moved(old: int = old) -> int:
                for _ in range(int(SAFETY / 0.05)):
                    mid = (await h.ui.table(tid)).hands.get(p0.id, old)
                    if mid != old and mid > 0:
                        return mid
                    await asyncio.sleep(0.05)
                raise AssertionError("his hand never came below")

            hand = p0.chat.messages[await moved()]
            assert hand.message_id > said.message_id
            assert has_game_buttons(hand)
            await settle(h)
            if old > 0:  # the one above says where his cards went
                assert p0.chat.messages[old].text == "Your cards are in a newer message below."
        assert not [m for m in p0.messages() if "has started" in (m.text or "")]


@pytest.mark.slow
async def test_fallback_for_a_player_the_bot_may_not_write_to(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """His ephemeral hand fails and the bot may not write to him in private (he
    never started it, as his preferences say): a message in the group names him,
    with the deep link that opens his cards in private -- and no card."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(f"P{i}", language_code="en") for i in range(2)]
        tid, group = await group_lobby(h, "chuvash", humans, 1)
        hand = await in_group(h, tid, humans[0])
        rng = random.Random(11)
        for _ in range(100):  # until P1 (in private) can move: his move edits P0's hand
            if choose(await h.hand_message(humans[1], tid) or hand) is not None:
                break
            await play_out(h, tid, humans, rng=rng, stop_after=1)
        hand = await h.hand_message(humans[0], tid) or hand
        await h.ui.set_prefs(humans[0].id, started=False)
        bot = fake.make_bot()
        try:
            assert hand.ephemeral_message_id is not None
            await bot.delete_ephemeral_message(
                chat_id=group.id,
                receiver_user_id=humans[0].id,
                ephemeral_message_id=hand.ephemeral_message_id,
            )
        finally:
            await bot.session.close()
        notice = None
        for _ in range(20):  # P1 presses (a selection redraws only his own hand)
            await play_out(h, tid, [humans[1]], rng=rng, stop_after=1)
            await settle(h, 2.5)
            notice = next(
                (m for m in fake.messages(group) if "P0, I could not" in (m.text or "")), None
            )
            if notice is not None:
                break
        assert notice is not None, "no answer in the group"
        assert humans[0].id not in (await h.ui.table(tid)).hands
        link = notice.buttons[0]["url"]
        assert link.endswith(f"?start={tid}")
        humans[0].follow_link(link)  # he starts the bot: his cards, in private
        assert await _private_hand(h, tid, humans[0]) > 0
        await play_out(h, tid, humans, rng=rng)
        assert is_over(await h.hand_message(humans[0], tid))
        assert await assert_no_hidden_cards(h, tid, humans) > 10


@pytest.mark.slow
async def test_members_who_never_started_the_bot_play_a_whole_game_in_the_group(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """The docs ask of an ephemeral message only that its receiver be a member of
    the group, not that he started the bot (issue 14, point 3): *Join* seats a
    member who never opened the private chat, his hand comes to the group, to
    him alone, and he plays the whole game there -- the bot never writes to him
    in private (it may not)."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, newbie = (fake.add_user(n, language_code="en") for n in ("Ann", "Newbie"))
        group = ann.create_group("Card night", newbie)
        ann.add_bot_to(group)
        await ann.wait_message("/new", group, timeout=SAFETY)
        ann.send("/new chuvash", group)
        lobby = await ann.wait_message("Invitation link", group, timeout=SAFETY)
        answer = await newbie.press("Join", message=lobby, chat=group).wait_answer(SAFETY)
        assert answer["url"] is None, answer
        assert "I will show your cards here" in str(answer["text"]), answer
        await ann.press("Add AI", message=lobby, chat=group).wait_answer(SAFETY)
        table = await h.svc.tables.where(newbie.id)
        assert table is not None
        assert len(table.seats) == 3
        tid, humans = table.id, [ann, newbie]
        await ann.press("Start", message=lobby, chat=group).wait_answer(SAFETY)
        await h.wait_hands(tid, humans)  # at once, without pressing My cards
        # the started lobby says where the cards are: under the table message, whose
        # buttons are the group's only row of them (#29)
        await fake.world.wait_for(
            lambda: "the table is below" in (lobby.text or "") or None, SAFETY
        )
        assert lobby.buttons == []
        board = await fake.world.wait_for(lambda: table_message(fake, group), SAFETY)
        assert any(b.get("url", "").endswith(f"?start={tid}") for b in board.buttons)
        hands = (await h.ui.table(tid)).hands
        for u in humans:
            assert hands[u.id] < 0, "his hand is not the ephemeral one"
            hand = await h.hand_message(u, tid)
            assert hand is not None
            assert hand.receiver_id == u.id, hand
        await play_out(h, tid, humans, rng=random.Random(3))
        await result_once(h, tid, humans, group)
        for u in humans:
            assert not u.user.started  # he never opened the private chat
            assert not u.chat.messages, "the bot wrote to him in private"
        assert await assert_no_hidden_cards(h, tid, humans) > 10
    assert not fake.stats.errors, fake.stats.error_texts


async def test_a_private_block_leaves_a_group_hand_its_seat(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """Bob plays with his hand in the group, then blocks the bot's private chat:
    his cards still reach him in the group, so his seat stays his and so does
    his hand there (review2: the AI took his seat at once, ranked last)."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        _ann, bob = humans = [fake.add_user(n, language_code="en") for n in ("Ann", "Bob")]
        tid, _group = await group_lobby(h, "chuvash", humans, 0)
        await in_group(h, tid, bob)
        bob.block()
        for _ in range(int(SAFETY / 0.02)):  # the block's update handled
            if not (await h.ui.prefs(bob.id)).started:
                break
            await asyncio.sleep(0.02)
        assert not (await h.ui.prefs(bob.id)).started
        await settle(h)
        table, _s, _v = await h.svc.tables.get(tid)
        seat = table.seat_of(bob.id)
        assert seat is not None
        assert not table.seats[seat].ai_controlled
        held = (await h.ui.table(tid)).hands.get(bob.id)
        assert held is not None
        assert held < 0  # still his ephemeral hand in the group
