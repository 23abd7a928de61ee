"""The fake Bot API's newer formatting and buttons, driven by a real aiogram ``Bot``:
``<tg-time>`` / ``date_time`` entities, button ``style`` and disabled buttons."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import DisabledButton, InlineKeyboardButton, InlineKeyboardMarkup, MessageEntity

from sandbox.fake_api import FakeTelegram, RateLimits, SimUser


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram(limits=RateLimits.off()) as server:
        yield server


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    bot = fake.make_bot()
    yield bot
    await bot.session.close()


@pytest.fixture
def alice(fake: FakeTelegram) -> SimUser:
    user = fake.add_user("Alice")
    user.start()
    return user


# ------------------------------------------------------------------ date_time
async def test_tg_time_becomes_a_date_time_entity(bot: Bot, alice: SimUser) -> None:
    sent = await bot.send_message(
        alice.id,
        'Move by <tg-time unix="1647531900" format="wDT">22:45 tomorrow</tg-time>!',
        parse_mode="HTML",
    )
    assert sent.text == "Move by 22:45 tomorrow!"
    assert [e.model_dump(exclude_none=True) for e in sent.entities or []] == [
        {
            "type": "date_time",
            "offset": 8,
            "length": 14,
            "unix_time": 1647531900,
            "date_time_format": "wDT",
        }
    ]
    stored = alice.last_message()
    assert stored is not None
    assert stored.entities[0]["unix_time"] == 1647531900


async def test_tg_time_without_format_has_no_format(bot: Bot, alice: SimUser) -> None:
    sent = await bot.send_message(
        alice.id, '<tg-time unix="1647531900">soon</tg-time>', parse_mode="HTML"
    )
    assert sent.entities is not None
    assert sent.entities[0].type == "date_time"
    assert sent.entities[0].date_time_format is None


@pytest.mark.parametrize("date_format", ["r", "w", "d", "D", "t", "T", "wdt", "wDT", "DT", ""])
async def test_every_documented_format_is_accepted(
    bot: Bot, alice: SimUser, date_format: str
) -> None:
    sent = await bot.send_message(
        alice.id,
        f'<tg-time unix="1647531900" format="{date_format}">x</tg-time>',
        parse_mode="HTML",
    )
    assert sent.entities is not None
    assert sent.entities[0].date_time_format == date_format


@pytest.mark.parametrize(
    "tag",
    [
        "<tg-time>x</tg-time>",  # no unix
        '<tg-time unix="soon">x</tg-time>',
        '<tg-time unix="-5">x</tg-time>',
        # past +1098 days (its id has no clock in it: xdist's workers collect alike)
        pytest.param(
            f'<tg-time unix="{int(time.time()) + 1100 * 86400}">x</tg-time>', id="past-1098-days"
        ),
        '<tg-time unix="1647531900" format="rT">x</tg-time>',  # r stands alone
        '<tg-time unix="1647531900" format="dD">x</tg-time>',  # two dates
        '<tg-time unix="1647531900" format="Tw">x</tg-time>',  # out of order
        '<tg-time unix="1647531900" format="x">x</tg-time>',
    ],
)
async def test_a_bad_tg_time_cannot_be_parsed(bot: Bot, alice: SimUser, tag: str) -> None:
    with pytest.raises(TelegramBadRequest, match="can't parse entities"):
        await bot.send_message(alice.id, f"at {tag}", parse_mode="HTML")
    assert alice.last_message() is None  # the bot's message was not sent


async def test_a_date_time_entity_in_an_array_is_checked(bot: Bot, alice: SimUser) -> None:
    good = MessageEntity(type="date_time", offset=0, length=4, unix_time=1647531900)
    sent = await bot.send_message(alice.id, "soon", entities=[good])
    assert sent.entities is not None
    assert sent.entities[0].unix_time == 1647531900
    missing = MessageEntity(type="date_time", offset=0, length=4)
    with pytest.raises(TelegramBadRequest, match="can't parse entities"):
        await bot.send_message(alice.id, "soon", entities=[missing])
    bad = MessageEntity(
        type="date_time", offset=0, length=4, unix_time=1647531900, date_time_format="rr"
    )
    with pytest.raises(TelegramBadRequest, match="can't parse entities"):
        await bot.send_message(alice.id, "soon", entities=[bad])


# ------------------------------------------------------------------ buttons
def one_button(**fields: object) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(text="Go", **fields)]])  # type: ignore[arg-type]


@pytest.mark.parametrize("style", ["danger", "success", "primary"])
async def test_documented_styles_are_kept(bot: Bot, alice: SimUser, style: str) -> None:
    sent = await bot.send_message(
        alice.id, "Pick", reply_markup=one_button(callback_data="go", style=style)
    )
    assert sent.reply_markup is not None
    assert sent.reply_markup.inline_keyboard[0][0].style == style


@pytest.mark.parametrize("style", ["red", "Danger", "default", ""])
async def test_an_unknown_style_is_refused(bot: Bot, alice: SimUser, style: str) -> None:
    with pytest.raises(TelegramBadRequest, match="BUTTON_STYLE_INVALID"):
        await bot.send_message(
            alice.id, "Pick", reply_markup=one_button(callback_data="go", style=style)
        )


async def test_a_disabled_button_is_kept_and_cannot_be_pressed(bot: Bot, alice: SimUser) -> None:
    sent = await bot.send_message(
        alice.id, "Wait", reply_markup=one_button(disabled=DisabledButton(), style="success")
    )
    assert sent.reply_markup is not None
    assert isinstance(sent.reply_markup.inline_keyboard[0][0].disabled, DisabledButton)
    message = alice.last_message()
    assert message is not None
    with pytest.raises(ValueError, match="disabled"):
        alice.press("Go", message=message)
    with pytest.raises(ValueError, match="disabled"):
        alice.click("Go", message=message)
    updates = await bot.get_updates()  # his /start, and no callback query
    assert [u.event_type for u in updates] == ["message"]


async def test_a_disabled_button_carries_no_action(bot: Bot, alice: SimUser) -> None:
    with pytest.raises(TelegramBadRequest, match="BUTTON_TYPE_INVALID"):
        await bot.send_message(
            alice.id, "Wait", reply_markup=one_button(disabled=DisabledButton(), callback_data="x")
        )


async def test_a_button_has_exactly_one_action(bot: Bot, alice: SimUser) -> None:
    with pytest.raises(TelegramBadRequest, match="BUTTON_TYPE_INVALID"):
        await bot.send_message(
            alice.id, "Two", reply_markup=one_button(callback_data="x", url="https://t.me/x")
        )
