"""A whole invite-link game for each variant: /new in a private chat, friends
open the invitation link (or the Share card posted through inline mode), AI
seats, Start, everyone plays to the end; no hidden card ever shown."""

from __future__ import annotations

import random
import re
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, InlineQuery, RateLimits, SimUser
from telegram_bot.buttons.callbacks import LobbyOp
from tests.bot.e2e_kit import (
    SAFETY,
    Harness,
    assert_no_hidden_cards,
    has_game_buttons,
    has_lobby_buttons,
    is_over,
    op,
    play_out,
    record_seeds,
    running,
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


async def invite_lobby(
    h: Harness, variant: str, humans: list[SimUser], ai: int, *, share: bool = False
) -> str:
    owner = humans[0]
    owner.start()
    await owner.wait_message(timeout=SAFETY)
    owner.send(f"/new {variant}")
    lobby = await owner.wait_message(has_lobby_buttons, timeout=SAFETY)
    assert lobby.text is not None
    link = re.search(r"https://t\.me/\S+", lobby.text)
    assert link is not None
    code = link.group(0).rsplit("=", 1)[1]
    for i, friend in enumerate(humans[1:]):
        if share and i == 0:  # the Share button: an invitation card in some chat
            chat = owner.create_group("Friends", friend)
            share_text = next(b["text"] for b in lobby.buttons if "switch_inline_query" in b)
            query = owner.click(share_text, message=lobby, into=chat)
            assert isinstance(query, InlineQuery)  # a switch_inline_query button
            card = await owner.choose_result(query, chat)
            friend.click(next(b["text"] for b in card.buttons if "url" in b), message=card)
        else:
            friend.follow_link(link.group(0))
        await friend.wait_message(has_lobby_buttons, timeout=SAFETY)  # his lobby copy
    for _ in range(ai):
        await owner.press(data=op(code, LobbyOp.ADD_AI), message=lobby).wait_answer(SAFETY)
    table = await h.svc.tables.where(owner.id)
    assert table is not None
    assert len(table.seats) == len(humans) + ai
    assert table.variant == variant
    assert table.chat is None
    record_seeds(h.svc)
    await owner.press(data=op(code, LobbyOp.START), message=lobby).wait_answer(SAFETY)
    for u in humans:
        await u.wait_message(has_game_buttons, timeout=SAFETY)
    await h.wait_hands(table.id, humans)
    return table.id


@pytest.mark.parametrize(
    ("variant", "n_humans", "n_ai"),
    [pytest.param("chuvash", 4, 1, marks=pytest.mark.slow), ("shchelkovsky", 2, 2)],
)
async def test_invite_game_to_the_end(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, variant: str, n_humans: int, n_ai: int
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        langs = ["ru", "uk", "en", "en"]
        humans = [fake.add_user(f"F{i}", language_code=langs[i % 4]) for i in range(n_humans)]
        tid = await invite_lobby(h, variant, humans, n_ai, share=True)
        # every player's lobby copy says the game started; hands speak his language
        hand = await h.hand_message(humans[0], tid)
        assert hand is not None
        assert "Игроки" in (hand.text or "")
        hand = await h.hand_message(humans[1], tid)
        assert hand is not None
        assert "Гравці" in (hand.text or "")
        await play_out(h, tid, humans, rng=random.Random(11))
        for u in humans:
            assert is_over(await h.hand_message(u, tid))
        assert await assert_no_hidden_cards(h, tid, humans) > 10
    assert not fake.stats.errors, fake.stats.error_texts
