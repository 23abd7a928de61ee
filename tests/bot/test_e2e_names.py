"""Issue #17 end to end: a name Telegram would parse as HTML («Carl <3») in a
group game, the lobby message closed once the game starts, old lobby buttons of
a running game refused; and a press answered before the bot's own rate-limited
edit of the group (flood limits on, in the fake and in the bot)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from tables import PLAYING
from telegram_bot.buttons.callbacks import LobbyOp
from telegram_bot.delivery.flood.limiter import FloodLimiter
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import SAFETY, has_lobby_buttons, op, running


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def test_carl_joins_and_the_lobby_message_closes_at_the_start(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann = fake.add_user("Ann", language_code="en")
        carl = fake.add_user("Carl <3", language_code="en")
        tid, group = await group_lobby(h, "chuvash", [ann, carl], 1)
        lobby = group.messages[(await h.ui.table(tid)).lobby_messages[group.id]]
        await fake.world.wait_for(lambda: not has_lobby_buttons(lobby) or None, SAFETY)
        assert lobby.text is not None
        assert "Carl <3" in lobby.text
        assert "The game has started, the table is below" in lobby.text
        # one row of My cards / Private chat in the group: the table message's (#29)
        assert lobby.buttons == []
        assert not [k for k in fake.stats.errors if k[1] == 400], fake.stats.errors

        # the buttons of the lobby message as an old client still shows them
        shown = lobby.text
        for who, what in [(carl, LobbyOp.JOIN), (ann, LobbyOp.SETTINGS)]:
            query = who.press(data=op(tid, what), message=lobby, forged=True)
            answer = await query.wait_answer(SAFETY)
            assert answer["show_alert"], (what, answer)
            assert "game has started" in (answer["text"] or ""), (what, answer)
        # a second tap of Start: the game he asked for is on -- nothing to say (#29)
        query = ann.press(data=op(tid, LobbyOp.START), message=lobby, forged=True)
        answer = await query.wait_answer(SAFETY)
        assert not answer["show_alert"], answer
        assert not answer["text"], answer
        assert lobby.text == shown
        assert not has_lobby_buttons(lobby)
        table = await h.svc.lobbies.lobby(tid)
        assert table.status == PLAYING
        assert len(table.seats) == 3


async def test_a_press_is_answered_before_the_groups_rate_limited_edit(
    redis_url: str, redis_prefix: str
) -> None:
    async with (
        FakeTelegram(limits=RateLimits(), callback_answer_window=2.0) as fake,
        running(redis_url, redis_prefix, fake) as h,
    ):
        ann = fake.add_user("Ann", language_code="en")
        group = ann.create_group("Card night")
        ann.add_bot_to(group)
        await ann.wait_message("/new", group, timeout=SAFETY)
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        ann.send("/new", group)
        lobby = await ann.wait_message("Invitation link", group, timeout=SAFETY)
        await ann.press("Settings", message=lobby).wait_answer(SAFETY)
        await fake.world.wait_for(lambda: "players at most" in (lobby.text or "") or None, SAFETY)

        # the group's minute is spent: the bot's next edit there waits seconds
        limiter = FloodLimiter(h.svc.kv)
        await limiter.hold(group.id, 3.0)  # its windows are full for 3 s
        seen = fake.world.version
        back = ann.press("Back", message=lobby)
        await back.wait_answer(SAFETY)
        await fake.world.wait_for(lambda: "Invitation link" in (lobby.text or "") or None, SAFETY)
        events = fake.world.events_since(seen)
        answered = next(
            e.seq
            for e in events
            if e.kind == "callback_answered" and (e.detail or {}).get("query_id") == back.id
        )
        edited = next(
            e.seq for e in events if e.kind == "message_edited" and e.message_id == lobby.message_id
        )
        assert answered < edited
        assert fake.stats.late_answers == 0
        assert not fake.stats.errors.get(("answerCallbackQuery", 400))
