"""Keyboards and callback data of the handlers that the render modules do not
draw: language choice, taking a seat back, opening one's table, links to the bot,
the choice of a game against the AI (``/play``)."""

from __future__ import annotations

import unicodedata

from aiogram.types import DisabledButton, InlineKeyboardButton, InlineKeyboardMarkup

from telegram_bot.buttons.callbacks import CardsCb, LangCb, NewLobbyCb, PlayCb, SeatCb, TableCb
from telegram_bot.views.i18n import (
    LANGUAGES,
    LEVEL_TITLES,
    VARIANT_SHORT,
    VARIANT_TITLES,
    Translator,
)
from telegram_bot.views.texts import OPEN_LOBBY, PLAY_AGAIN, PLAY_CHOOSE, PLAY_SOLO

# ------------------------------------------------------------------ phone widths
PHONE_PX, GAP_PX, PAD_PX, CHAR_PX = 280, 5, 10, 8.2
"""What a phone shows (#29, #41), conservatively: a 360-dp phone gives a bot's
message and its inline keyboard about 280 px (the screen less the bubble's
margins); buttons stand 5 px apart, and a label is cut («🔎 Check the…»)
where it comes within 5 px of its button's edges; Telegram's 15-sp medium
button font takes about 8.2 px a letter on average (Latin and Cyrillic, small
and capital letters alike); an emoji takes two letters.  So a button may hold
:func:`row_budget` letters: 32 alone in its row, 15 in a row of two, 9 of
three, 6 of four, 5 of five, 3 of six.  (#29 measured against a 320-px
keyboard and a 7.6-px letter: «🔎 Check the deal» fitted half a row there,
and was cut on every result.)"""
_EMOJI_BY_TELEGRAM = frozenset("▶◀⏭✖↪⚙⏱🎞")
"""Symbols whose text form Unicode draws narrow but Telegram draws as emoji."""
_REGIONAL = range(0x1F1E6, 0x1F200)
"""Regional indicators: two of them draw one flag («🇺🇦»)."""
_SKIN_TONES = range(0x1F3FB, 0x1F400)


def label_width(text: str) -> int:
    """A label's width in average letters: an emoji counts two -- a flag (two
    regional indicators) or a joined sequence is one emoji --, a variation
    selector, joiner, skin tone or combining mark nothing."""
    width = 0
    flag_half = False
    for i, c in enumerate(text):
        code = ord(c)
        if c in "\ufe0f\u200d" or unicodedata.combining(c) or code in _SKIN_TONES:
            continue
        if unicodedata.category(c) in ("Mn", "Me"):  # a keycap's enclosing mark
            continue
        if i and text[i - 1] == "\u200d":  # joined to the emoji before it
            continue
        if code in _REGIONAL:
            flag_half = not flag_half
            width += 2 if flag_half else 0
            continue
        flag_half = False
        emoji_form = text[i + 1 : i + 2] == "\ufe0f"
        wide = unicodedata.east_asian_width(c) in "WF" or code >= 0x1F000
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


def even_rows(buttons: list[InlineKeyboardButton], most: int) -> list[list[InlineKeyboardButton]]:
    """Buttons in order in the fewest rows (at most ``most`` a row) that a phone
    shows with no label cut, the rows as even as can be: four in 2 + 2, not
    3 + 1 (#41: a row of choices of one setting)."""
    n = len(buttons)
    for count in range(1, n + 1):
        base, extra = divmod(n, count)
        if base + bool(extra) > most:
            continue
        sizes = [base + 1] * extra + [base] * (count - extra)
        starts = [sum(sizes[:i]) for i in range(count)]
        rows = [buttons[a : a + size] for a, size in zip(starts, sizes, strict=True)]
        if all(max(label_width(b.text) for b in row) <= row_budget(len(row)) for row in rows):
            return rows
    return [[b] for b in buttons]


PRIVATE_MARK = "🔒"
"""The mark of *Private chat*: a player's hand in his private chat with the bot."""
LANGUAGE_NAMES = {"ru": "🇷🇺 Русский", "uk": "🇺🇦 Українська", "en": "🇬🇧 English"}


def language_keyboard() -> InlineKeyboardMarkup:
    buttons = [
        InlineKeyboardButton(
            text=LANGUAGE_NAMES[lang],
            callback_data=LangCb(lang=lang).pack(),  # type: ignore[arg-type]
        )
        for lang in LANGUAGES
    ]
    return InlineKeyboardMarkup(inline_keyboard=even_rows(buttons, 3))  # «Україн…» (#41)


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


def play_here_keyboard(solo_url: str, variant: str, _: Translator) -> InlineKeyboardMarkup:
    """/play in a group: a game against the AI in the private chat (``solo_url``),
    or a lobby of ``variant`` in this group."""
    lobby = NewLobbyCb(variant=variant).pack()  # type: ignore[arg-type]
    return InlineKeyboardMarkup(
        inline_keyboard=[
            [InlineKeyboardButton(text="🤖 " + _(PLAY_SOLO), url=solo_url)],
            [InlineKeyboardButton(text="🃏 " + _(OPEN_LOBBY), callback_data=lobby)],
        ]
    )


def play_screen(last: tuple[str, str] | None, _: Translator) -> Screen:
    """``/play`` in the private chat (#41: it offered no level): a button for
    each game and AI level, each starting that game at once; each game's name
    heads its row of levels (a button that cannot be pressed).  ``last`` (his
    last game and level) comes first, the most prominent: a returning player is
    one tap away."""
    rows: list[list[InlineKeyboardButton]] = []
    if last is not None:
        variant, level = last
        label = _(PLAY_AGAIN, game=_(VARIANT_SHORT[variant]), level=_(LEVEL_TITLES[level]))
        data = PlayCb(variant=variant, level=level).pack()  # type: ignore[arg-type]
        rows.append([InlineKeyboardButton(text="▶ " + label, callback_data=data, style="primary")])
    for variant, title in VARIANT_TITLES.items():
        rows.append([InlineKeyboardButton(text=_(title), disabled=DisabledButton())])
        levels = [
            InlineKeyboardButton(
                text=_(name),
                callback_data=PlayCb(variant=variant, level=level).pack(),  # type: ignore[arg-type]
            )
            for level, name in LEVEL_TITLES.items()
        ]
        rows += even_rows(levels, 3)
    return _(PLAY_CHOOSE), InlineKeyboardMarkup(inline_keyboard=rows)


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
