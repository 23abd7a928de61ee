"""End to end, who may do what in a group lobby: a double tap on Join seats a
player once; only the lobby's creator starts, removes AI players or opens the
settings panel (which replaces the shared lobby message for everyone) -- anyone
else gets an alert naming the reason, and nothing changes."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits, SimUser
from telegram_bot.buttons.callbacks import LobbyCb, LobbyOp
from tests.bot.e2e_kit import SAFETY, Harness, op, running


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def lobby_in_group(h: Harness, users: list[SimUser]) -> tuple[Message, Chat]:
    owner = users[0]
    group = owner.create_group("Card night", *users[1:])
    owner.add_bot_to(group)
    await owner.wait_message("/new", group, timeout=SAFETY)
    for u in users:
        u.start()
        await u.wait_message(timeout=SAFETY)
    owner.send("/new chuvash", group)
    lobby = await owner.wait_message("Invitation link", group, timeout=SAFETY)
    return lobby, group


async def test_a_double_tap_on_join_seats_once(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        owner, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        lobby, group = await lobby_in_group(h, [owner, bob])
        for _round in range(5):  # the callback delivered twice, handled concurrently
            taps = [bob.press("Join", message=lobby, chat=group) for _ in range(2)]
            await asyncio.gather(*(t.wait_answer(SAFETY) for t in taps))
            table = await h.svc.tables.where(bob.id)
            assert table is not None
            assert [s.user for s in table.seats] == [owner.id, bob.id]
            await bob.press("Leave", message=lobby, chat=group).wait_answer(SAFETY)
    assert not fake.stats.errors, fake.stats.error_texts


async def test_only_the_creator_runs_the_lobby(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        owner, bob, eve = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob", "Eve"))
        lobby, group = await lobby_in_group(h, [owner, bob, eve])
        await bob.press("Join", message=lobby, chat=group).wait_answer(SAFETY)
        await owner.press("Add AI", message=lobby, chat=group).wait_answer(SAFETY)
        await fake.world.wait_for(lambda: "AI 1" in (lobby.text or "") or None, SAFETY)
        seated = await h.svc.tables.where(owner.id)
        assert seated is not None
        tid = seated.id
        table, _, version = await h.svc.tables.get(tid)
        text, edits = lobby.text, lobby.edits
        refused = [
            (bob, "Start", "Only the lobby's creator can start the game."),
            (bob, "Remove AI", "Only the lobby's creator can remove AI players."),
            (bob, "Settings", "Only the lobby's creator can change the settings."),
            (eve, "Settings", "Only the lobby's creator can change the settings."),  # not seated
        ]
        for user, button, alert in refused:
            answer = await user.press(button, message=lobby, chat=group).wait_answer(SAFETY)
            assert answer["show_alert"], (button, answer)
            assert answer["text"] == alert
        await asyncio.sleep(0.3)  # what a refused press might still send has been sent
        assert (await h.svc.tables.get(tid))[::2] == (table, version)
        assert (lobby.text, lobby.edits) == (text, edits)
        # the creator may: the settings panel replaces the lobby message
        answer = await owner.press("Settings", message=lobby, chat=group).wait_answer(SAFETY)
        assert not answer.get("show_alert"), answer
        await fake.world.wait_for(lambda: lobby.edits > edits or None, SAFETY)
    assert not fake.stats.errors, fake.stats.error_texts


async def test_lobby_settings_pressed_on_another_message_change_nothing(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """#28: a lobby owner's settings buttons (his own lobby's callback data) pressed
    on another lobby's message rewrote that message into his lobby; now an alert,
    and neither message nor setting changes."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob, eve = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob", "Eve"))
        mine, _group = await lobby_in_group(h, [ann, eve])
        theirs, other_group = await lobby_in_group(h, [bob, ann])
        table = await h.svc.tables.where(ann.id)
        assert table is not None
        before, timer = theirs.text, table.timer
        for what in (LobbyOp.SETTINGS, LobbyOp.BACK):
            answer = await ann.press(
                data=op(table.id, what), message=theirs, chat=other_group, forged=True
            ).wait_answer(SAFETY)
            assert answer["show_alert"], answer
            assert "not valid" in (answer.get("text") or ""), answer
        data = LobbyCb(code=table.id, op=LobbyOp.SET, arg="timer=30").pack()
        answer = await ann.press(
            data=data, message=theirs, chat=other_group, forged=True
        ).wait_answer(SAFETY)
        assert answer["show_alert"], answer
        assert theirs.text == before
        # the message goes on showing Bob's lobby: his next change is the next edit
        await bob.press("Add AI", message=theirs, chat=other_group).wait_answer(SAFETY)
        await fake.world.wait_for(lambda: "AI 1" in (theirs.text or "") or None, SAFETY)
        assert "gathered by Bob" in (theirs.text or "")
        assert table.id not in (theirs.text or "")  # nothing of Ann's lobby
        after = await h.svc.tables.where(ann.id)
        assert after is not None
        assert after.timer == timer
        # on his own lobby's message the panel still opens
        answer = await ann.press("⚙ Settings", message=mine).wait_answer(SAFETY)
        assert not answer.get("show_alert"), answer
    assert not fake.stats.errors, fake.stats.error_texts


async def test_a_join_while_the_lobby_message_is_on_its_way_shows(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """#28: the lobby message's id is known only once sendMessage answers; a Join
    pressed on it before that (users see it at once) re-rendered the lobby without
    it, and nothing rendered it later: the message never showed the player."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False):
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        group = ann.create_group("Card night", bob)
        ann.add_bot_to(group)
        await ann.wait_message("/new", group, timeout=SAFETY)
        for u in (ann, bob):
            u.start()
            await u.wait_message(timeout=SAFETY)
        fake.reply_delays["sendMessage"] = 0.5  # the lobby's id reaches the bot late
        ann.send("/new chuvash", group)
        lobby = await ann.wait_message("Invitation link", group, timeout=SAFETY)
        answer = await bob.press("Join", message=lobby, chat=group).wait_answer(SAFETY)
        assert not answer["show_alert"], answer
        fake.reply_delays.clear()
        await fake.world.wait_for(lambda: "Bob" in (lobby.text or "") or None, SAFETY)
    assert not fake.stats.errors, fake.stats.error_texts


async def test_a_rated_lobby_shows_its_turn_timer_and_no_timer_is_casual_only(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """#38: the deployment's default is no timer (the kit's), yet a rated lobby
    shows -- and its game keeps -- the rated turn timer; its settings offer no
    "no timer" and say why; a casual lobby may play without one, and turning it
    rated again brings the timer back.  The game then waits with a deadline."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        lobby, group = await lobby_in_group(h, [ann, bob])
        assert "timer: 60 s" in (lobby.text or ""), lobby.text
        assert "Rated game" in (lobby.text or "")

        async def press(button: str, shown: str) -> None:
            answer = await ann.press(button, message=lobby, chat=group).wait_answer(SAFETY)
            assert not answer.get("show_alert"), answer
            await fake.world.wait_for(lambda: shown in (lobby.text or "") or None, SAFETY)

        await press("Settings", "always has a turn timer")
        assert not any("no timer" in t for t in lobby.button_texts), lobby.button_texts
        await press("casual", "ratings do not change")
        assert "always has a turn timer" not in (lobby.text or "")
        await press("no timer", "no timer · players")
        casual = await h.svc.tables.where(ann.id)
        assert casual is not None
        assert (casual.rated, casual.timer) == (False, 0)
        await press("rated", "timer: 60 s")
        assert "always has a turn timer" in (lobby.text or "")
        await press("Back", "Invitation link")
        assert "timer: 60 s" in (lobby.text or "")
        await bob.press("Join", message=lobby, chat=group).wait_answer(SAFETY)
        await ann.press("Start", message=lobby, chat=group).wait_answer(SAFETY)
        table = await h.svc.tables.where(ann.id)
        assert table is not None
        loaded = await h.svc.tables.load(table.id)
        assert (loaded.table.rated_now, loaded.table.timer) == (True, 60)
        assert loaded.deadline is not None
    assert not fake.stats.errors, fake.stats.error_texts


async def test_leave_on_the_lobby_message_mid_game_changes_nothing(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """Bob taps *Leave* on the lobby message he still sees just after Ann pressed
    Start (its edit still queued behind the group's minute): he is told the
    lobby is closed, and stays in the game -- no AI on his seat, no offence
    (review2: it walked him out of the rated game, ranked last)."""
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        lobby, group = await lobby_in_group(h, [ann, bob])
        await bob.press("Join", message=lobby, chat=group).wait_answer(SAFETY)
        table = await h.svc.tables.where(ann.id)
        assert table is not None
        assert table.rated
        await ann.press("Start", message=lobby, chat=group).wait_answer(SAFETY)
        await h.wait_hands(table.id, [ann, bob])
        data = LobbyCb(code=table.id, op=LobbyOp.LEAVE).pack()
        answer = await bob.press(data=data, message=lobby, chat=group, forged=True).wait_answer(
            SAFETY
        )
        assert "closed" in str(answer.get("text")), answer
        now = await h.svc.lobbies.lobby(table.id)
        seat = next(s for s in now.seats if s.user == bob.id)
        assert not seat.left
        assert not seat.ai_controlled
        assert (await h.svc.ratings.of(bob.id)).offences == 0
        assert await h.svc.tables.where(bob.id) is not None
