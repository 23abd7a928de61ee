"""The ways into the Mini App's replay viewer and player page (#42): the
replay message's button opens its step in the viewer, ``/replay`` and
``/rating`` (in the private chat) a button to the player page -- ``web_app``
buttons, as Telegram allows them only in private chats; none while the Mini
App is off."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from typing import Any

import pytest

from engine.replay import replay_step
from sandbox.fake_api import FakeTelegram, RateLimits
from tables import TableService
from telegram_bot.views.miniapp import MiniApp
from telegram_bot.views.replay import render_replay
from tests.bot.e2e_kit import SAFETY, running
from tests.bot.miniapp_kit import MINIAPP
from tests.engine.test_records import played

APP = MiniApp("https://durak.example.org/miniapp/", "table", "durak_bot")
URL = MINIAPP["miniapp_url"]


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def web_apps(buttons: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(b["text"], b["web_app"]["url"]) for b in buttons if "web_app" in b]


def test_the_viewers_and_the_player_pages_urls() -> None:
    assert APP.replay("Tbl_-012345", 2, 17) == (
        "https://durak.example.org/miniapp/?r=Tbl_-012345.2&s=17"
    )
    assert APP.player() == "https://durak.example.org/miniapp/?p=1"


def test_a_replay_message_opens_its_step_in_the_viewer() -> None:
    record, _final = played("chuvash", 2, 7)
    record.update(table="Tbl_-012345", game=3, seats=[[1, "Ann"], [2, "Bob"]])
    step = replay_step(record, 5)
    _text, markup = render_replay(step, locale="ru", app=APP)
    rows = markup.inline_keyboard
    assert [b.model_dump(exclude_none=True) for b in rows[-1]] == [
        {
            "text": "🎴 Повтор",
            "web_app": {"url": "https://durak.example.org/miniapp/?r=Tbl_-012345.3&s=5"},
        }
    ]
    _text, off = render_replay(step, locale="ru")
    assert off.inline_keyboard == rows[:-1]  # the Mini App off: the message as before


async def finished(svc: TableService, ann: int, bob: int) -> str:
    made = await svc.lobbies.create_lobby(ann, "Ann", chat=None, variant="chuvash", timer=0)
    await svc.lobbies.join(made.table_id, bob, "Bob")
    await svc.games.start(made.table_id, ann)
    rng = random.Random(3)
    while True:
        table, state, version = await svc.tables.get(made.table_id)
        assert state is not None
        if state.over:
            return made.table_id
        seat = state.to_act()[0]
        user = table.seats[seat].user
        assert user is not None
        await svc.games.apply(
            made.table_id, user, rng.choice(state.legal_actions(seat)).text(), version
        )


async def test_replay_and_rating_open_the_player_page(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **MINIAPP) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        ann.start()
        tid = await finished(h.svc, ann.id, bob.id)
        ann.send("/replay")
        listed = await ann.wait_message("Your recent games", timeout=SAFETY)
        assert web_apps(listed.buttons) == [("🎴 My games", f"{URL}?p=1")]
        listed_game = next(b for b in listed.buttons if "callback_data" in b)
        ann.press(data=listed_game["callback_data"], message=listed)
        shown = await ann.wait_message("Replay", timeout=SAFETY)
        assert web_apps(shown.buttons) == [("🎴 Replay", f"{URL}?r={tid}.1&s=0")]
        ann.send("/rating")
        rating = await ann.wait_message("Ratings", timeout=SAFETY)
        assert web_apps(rating.buttons) == [("🎴 Rating history", f"{URL}?p=1")]


async def test_no_button_while_the_mini_app_is_off(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        ann, bob = (fake.add_user(n, language_code="en") for n in ("Ann", "Bob"))
        ann.start()
        await finished(h.svc, ann.id, bob.id)
        ann.send("/replay")
        listed = await ann.wait_message("Your recent games", timeout=SAFETY)
        assert web_apps(listed.buttons) == []
        ann.send("/rating")
        rating = await ann.wait_message("Ratings", timeout=SAFETY)
        assert rating.buttons == []


def test_a_groups_result_opens_the_replay_in_place() -> None:
    """A group refuses a ``web_app`` button: with a short name, the app's
    direct link to the replay (``startapp=r<game>_<table>``); without one,
    *Replay* alone, which sends it to the private chat."""
    from tables import OVER
    from telegram_bot.views.miniapp import replay_start
    from telegram_bot.views.table import table_screen
    from tests.bot.test_render_fair import snap

    tid = "Abc_-123456"
    assert APP.replay_link(tid, 2) == f"https://t.me/durak_bot/table?startapp=r2_{tid}"
    assert replay_start(f"r2_{tid}") == (tid, 2)
    assert replay_start(tid) is None
    assert replay_start("r1_abcdefgh") is None  # 11 characters: a table id's
    _text, markup = table_screen(snap(OVER), "durak_bot", app=APP)
    last = markup.inline_keyboard[-1] if markup is not None else []
    assert [(b.text, b.url) for b in last] == [
        ("🎴 Replay", f"https://t.me/durak_bot/table?startapp=r1_{tid}")
    ]
    no_short = MiniApp(APP.url, "", "durak_bot")
    _text, plain = table_screen(snap(OVER), "durak_bot", app=no_short)
    assert plain is not None
    assert all(b.url is None for row in plain.inline_keyboard for b in row)
    assert table_screen(snap(OVER), "durak_bot")[1] == plain
