"""An in-group game on both Telegrams (#24, point 5): Telegram does not document
how ephemeral messages count against a group's 20 messages a minute, so the
fake Bot API plays either -- one that counts every ephemeral send and edit in
the group's minute, one that counts it as a message to its receiver alone
(``RateLimits.ephemeral_counted``).  On each, with its flood limits ON and the
product's delivery delays, a 3-seat Chuvash game (two humans and the AI) with
every hand in the group -- one player chose the group (*My cards*, remembered
in his preferences), the other never started the bot -- is played to the end:
the game ends, every player's view and the group's table message show its
result, and the fake answered no 429.  Telegram's time runs
:data:`~tests.bot.e2e_kit.TELEGRAM_SCALE` times as fast on both sides (#37)."""

from __future__ import annotations

import asyncio
import random

import pytest

from engine import public_view
from sandbox.fake_api import Chat, FakeTelegram, Message, RateLimits, SimUser
from sandbox.fake_api.text import parse_text
from telegram_bot.views.board import seat_names
from telegram_bot.views.fair import commitment_lines
from telegram_bot.views.i18n import Translator
from telegram_bot.views.table import render_game_over
from tests.bot.e2e_kit import (
    SAFETY,
    TELEGRAM_SCALE,
    Harness,
    assert_no_hidden_cards,
    game_over,
    is_over,
    play_out,
    record_seeds,
    running,
    settle,
)

# the product's delays (the kit's defaults are faster)
PRODUCT_DELAYS = {"soon_delay": 1.0, "later_delay": 2.0, "table_delay": 4.0}
TELEGRAMS = {"ephemerals_counted": True, "ephemerals_not_counted": False}


async def in_group_lobby(h: Harness, ann: SimUser, newbie: SimUser) -> tuple[str, Chat]:
    """Ann (she started the bot; her hands go to the group, as after *My cards*)
    opens a Chuvash lobby in a new group, Newbie (never started the bot) joins,
    one AI seat, Start: both hands come to the group.  The table's id, the group."""
    ann.start()
    await ann.wait_message(timeout=SAFETY)
    await h.ui.set_prefs(ann.id, plays="group")
    group = ann.create_group("Card night", newbie)
    ann.add_bot_to(group)
    await ann.wait_message("/new", group, timeout=SAFETY)  # the two-line how-to
    ann.send("/new chuvash", group)
    lobby = await ann.wait_message("Invitation link", group, timeout=SAFETY)
    answer = await newbie.press("Join", message=lobby, chat=group).wait_answer(SAFETY)
    assert answer["url"] is None, answer
    await ann.press("Add AI", message=lobby, chat=group).wait_answer(SAFETY)
    table = await h.svc.tables.where(newbie.id)
    assert table is not None
    assert len(table.seats) == 3
    record_seeds(h.svc)
    await ann.press("Start", message=lobby, chat=group).wait_answer(SAFETY)
    await h.wait_hands(table.id, [ann, newbie])
    hands = (await h.ui.table(table.id)).hands
    assert hands[ann.id] < 0, "Ann's hand is not in the group"
    assert hands[newbie.id] < 0, "Newbie's hand is not in the group"
    return table.id, group


async def final_table_text(h: Harness, tid: str) -> str:
    """The text of the game's result, as the group's table message shows it."""
    loaded = await h.svc.tables.load(tid)
    table, state, res = loaded.table, loaded.state, loaded.result
    assert state is not None
    assert state.over
    settled = await h.svc.ratings.settlement(tid, table.game_no)  # #25
    # a draw's last players share a place, as the result says (#38)
    places = res.places if res is not None and res.game == table.game_no else ()
    names = seat_names(table, "en")
    view = public_view(state)
    html, _m = render_game_over(
        view, locale="en", names=names, code=tid, settlement=settled, places=places
    )
    html += "\n\n" + commitment_lines(table, Translator("en"))  # whole in the result (#41)
    return parse_text(html, "HTML")[0]


async def shows_the_result(h: Harness, tid: str, board: Message) -> str:
    """Wait until the group's table message shows the game's result, and return
    it.  The result is read again at each look: the game's settlement (its
    rating lines) may come a moment after its last move, on a loaded machine
    after the first look (a result read once, before it, was never shown)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SAFETY
    while True:
        final = await final_table_text(h, tid)
        if board.text == final:
            return final
        if loop.time() > deadline:
            raise AssertionError(f"the table shows {board.text!r}, the result is {final!r}")
        await asyncio.sleep(0.2)


@pytest.mark.slow
@pytest.mark.parametrize("counted", TELEGRAMS.values(), ids=TELEGRAMS.keys())
async def test_an_in_group_game_ends_without_a_429_on_both_telegrams(
    redis_url: str, redis_prefix: str, counted: bool
) -> None:
    seed = 24
    print(f"seed {seed}, ephemeral writes counted in the group: {counted}")
    limits = RateLimits(ephemeral_counted=counted)
    async with (
        FakeTelegram(limits=limits, time_scale=TELEGRAM_SCALE) as fake,
        running(
            redis_url,
            redis_prefix,
            fake,
            flood_ephemeral_counted=counted,
            telegram_time_scale=TELEGRAM_SCALE,
            **PRODUCT_DELAYS,
        ) as h,
    ):
        ann, newbie = (fake.add_user(n, language_code="en") for n in ("Ann", "Newbie"))
        tid, group = await in_group_lobby(h, ann, newbie)
        humans = [ann, newbie]
        presses = await play_out(h, tid, humans, rng=random.Random(seed))
        assert await game_over(h, tid)
        mid = (await h.ui.table(tid)).table_message
        assert mid is not None
        board = group.messages[mid]
        final = await shows_the_result(h, tid, board)
        assert is_over(board)  # with Rematch
        await settle(h)
        for u in humans:  # what each player sees in the group: the result
            seen = u.messages(group)
            assert [m.text for m in seen if m.message_id == mid] == [final], u.user.first_name
            ephemeral: list[Message] = [m for m in seen if m.ephemeral_message_id]
            assert all("Game over" in (m.text or "") for m in ephemeral), [
                m.text for m in ephemeral
            ]
            hand = await h.hand_message(u, tid)
            assert hand is None or is_over(hand), hand.text if hand else None
        assert not newbie.chat.messages, "the bot wrote to Newbie in private"
        assert await assert_no_hidden_cards(h, tid, humans) > 10
        assert h.bot is not None
        print(f"presses {presses}; fake: {fake.stats.to_json()}")
        print("delivery:", h.bot.app.delivery.stats.as_dict())
    assert fake.stats.retry_after == 0, fake.stats.refusals
    assert not fake.stats.errors, fake.stats.error_texts
