"""End to end (#38, points 1 and 17): a rematch seats only those who said yes.
One player's *Rematch* in a group offers it -- the group's result shows who
agreed, whom it waits for and until when -- and a player who walked away is
not dealt in: at the offer's end the game starts with those who agreed, an AI
in his seat, and nothing of it reaches him (no hand, no timeout, no stats)."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest

from sandbox.fake_api import FakeTelegram, Message, RateLimits
from tables import OVER, PLAYING
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import (
    SAFETY,
    assert_no_hidden_cards,
    has_game_buttons,
    play_out,
    running,
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def rematch_data(message: Message) -> str:
    datas = [str(b.get("callback_data", "")) for b in message.buttons]
    return next(d for d in datas if d.startswith("l:") and ":re" in d)


async def test_a_walked_away_player_is_not_dealt_into_the_rematch(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (
            fake.add_user("Ann", language_code="en"),
            fake.add_user("Bob", language_code="en"),
        )
        cy = fake.add_user("Cy", language_code="en")  # a member of the group, not a player
        tid, group = await group_lobby(h, "chuvash", [ann, bob], 0, watchers=[cy])
        table_msg = await fake.world.wait_for(
            lambda: next((m for m in fake.messages(group) if m.text and "Players" in m.text), None),
            SAFETY,
        )
        await play_out(h, tid, [ann, bob], rng=random.Random(7))
        await fake.world.wait_for(lambda: "Game over" in (table_msg.text or "") or None, SAFETY)
        data = rematch_data(table_msg)
        bob_seen = len(fake.messages(bob.chat))
        # Ann says yes; Bob has walked away: nothing starts, she is told whom it waits for
        said = await ann.press(data=data, message=table_msg, chat=group).wait_answer(SAFETY)
        assert "Waiting for Bob" in (said["text"] or ""), said
        assert not said["show_alert"]
        await fake.world.wait_for(
            lambda: (
                all(
                    part in (table_msg.text or "")
                    for part in ("agreed: Ann", "Waiting for Bob", "the offer ends")
                )
                or None
            ),
            SAFETY,
            "the group's result shows the offer",
        )
        assert (await h.svc.tables.get(tid))[0].status == OVER
        # a member who did not play is told so
        said = await cy.press(data=data, message=table_msg, chat=group).wait_answer(SAFETY)
        assert said["show_alert"]
        assert "Only the players of this game" in (said["text"] or ""), said
        # the offer ends: Ann plays on, an AI in Bob's seat, not rated
        h.clock.advance(61)
        await ann.wait_message(has_game_buttons, timeout=SAFETY)
        table, _s, _v = await h.svc.tables.get(tid)
        assert (table.status, table.game_no) == (PLAYING, 2)
        assert [s.user for s in table.seats] == [ann.id, None]
        assert not table.rated_now
        # Bob's late press on game 1's result (#41: the result drops *Rematch* once
        # the rematch started -- a client that still shows it may press it): the
        # rematch has started
        said = await bob.press(data=data, message=table_msg, chat=group, forged=True).wait_answer(
            SAFETY
        )
        assert said["show_alert"]
        assert "already started" in (said["text"] or ""), said
        await play_out(h, tid, [ann], rng=random.Random(8))
        assert await assert_no_hidden_cards(h, tid, [ann]) > 5
        # nothing of game 2 reached Bob: no hand, no timeout, no stats, no rating
        assert len(fake.messages(bob.chat)) == bob_seen
        assert (await h.svc.ratings.of(bob.id)).recent == 1
        bob.send("/stats")
        stats = await bob.wait_message("games: 1", timeout=SAFETY)
        assert "games: 2" not in (stats.text or "")
        ann.send("/stats")
        await ann.wait_message("games: 2", timeout=SAFETY)
    assert not fake.stats.errors, fake.stats.error_texts
