"""Keyboards and callback data of the handlers that the render modules do not
draw: language choice, taking a seat back, opening one's table, links to the bot."""

from __future__ import annotations

import unicodedata

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

from telegram_bot.buttons.callbacks import CardsCb, LangCb, SeatCb, TableCb
from telegram_bot.views.i18n import LANGUAGES

# ------------------------------------------------------------------ phone widths
PHONE_PX, GAP_PX, PAD_PX, CHAR_PX = 320, 3, 8, 7.6
"""What a phone shows (#29): an inline keyboard about 320 px wide (a 360-dp
screen less the chat's margins), 3 px between buttons, 8 px of padding inside
each, and Telegram's 14-sp button font about 7.6 px a letter on average (Latin
and Cyrillic alike); an emoji is two letters wide.  A label wider than its
button's share is cut («✓ nor…»).  So a button may hold :func:`row_budget`
letters: 41 alone in its row, 19 in a row of two, 12 of three, 9 of four, 7 of
five, 5 of six."""
_EMOJI_BY_TELEGRAM = frozenset("▶◀⏭✖↪⚙⏱🎞")
"""Symbols whose text form Unicode draws narrow but Telegram draws as emoji."""


def label_width(text: str) -> int:
    """A label's width in average letters: an emoji counts two, a variation
    selector or joiner nothing."""
    width = 0
    for i, c in enumerate(text):
        if c in "\ufe0f\u200d" or unicodedata.combining(c):
            continue
        emoji_form = text[i + 1 : i + 2] == "\ufe0f"
        wide = unicodedata.east_asian_width(c) in "WF" or ord(c) >= 0x1F000
        width += 2 if wide or emoji_form or c in _EMOJI_BY_TELEGRAM else 1
    return width


def row_budget(buttons: int) -> int:
    """The widest label (:func:`label_width`) a phone shows whole in a row of
    ``buttons`` buttons."""
    share = (PHONE_PX - GAP_PX * (buttons - 1)) / buttons - PAD_PX
    return int(share / CHAR_PX)


def fit_rows(buttons: list[InlineKeyboardButton], most: int) -> list[list[InlineKeyboardButton]]:
    """Buttons in order, as many to a row (at most ``most``) as a phone shows
    with no label cut."""
    rows: list[list[InlineKeyboardButton]] = []
    for b in buttons:
        row = rows[-1] if rows else None
        if row is not None and len(row) < most:
            widest = max(label_width(x.text) for x in [*row, b])
            if widest <= row_budget(len(row) + 1):
                row.append(b)
                continue
        rows.append([b])
    return rows


PRIVATE_MARK = "🔒"
"""The mark of *Private chat*: a player's hand in his private chat with the bot."""
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
    alone) and *Private chat* (a deep link: his hand in the private chat)."""
    return [
        InlineKeyboardButton(text=my_cards, callback_data=CardsCb(code=code).pack()),
        InlineKeyboardButton(text=in_private, url=f"https://t.me/{bot_username}?start={code}"),
    ]


Screen = tuple[str, InlineKeyboardMarkup | None]
"""A message's text and keyboard."""
