"""End to end (#41, the points found after the third pass): what the messages
of a finished group game say once it is over and once its rematch started.

- The lobby message above the table no longer says «The game has started»
  once the table below shows the result: it points to the result.
- A rematch dealt: the old result -- the group's table message and each
  player's private hand -- no longer shows the offer (who agreed, whom it
  waits for, when it ends) nor *Rematch*; the result stays, with *Replay* and
  *Check the deal* of that game, and a line says the new game is below."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, Message, RateLimits
from tables import PLAYING
from telegram_bot.buttons.callbacks import ReplayCb, parse_lobby
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import SAFETY, has_game_buttons, play_out, running, settle


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def rematch_data(message: Message) -> str | None:
    for b in message.buttons:
        cb = parse_lobby(b.get("callback_data"))
        if cb is not None and cb.op.value == "re":
            return str(b["callback_data"])
    return None


def replay_games(message: Message) -> set[int]:
    games = set()
    for b in message.buttons:
        data = str(b.get("callback_data", ""))
        if data.startswith("rp:"):
            games.add(ReplayCb.unpack(data).game)
    return games


OFFER = ("agreed:", "Waiting for", "the offer ends")


async def test_the_lobby_line_and_the_rematch_offer_give_way_to_what_is_true_now(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        tid, group = await group_lobby(h, "chuvash", [ann, bob], 0)
        lobby_msg = await fake.world.wait_for(
            lambda: next(
                (m for m in fake.messages(group) if "The game has started" in (m.text or "")),
                None,
            ),
            SAFETY,
        )
        table_msg = await fake.world.wait_for(
            lambda: next((m for m in fake.messages(group) if "Players" in (m.text or "")), None),
            SAFETY,
        )
        hands = {u.id: await h.hand_message(u, tid) for u in (ann, bob)}
        for u in (ann, bob):
            mine = hands[u.id]
            assert mine is not None
            assert mine.chat.id == u.id  # his hand in his private chat
        await play_out(h, tid, [ann, bob], rng=random.Random(5))
        await fake.world.wait_for(lambda: "Game over" in (table_msg.text or "") or None, SAFETY)
        # the random deal may end in a loser or in a draw: whichever it was stays
        result_line = next(
            line
            for line in (table_msg.text or "").splitlines()
            if "is the Chuvash Rooster" in line
            or "there is no Chuvash Rooster" in line
            or "The game is a draw" in line
        )
        # d. the line announcing the start gives way to the result below
        await fake.world.wait_for(
            lambda: "The game is over: the result is below." in (lobby_msg.text or "") or None,
            SAFETY,
            "the lobby message still announces the start above the result",
        )
        assert "The game has started" not in (lobby_msg.text or "")
        # b. Ann offers the rematch: the results show the offer
        data = rematch_data(table_msg)
        assert data is not None
        await ann.press(data=data, message=table_msg, chat=group).wait_answer(SAFETY)
        await fake.world.wait_for(
            lambda: "Waiting for Bob" in (table_msg.text or "") or None, SAFETY
        )
        bob_hand = hands[bob.id]
        assert bob_hand is not None
        await fake.world.wait_for(
            lambda: "Waiting for Bob" in (bob_hand.text or "") or None, SAFETY
        )
        # Bob agrees on his private result: the rematch is dealt at once
        await bob.press(data=rematch_data(bob_hand), message=bob_hand).wait_answer(SAFETY)
        await ann.wait_message(has_game_buttons, timeout=SAFETY)
        table, _s, _v = await h.svc.tables.get(tid)
        assert (table.status, table.game_no) == (PLAYING, 2)
        await settle(h)
        old = [table_msg, *(m for m in hands.values() if m is not None)]
        for m in old:
            text = m.text or ""
            assert "The rematch has started: the new game is below." in text, text
            assert "Game over" in text  # the result stays, its ratings too
            assert result_line in text, (result_line, text)
            assert "Ratings" in text
            assert not any(part in text for part in OFFER), text
            assert rematch_data(m) is None, m.button_texts  # nothing offered any more
            assert replay_games(m) == {1}, m.button_texts  # game 1's replay and deal check
        # the lobby message announces the new game's start again
        assert "The game has started" in (lobby_msg.text or "")
    assert not fake.stats.errors, fake.stats.error_texts
