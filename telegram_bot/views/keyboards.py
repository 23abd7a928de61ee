"""Keyboards and callback data of the handlers that the render modules do not
draw: language choice, taking a seat back, opening one's table, links to the bot."""

from __future__ import annotations

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from telegram_bot.buttons.callbacks import CardsCb, LangCb, SeatCb, TableCb
from telegram_bot.views.i18n import LANGUAGES

LANGUAGE_NAMES = {"ru": "🇷🇺 Русский", "uk": "🇺🇦 Українська", "en": "🇬🇧 English"}


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


Screen = tuple[str, InlineKeyboardMarkup | None]
"""A message's text and keyboard."""
