"""Mini Apps in the fake Bot API (#42): ``web_app`` buttons only in private
chats, the menu button, the app opened with init data signed as Telegram signs
it (checked with aiogram's own check), and the stand-in ``telegram-web-app.js``."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from urllib.parse import parse_qsl, urlsplit

import aiohttp
import pytest
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import (
    EphemeralMessageParameters,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    MenuButtonDefault,
    MenuButtonWebApp,
    WebAppInfo,
)
from aiogram.utils.web_app import check_webapp_signature, safe_parse_webapp_init_data

from sandbox.fake_api import FakeTelegram, RateLimits
from sandbox.fake_api.web_apps import THEMES, Launch, sign_init_data
from sandbox.page.server import MINIAPP_PATH, MINIAPP_SHORT_NAME, Sandbox
from telegram_bot.settings import Settings

APP = "https://app.example.org/miniapp/"


def app_keyboard(url: str = APP) -> InlineKeyboardMarkup:
    button = InlineKeyboardButton(text="🎴 Card table", web_app=WebAppInfo(url=url))
    return InlineKeyboardMarkup(inline_keyboard=[[button]])


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    bot = fake.make_bot()
    yield bot
    await bot.session.close()


async def test_web_app_buttons_only_in_private_chats(fake: FakeTelegram, bot: Bot) -> None:
    ann = fake.add_user("Ann")
    bob = fake.add_user("Bob")
    ann.start()
    sent = await bot.send_message(ann.id, "yours", reply_markup=app_keyboard())
    assert fake.last_message(ann.chat) is not None
    kept = fake.world.chat(ann.chat.id).messages[sent.message_id].buttons
    assert kept == [{"text": "🎴 Card table", "web_app": {"url": APP}}]
    group = ann.create_group("Card night", bob)
    ann.add_bot_to(group)
    # "Available only in private chats between a user and the bot"
    with pytest.raises(TelegramBadRequest, match="BUTTON_TYPE_INVALID"):
        await bot.send_message(group.id, "table", reply_markup=app_keyboard())
    posted = await bot.send_message(group.id, "table")
    with pytest.raises(TelegramBadRequest, match="BUTTON_TYPE_INVALID"):
        await bot.edit_message_text(
            "table", chat_id=group.id, message_id=posted.message_id, reply_markup=app_keyboard()
        )
    with pytest.raises(TelegramBadRequest, match="BUTTON_TYPE_INVALID"):
        await bot.edit_message_reply_markup(
            chat_id=group.id, message_id=posted.message_id, reply_markup=app_keyboard()
        )
    with pytest.raises(TelegramBadRequest, match="BUTTON_TYPE_INVALID"):  # an ephemeral one
        await bot.send_message(
            group.id,
            "your cards",
            reply_markup=app_keyboard(),
            ephemeral_message_parameters=EphemeralMessageParameters(receiver_user_id=bob.id),
        )
    # the private chat's message may be edited with one
    await bot.edit_message_reply_markup(
        chat_id=ann.id, message_id=sent.message_id, reply_markup=app_keyboard(APP + "?t=x")
    )
    # a group's link to the app is a URL button: allowed
    link = InlineKeyboardButton(text="🎴", url="https://t.me/durak_test_bot/table?startapp=x")
    await bot.send_message(
        group.id, "t", reply_markup=InlineKeyboardMarkup(inline_keyboard=[[link]])
    )


async def test_a_web_app_url_must_be_https(fake: FakeTelegram, bot: Bot) -> None:
    ann = fake.add_user("Ann")
    ann.start()
    for bad in ("http://app.example.org/", "ftp://app.example.org/", "https://"):
        with pytest.raises(TelegramBadRequest, match="BUTTON_URL_INVALID"):
            await bot.send_message(ann.id, "x", reply_markup=app_keyboard(bad))
    # the sandbox serves its Mini App on loopback over plain HTTP: the fake takes it
    await bot.send_message(ann.id, "x", reply_markup=app_keyboard("http://127.0.0.1:8080/miniapp/"))


async def test_menu_button_set_and_read(fake: FakeTelegram, bot: Bot) -> None:
    ann = fake.add_user("Ann")
    bob = fake.add_user("Bob")
    ann.start()
    assert (await bot.get_chat_menu_button()).type == "commands"  # nothing set yet
    web = MenuButtonWebApp(text="My tables", web_app=WebAppInfo(url=APP))
    assert await bot.set_chat_menu_button(menu_button=web)  # the default of every chat
    got = await bot.get_chat_menu_button()
    assert isinstance(got, MenuButtonWebApp)
    assert (got.text, got.web_app.url) == ("My tables", APP)
    assert (await bot.get_chat_menu_button(chat_id=ann.id)).type == "default"  # none of its own
    assert fake.world.menu_button_for(ann.chat)["type"] == "web_app"  # what her app shows
    await bot.set_chat_menu_button(chat_id=ann.id, menu_button=MenuButtonDefault())
    assert fake.snapshot()["menu_buttons"]["default"]["web_app"]["url"] == APP
    group = ann.create_group("Card night", bob)
    ann.add_bot_to(group)
    with pytest.raises(TelegramBadRequest, match="private chat"):
        await bot.set_chat_menu_button(chat_id=group.id, menu_button=web)
    bad = MenuButtonWebApp(text="x", web_app=WebAppInfo(url="http://app.example.org/"))
    with pytest.raises(TelegramBadRequest, match="BUTTON_URL_INVALID"):
        await bot.set_chat_menu_button(menu_button=bad)


def _hash_params(launch: Launch) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(launch.url).fragment))


async def test_a_web_app_button_opens_the_app_with_signed_init_data(
    fake: FakeTelegram, bot: Bot
) -> None:
    ann = fake.add_user("Ann", username="ann", language_code="ru")
    ann.start()
    await bot.send_message(ann.id, "yours", reply_markup=app_keyboard(APP + "?t=abc"))
    opened = ann.click("🎴 Card table")
    assert isinstance(opened, Launch)
    assert opened.url.startswith(APP + "?t=abc#")
    data = safe_parse_webapp_init_data(fake.token, opened.init_data)  # Telegram's check
    assert data.user is not None
    assert (data.user.id, data.user.first_name, data.user.language_code) == (ann.id, "Ann", "ru")
    assert data.start_param is None
    assert data.chat_type is None
    params = _hash_params(opened)
    assert params["tgWebAppData"] == opened.init_data
    assert json.loads(params["tgWebAppThemeParams"]) == THEMES["light"]
    assert params["tgWebAppVersion"]
    assert params["tgWebAppPlatform"]
    dark = ann.open_web_app(theme="dark")
    assert json.loads(_hash_params(dark)["tgWebAppThemeParams"]) == THEMES["dark"]
    # another bot's token, or a changed user, does not check
    assert not check_webapp_signature("42:another-bots-token", opened.init_data)
    forged = opened.init_data.replace(str(ann.id), str(ann.id + 1))
    assert not check_webapp_signature(fake.token, forged)


async def test_a_direct_link_opens_the_registered_app_in_place(fake: FakeTelegram) -> None:
    ann = fake.add_user("Ann")
    bob = fake.add_user("Bob")
    group = ann.create_group("Card night", bob)
    ann.add_bot_to(group)
    link = f"https://t.me/{fake.bot_user.username}/table?startapp=Tbl_-0123456"
    with pytest.raises(ValueError, match="no Mini App named"):  # not registered yet
        bob.open_direct_link(link, group)
    fake.register_web_app("table", APP)
    opened = bob.open_direct_link(link, group)
    assert opened.url.startswith(APP + "#")
    data = safe_parse_webapp_init_data(fake.token, opened.init_data)
    assert data.user is not None
    assert data.user.id == bob.id
    assert data.start_param == "Tbl_-0123456"
    assert data.chat_type == "group"
    assert data.chat_instance == fake.world.chat_instance(group)
    assert _hash_params(opened)["tgWebAppStartParam"] == "Tbl_-0123456"
    # the link's button in the group opens it the same way
    fake.world.add_message(
        group,
        fake.bot_user,
        text="table",
        reply_markup={"inline_keyboard": [[{"text": "🎴", "url": link}]]},
    )
    clicked = bob.click("🎴", chat=group)
    assert isinstance(clicked, Launch)
    assert clicked.start_param == "Tbl_-0123456"
    with pytest.raises(ValueError, match="direct link"):  # not a /start deep link
        bob.follow_link(link)


async def test_the_menu_button_opens_the_app(fake: FakeTelegram, bot: Bot) -> None:
    ann = fake.add_user("Ann")
    ann.start()
    with pytest.raises(LookupError):
        ann.open_menu_app()
    await bot.set_chat_menu_button(
        menu_button=MenuButtonWebApp(text="My tables", web_app=WebAppInfo(url=APP))
    )
    opened = ann.open_menu_app()
    assert opened.url.startswith(APP + "#")
    assert safe_parse_webapp_init_data(fake.token, opened.init_data).user is not None


def test_signing_is_telegrams() -> None:
    """The documented algorithm, by hand: sorted ``key=value`` lines, HMAC-SHA256
    keyed by HMAC-SHA256("WebAppData", token)."""
    token = "123:abc"
    signed = sign_init_data(token, {"user": '{"id":1}', "auth_date": "1700000000"})
    assert check_webapp_signature(token, signed)
    assert dict(parse_qsl(signed))["auth_date"] == "1700000000"
    assert not check_webapp_signature("123:abd", signed)


async def test_the_stand_in_script_is_served(fake: FakeTelegram) -> None:
    async with aiohttp.ClientSession() as session, session.get(fake.web_app_js) as response:
        assert response.status == 200
        assert response.content_type == "application/javascript"
        assert response.headers["Access-Control-Allow-Origin"] == "*"
        body = await response.text()
    assert "window.Telegram.WebApp = WebApp" in body
    for name in ("MainButton", "BackButton", "HapticFeedback", "onEvent", "offEvent", "expand"):
        assert name in body


async def test_the_sandbox_gives_its_bot_a_mini_app(redis_url: str, redis_prefix: str) -> None:
    """#42: the bot's own route (MINIAPP_PATH), registered with the fake as
    MINIAPP_SHORT_NAME: a player's hand opens it in the page's frame."""
    settings = Settings(redis_prefix=redis_prefix)
    async with Sandbox(redis_url=redis_url, settings=settings, miniapp=True) as sb:
        bot_settings = sb.app.settings
        url = bot_settings.miniapp_url
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith(MINIAPP_PATH)
        assert bot_settings.miniapp_short_name == MINIAPP_SHORT_NAME
        assert sb.fake.world.web_apps == {MINIAPP_SHORT_NAME: url}
        assert sb.fake.world.menu_buttons[None]["web_app"] == {"url": url}
        alice = sb.fake.sim(
            next(u for u in sb.fake.world.users.values() if u.first_name == "Alice")
        )
        alice.start()
        await alice.wait_message("Welcome", timeout=30)
        alice.send("/play chuvash")
        hand = await alice.wait_message(
            lambda m: any("web_app" in b for b in m.buttons), timeout=30
        )
        opened = alice.open_web_app(message=hand)
        assert opened.url.startswith(url + "?t=")
    async with Sandbox(redis_url=redis_url, settings=settings) as off:  # tests: off by default
        assert off.app.settings.miniapp_url == ""
