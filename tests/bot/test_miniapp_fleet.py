"""The Mini App on a fleet of real bot processes (#42): two ``python -m
telegram_bot`` processes behind the webhook proxy (``harness/fleet.py``), each
serving the Mini App on its webhook's server; a page on one follows the moves
made through the other -- hand buttons whose updates the proxy hands to
either, and the moves of a page on the other process -- on one Redis and on a
3-master cluster (sharded pub/sub)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from harness.fleet import BotFleet, open_group_game
from sandbox.fake_api import FakeTelegram, Message, RateLimits, SimUser
from tests.bot.miniapp_kit import MINIAPP, Page, init_data, pages

pytestmark = pytest.mark.slow

ENV = {
    "MINIAPP_URL": MINIAPP["miniapp_url"],
    "SOON_DELAY": "0.1",
    "LATER_DELAY": "0.3",
    "TABLE_DELAY": "0.5",
    "FLOOD_LIMITER": "false",
    "RATED_AFTER_GAMES": "0",
    "RATED_AFTER_DAYS": "0",
    "RATED_DIVERSITY_OPPONENTS": "0",
}
SAFETY = 60.0


@pytest.fixture(params=["redis_url", "redis_cluster_url"])
async def fleet(
    request: pytest.FixtureRequest, redis_prefix: str
) -> AsyncIterator[tuple[FakeTelegram, BotFleet]]:
    url = request.getfixturevalue(request.param)
    async with (
        FakeTelegram(limits=RateLimits.off()) as fake,
        BotFleet(fake, url, redis_prefix, count=2, env=ENV) as running,
    ):
        yield fake, running
        codes = await running.stop()
        assert codes == [0, 0], running.log_tail()


def legal(view: dict[str, Any] | None) -> list[str]:
    return list(((view or {}).get("game") or {}).get("legal") or [])


async def test_a_page_on_one_process_follows_moves_made_through_the_other(
    fleet: tuple[FakeTelegram, BotFleet],
) -> None:
    fake, bots = fleet
    humans = [fake.add_user(f"F{i}", language_code="en") for i in range(2)]
    tid, _group = await open_group_game(bots, humans, "shchelkovsky")
    one, two = (f"http://127.0.0.1:{port}/app" for port in bots.ports)
    async with pages(one) as open_one, pages(two) as open_two:
        mine: dict[int, Page] = {
            humans[0].id: await open_one(init_data(fake.token, humans[0].id), tid),
            humans[1].id: await open_two(init_data(fake.token, humans[1].id), tid),
        }
        for page in mine.values():
            await page.wait(lambda page=page: page.view)
        for _move in range(8):  # each move from one process's page, followed on the other's
            mover = await asyncio.wait_for(_waited_for(mine), SAFETY)
            view = mover.view
            assert view is not None
            pick = [a for a in legal(view) if a[0] not in "KP"] or legal(view)
            result = await mover.move(pick[0], view)
            assert result["ok"], result
            for page in mine.values():
                await page.view_after(result["version"] - 1)
        # presses of hand buttons (handled by either process) until one moves:
        # the presser's page closes first -- while it is open his hand message
        # waits (#42 point 6); the close draws it -- and the other page follows
        table, state, _before = await bots.svc.tables.get(tid)
        assert state is not None
        presser = next(u for u in humans if table.seat_of(u.id) in state.to_act())
        await mine.pop(presser.id).close()
        after = await asyncio.wait_for(_move_by_hand_buttons(fake, bots, tid, [presser]), SAFETY)
        for page in mine.values():
            await page.view_after(after - 1)
        again = await open_one(init_data(fake.token, presser.id), tid)
        await again.wait(lambda: (v := again.view) is not None and v["version"] >= after)


async def _waited_for(mine: dict[int, Page]) -> Page:
    while True:
        for page in mine.values():
            if legal(page.view):
                return page
        await asyncio.sleep(0.02)


async def _move_by_hand_buttons(
    fake: FakeTelegram, bots: BotFleet, tid: str, humans: list[SimUser]
) -> int:
    """Presses of move buttons (Take, Pass/Done, a playable card) of the hand
    message of a player the game waits for, each once that message shows the
    table's current version (an older button is answered as stale), until the
    table moves: a first card tap may only select the card. The new version."""
    from telegram_bot.buttons.callbacks import parse_game
    from tests.bot.e2e_kit import choose

    ui = await bots.ui.table(tid)
    table, state, before = await bots.svc.tables.get(tid)
    assert state is not None
    seated = {table.seats[s].user: s for s in state.to_act()}
    player = next(u for u in humans if u.id in seated)
    mid = ui.hands.get(player.id)
    assert mid is not None
    assert mid > 0, "a private hand message"
    shown: set[str] = set()

    def movable() -> Message | None:
        message = player.chat.messages.get(mid)
        button = choose(message) if message is not None else None
        if button is None or button["callback_data"] in shown:
            return None
        cb = parse_game(button["callback_data"])
        return message if cb is not None and cb.version == before else None

    while True:
        message = await fake.world.wait_for(movable, SAFETY)
        button = choose(message)
        assert button is not None
        shown.add(button["callback_data"])
        await player.press(data=button["callback_data"], message=message).wait_answer(SAFETY)
        _t, _s, version = await bots.svc.tables.get(tid)
        if version > before:
            return version
