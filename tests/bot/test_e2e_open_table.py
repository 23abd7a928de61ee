"""End to end, "you are already at another table" always comes with a button
that opens that table: under a command's refusal, and -- after a refused press,
whose alert cannot hold a button -- in a private message.  The button sends a
copy of that lobby's message (or the hand message of that game) below."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, RateLimits
from tests.bot.e2e_kit import SAFETY, has_lobby_buttons, running

ELSEWHERE = "You are already at a "
OPEN = "🃏 Open my table"


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def test_seated_elsewhere_opens_that_table(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        group = ann.create_group("Card night", bob)
        ann.add_bot_to(group)
        await ann.wait_message("/new", group, timeout=SAFETY)
        for u in (ann, bob):
            u.start()
            await u.wait_message(timeout=SAFETY)
        ann.send("/new chuvash", group)
        lobby = await ann.wait_message("Invitation link", group, timeout=SAFETY)
        seated = await h.svc.tables.where(ann.id)
        assert seated is not None
        # a command: the refusal carries the button
        ann.send("/play")
        refusal = await ann.wait_message(ELSEWHERE, timeout=SAFETY)
        assert OPEN in refusal.button_texts
        answer = await ann.press(OPEN, message=refusal).wait_answer(SAFETY)
        assert answer["text"] == "Here is your table."
        copy = await ann.wait_message(has_lobby_buttons, timeout=SAFETY)
        assert copy.chat.id == ann.id
        assert copy.message_id in (await h.ui.table(seated.id)).lobby_messages.values()
        # a press: an alert, then a private message with the button
        bob.send("/new")
        await bob.wait_message("Invitation link", timeout=SAFETY)
        own = await h.svc.tables.where(bob.id)
        assert own is not None
        answer = await bob.press("Join", message=lobby, chat=group).wait_answer(SAFETY)
        assert answer["show_alert"]
        assert ELSEWHERE in answer["text"]
        offer = await bob.wait_message(ELSEWHERE, timeout=SAFETY)
        assert offer.chat.id == bob.id
        assert OPEN in offer.button_texts
        # /play keeps his invitation lobby (no AI in it: not a /play cut off)
        bob.send("/play")
        await bob.wait_message(ELSEWHERE, timeout=SAFETY)
        assert (await h.svc.lobbies.lobby(own.id)).status == "open"
        # someone who does not sit there: refused, nothing sent
        answer = await ann.press(data=offer.buttons[0]["callback_data"], forged=True).wait_answer(
            SAFETY
        )
        assert answer["show_alert"]
        assert answer["text"] == "You do not play at this table."
