"""End to end with the bot and the fake Telegram Bot API: an operator's reset
(and abort) through the admin API reaches the players' hand messages, via the
service's notify channel that the bot subscribes to."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from flask.testing import FlaskClient

from sandbox.fake_api import FakeTelegram, Message
from tests.admin.conftest import auth
from tests.bot.e2e_kit import SAFETY, Harness, running


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


async def solo_game(h: Harness, name: str) -> tuple[Message, str]:
    """A player who starts the bot and /play's a game against the AI."""
    user = h.fake.add_user(name, language_code="en")
    user.start()
    await user.wait_message(timeout=SAFETY)
    user.send("/play chuvash")  # a game named starts at once (#41)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + SAFETY
    while (hand := await h.hand_message(user)) is None:
        assert loop.time() < deadline, "no hand message"
        await h.fake.world.wait_changed(1.0)
    table = await h.svc.tables.where(user.id)
    assert table is not None
    return hand, table.id


async def test_an_operators_reset_reaches_the_players_messages(
    fake: FakeTelegram, redis_url: str, redis_prefix: str, client: FlaskClient
) -> None:
    async with running(redis_url, redis_prefix, fake) as h:
        hand, tid = await solo_game(h, "Ann")
        version = (await h.svc.tables.get(tid))[2]
        r = client.post(
            f"/api/v1/games/{tid}/reset",
            json={"to": "lobby"},
            headers={**auth(), "If-Match": str(version)},
        )
        assert r.status_code == 200, r.get_json()
        await fake.world.wait_for(
            lambda: "reset by an operator" in (hand.text or ""), SAFETY, "the reset notice"
        )
        assert (await h.svc.tables.get(tid))[0].status == "open"

        bob_hand, other = await solo_game(h, "Bob")
        r = client.post(f"/api/v1/games/{other}/end", headers=auth())
        assert r.status_code == 200
        await fake.world.wait_for(
            lambda: "stopped by an operator" in (bob_hand.text or ""), SAFETY, "the stop notice"
        )
