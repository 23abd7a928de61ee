"""Keyboards and callback data of the handlers that the render modules do not
draw: language choice, taking a seat back, links to the bot."""

from __future__ import annotations

from typing import Annotated, Literal

from aiogram.filters.callback_data import CallbackData
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup
from pydantic import Field

from telegram_bot.callbacks import CODE_PATTERN
from telegram_bot.i18n import LANGUAGES

LANGUAGE_NAMES = {"ru": "🇷🇺 Русский", "uk": "🇺🇦 Українська", "en": "🇬🇧 English"}


class LangCb(CallbackData, prefix="lang"):
    """/lang keyboard: ``l`` is ru, uk or en."""

    l: Literal["ru", "uk", "en"]  # noqa: E741


class SeatCb(CallbackData, prefix="seat"):
    """Seat operations in a game: ``o`` = ``back`` (take my seat back from the AI)."""

    g: Annotated[str, Field(pattern=CODE_PATTERN)]
    o: Literal["back"]


def language_keyboard() -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(
        inline_keyboard=[
            [
                InlineKeyboardButton(text=LANGUAGE_NAMES[lang], callback_data=LangCb(l=lang).pack())  # type: ignore[arg-type]
                for lang in LANGUAGES
            ]
        ]
    )


def take_back_keyboard(game_id: str, label: str) -> InlineKeyboardMarkup:
    data = SeatCb(g=game_id, o="back").pack()
    return InlineKeyboardMarkup(
        inline_keyboard=[[InlineKeyboardButton(text="🙋 " + label, callback_data=data)]]
    )


def url_keyboard(label: str, url: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(text=label, url=url)]])
