"""The ways into the Mini App end to end (#42): the real bot on the fake Bot API
-- the private hand's ``web_app`` button, the group table message's direct link
(or, without a short name, the deep link whose /start answers with the
``web_app`` button), the private chats' menu button -- each opening the page
with init data that checks with the bot's token; with ``MINIAPP_URL`` unset,
no button and no menu button."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiogram.utils.web_app import safe_parse_webapp_init_data

from sandbox.fake_api import FakeTelegram, Message, RateLimits, SimUser
from sandbox.fake_api.web_apps import Launch
from tests.bot.e2e_group_kit import group_lobby
from tests.bot.e2e_kit import SAFETY, has_game_buttons, running

URL = "https://durak.example.org/miniapp/"
LABEL = "🎴 Card table"


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


def web_apps(message: Message | None) -> list[str]:
    return [b["web_app"]["url"] for b in (message.buttons if message else []) if "web_app" in b]


def links(message: Message | None) -> list[str]:
    return [str(b["url"]) for b in (message.buttons if message else []) if "url" in b]


async def test_a_private_hand_opens_its_table_in_the_app(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    extra: dict[str, Any] = {"miniapp_url": URL, "miniapp_short_name": "table"}
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **extra) as h:
        ann = fake.add_user("Ann", language_code="en")
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        ann.send("/play chuvash")
        hand = await ann.wait_message(has_game_buttons, timeout=SAFETY)
        table = await h.svc.tables.where(ann.id)
        assert table is not None
        assert web_apps(hand) == [f"{URL}?t={table.id}"]
        opened = ann.click(LABEL, message=hand)
        assert isinstance(opened, Launch)
        data = safe_parse_webapp_init_data(fake.token, opened.init_data)
        assert data.user is not None
        assert data.user.id == ann.id
        # the menu button of every private chat: the app without a table
        assert fake.world.menu_button_for(ann.chat) == {
            "type": "web_app",
            "text": "My tables",
            "web_app": {"url": URL},
        }
        assert ann.open_menu_app().url.startswith(URL + "#")


async def test_the_group_table_message_opens_the_app_in_place(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    fake.register_web_app("table", URL)  # @BotFather's /newapp
    extra: dict[str, Any] = {"miniapp_url": URL, "miniapp_short_name": "table"}
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, **extra) as h:
        humans = [fake.add_user(n, language_code="en") for n in ("Ann", "Bob")]
        tid, group = await group_lobby(h, "chuvash", humans, 0)
        table_message = await fake.wait_message(group, "Players", timeout=SAFETY)
        direct = f"https://t.me/{fake.bot_user.username}/table?startapp={tid}"
        assert direct in links(table_message)
        assert web_apps(table_message) == []  # the group refuses one
        opened = humans[1].click(LABEL, message=table_message)
        assert isinstance(opened, Launch)
        assert opened.start_param == tid
        data = safe_parse_webapp_init_data(fake.token, opened.init_data)
        assert data.user is not None
        assert data.user.id == humans[1].id
        assert (data.start_param, data.chat_type) == (tid, "group")
        for u in humans:  # their hands in private: the web_app button
            hand = await h.hand_message(u, tid)
            assert web_apps(hand) == [f"{URL}?t={tid}"]


async def test_without_a_short_name_the_group_links_to_the_private_chat(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False, miniapp_url=URL) as h:
        humans = [fake.add_user(n, language_code="en") for n in ("Ann", "Bob")]
        tid, group = await group_lobby(h, "chuvash", humans, 0)
        table_message = await fake.wait_message(group, "Players", timeout=SAFETY)
        deep = f"https://t.me/{fake.bot_user.username}?start=app_{tid}"
        assert deep in links(table_message)
        bob = humans[1]
        bob.follow_link(deep)
        answer = await bob.wait_message(lambda m: bool(web_apps(m)), timeout=SAFETY)
        assert web_apps(answer) == [f"{URL}?t={tid}"]
        assert (answer.text or "").startswith("🎴 ")
        opened = bob.open_web_app(message=answer)
        assert safe_parse_webapp_init_data(fake.token, opened.init_data).user is not None


async def test_the_app_off_no_button_points_to_it(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False) as h:
        humans = [fake.add_user(n, language_code="en") for n in ("Ann", "Bob")]
        tid, group = await group_lobby(h, "chuvash", humans, 0)
        table_message = await fake.wait_message(group, "Players", timeout=SAFETY)
        assert not [u for u in links(table_message) if "startapp=" in u or "start=app_" in u]
        for u in humans:
            assert web_apps(await h.hand_message(u, tid)) == []
        assert fake.world.menu_buttons == {}  # the menu button untouched
        # a stray deep link of the app: the welcome
        humans[0].follow_link(f"https://t.me/{fake.bot_user.username}?start=app_{tid}")
        welcome = await humans[0].wait_message(
            lambda m: any("Add me to a group" in t for t in m.button_texts), timeout=SAFETY
        )
        assert web_apps(welcome) == []


async def test_the_menu_button_speaks_his_language(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    """Telegram's default menu button has one label (English); a chat whose user
    speaks another gets its own at /start, and /lang changes it."""

    def label(user: SimUser) -> object:
        return fake.world.menu_buttons.get(user.chat.id, {}).get("text")

    async with running(redis_url, redis_prefix, fake, flood_limiter=False, miniapp_url=URL):
        ann = fake.add_user("Ann", language_code="ru")
        bob = fake.add_user("Bob", language_code="en")
        for u in (ann, bob):
            u.start()
            await u.wait_message(timeout=SAFETY)
        await fake.world.wait_for(lambda: label(ann), timeout=SAFETY)
        assert label(ann) == "Мои столы"
        assert fake.world.menu_buttons[ann.chat.id]["web_app"] == {"url": URL}
        assert label(bob) is None  # the default: "My tables"
        ann.send("/lang uk")
        await fake.world.wait_for(lambda: label(ann) == "Мої столи", timeout=SAFETY)
        ann.send("/lang en")
        await fake.world.wait_for(lambda: label(ann) == "My tables", timeout=SAFETY)


async def test_the_app_off_the_menu_button_stays(
    fake: FakeTelegram, redis_url: str, redis_prefix: str
) -> None:
    async with running(redis_url, redis_prefix, fake, flood_limiter=False):
        ann = fake.add_user("Ann", language_code="ru")
        ann.start()
        await ann.wait_message(timeout=SAFETY)
        ann.send("/lang uk")
        # the chat's command menu set: the menu button would have come with it
        chat_menu = (f"chat:{ann.chat.id}", "")
        await fake.world.wait_for(lambda: chat_menu in fake.world.commands, timeout=SAFETY)
        assert fake.world.menu_buttons == {}
