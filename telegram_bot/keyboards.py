"""Keyboards and callback data of the handlers that the render modules do not
draw: language choice, taking a seat back, opening one's table, links to the bot."""

from __future__ import annotations

from typing import Annotated, Literal

from aiogram.filters.callback_data import CallbackData
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup
from pydantic import Field

from telegram_bot.callbacks import CODE_PATTERN
from telegram_bot.i18n import LANGUAGES

LANGUAGE_NAMES = {"ru": "🇷🇺 Русский", "uk": "🇺🇦 Українська", "en": "🇬🇧 English"}


class LangCb(CallbackData, prefix="lang"):
    """/lang keyboard: ``lang`` is ru, uk or en."""

    lang: Literal["ru", "uk", "en"]


class NewLobbyCb(CallbackData, prefix="nl"):
    """ "Open a lobby here" under the group's /play answer: ``variant`` to play."""

    variant: Literal["chuvash", "shchelkovsky"]


class SeatCb(CallbackData, prefix="seat"):
    """Seat operations in a game: ``op`` = ``back`` (take my seat back from the AI)."""

    game: Annotated[str, Field(pattern=CODE_PATTERN)]
    op: Literal["back"]


def language_keyboard() -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        inline_keyboard=[
            [
                InlineKeyboardButton(
                    text=LANGUAGE_NAMES[lang],
                    callback_data=LangCb(lang=lang).pack(),  # type: ignore[arg-type]
                )
                for lang in LANGUAGES
            ]
        ]
    )


def take_back_keyboard(game_id: str, label: str) -> InlineKeyboardMarkup:
    data = SeatCb(game=game_id, op="back").pack()
    return InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="🙋 " + label, callback_data=data)]]
    )


class TableCb(CallbackData, prefix="t"):
    """ "Open my table" (under a ``seated_elsewhere`` refusal): his hand message
    of that game sent again, or a copy of that lobby's message."""

    code: Annotated[str, Field(pattern=CODE_PATTERN)]


class CardsCb(CallbackData, prefix="mc"):
    """*My cards* on a group's table message: the presser's hand shown to him
    alone, as an ephemeral message in the group (issue 14)."""

    code: Annotated[str, Field(pattern=CODE_PATTERN)]


def open_table_keyboard(code: str, label: str) -> InlineKeyboardMarkup:
    data = TableCb(code=code).pack()
    return InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="🃏 " + label, callback_data=data)]]
    )


def url_keyboard(label: str, url: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(text=label, url=url)]])


def cards_row(
    code: str, bot_username: str, my_cards: str, in_private: str
) -> list[InlineKeyboardButton]:
    """A group game's *My cards* (the presser's hand shown in the group, to him
    alone) and *In private* (a deep link: his hand in the private chat)."""
    return [
        InlineKeyboardButton(text=my_cards, callback_data=CardsCb(code=code).pack()),
        InlineKeyboardButton(text=in_private, url=f"https://t.me/{bot_username}?start={code}"),
    ]
