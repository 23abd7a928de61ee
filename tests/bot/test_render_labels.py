"""Button labels (#29): none wider than a phone shows whole (the width model of
:mod:`telegram_bot.views.keyboards`), in any language, on any keyboard the bot
draws; and /help names every symbol a hand's keyboard shows without words."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from aiogram.types import InlineKeyboardMarkup

import engine
from engine.cards import SUIT_GLYPHS
from telegram_bot.buttons.moves import Selection, card_moves
from telegram_bot.views.cards import FACE_RANKS, JOKER_GLYPH
from telegram_bot.views.hand import render_hand
from telegram_bot.views.i18n import LANGUAGES, help_text
from telegram_bot.views.keyboards import label_width, row_budget
from telegram_bot.views.lobby import render_invite, render_lobby, settings_keyboard
from telegram_bot.views.table import render_game_over, render_table
from tests.bot.test_render import GID, NAMES, FakeLobby, FakeSeat, random_game

GAMES = [
    ("chuvash", 3, None),
    ("chuvash", 6, None),
    ("shchelkovsky", 2, {"decks": 2}),
    ("shchelkovsky", 4, {"decks": 4, "remove_joker": False}),
]


def hand_keyboards(seed: int) -> Iterator[tuple[str, InlineKeyboardMarkup]]:
    """The keyboards of every seat's hand along random games, in every language,
    with cards toggled and with the choices of one card open."""
    rng = random.Random(seed)
    for variant, players, options in GAMES:
        for i, g in enumerate(random_game(variant, players, rng.randrange(10**6), options, 300)):
            for seat in range(players):
                locale = LANGUAGES[(i + seat) % 3]
                view = engine.view(g, seat)
                sels = [Selection()]
                if view["hand"]:
                    card = rng.choice(view["hand"])
                    sels.append(Selection(cards=(card,)))
                    if len(card_moves(view, card)) > 1:
                        sels.append(Selection(choose=card))
                for sel in sels:
                    _text, kb = render_hand(
                        view, locale=locale, names=NAMES, game_id=GID, version=1, selection=sel
                    )
                    yield locale, kb


def lobby_keyboards() -> Iterator[tuple[str, InlineKeyboardMarkup]]:
    for locale in LANGUAGES:
        for variant, options in [("chuvash", {}), ("shchelkovsky", {"decks": 2})]:
            base = FakeLobby(variant=variant, options=options)
            for lobby in [
                base,
                replace(base, timer=0, max_seats=6, ai_kind="search"),
                replace(base, timer=120, ai_kind="random", seats=(FakeSeat(1, "Ann"),)),
            ]:
                yield locale, settings_keyboard(lobby, locale=locale)
                yield locale, render_lobby(lobby, locale=locale, bot_username="durak_bot")[1]
                yield locale, render_invite(lobby, locale=locale, bot_username="durak_bot")[1]


def table_keyboards() -> Iterator[tuple[str, InlineKeyboardMarkup | None]]:
    g = engine.new_game("chuvash", 3, seed=1)
    for locale in LANGUAGES:
        pv = engine.public_view(g)
        yield locale, render_table(pv, locale=locale, names=NAMES, bot_username="b", code="c")[1]
        yield locale, render_game_over(pv, locale=locale, names=NAMES, code="c")[1]


def too_wide(locale: str, kb: InlineKeyboardMarkup | None) -> list[Any]:
    rows = kb.inline_keyboard if kb is not None else []
    return [
        (locale, b.text, len(row), label_width(b.text))
        for row in rows
        for b in row
        if label_width(b.text) > row_budget(len(row))
    ]


def test_the_width_model() -> None:
    """The budget the tests hold labels to: 41 letters alone, 19 of two, 12 of
    three, 5 of six; an emoji counts two, its variation selector nothing."""
    assert [row_budget(n) for n in (1, 2, 3, 4, 5, 6)] == [41, 19, 12, 9, 7, 5]
    assert label_width("Take") == 4
    assert label_width("•10♥️") == 5
    assert label_width("✓ 👀 spectators") == 15
    assert label_width("▶ Сыграть (2)") == 14  # ▶ is drawn as an emoji by Telegram


def test_no_label_of_a_lobby_or_table_is_cut_on_a_phone() -> None:
    """«✓ nor…», «✓ 👀 spect…» (#29)."""
    cut = [
        w for locale, kb in [*lobby_keyboards(), *table_keyboards()] for w in too_wide(locale, kb)
    ]
    assert cut == []


@pytest.mark.slow
def test_no_label_of_a_hand_is_cut_on_a_phone() -> None:
    seed = random.randrange(10**6)
    print("seed", seed)
    cut: set[Any] = set()
    for locale, kb in hand_keyboards(seed):
        cut.update(too_wide(locale, kb))
    assert sorted(cut) == []


CARD = re.compile(
    "(?:10|[2-9JQKA" + "".join(FACE_RANKS["ru"].values()) + "])"
    "[" + "".join(SUIT_GLYPHS.values()) + "]\ufe0f?(?:×\\d+)?|" + JOKER_GLYPH
)
WORDLESS_OK = {
    "→": "between two cards: «6♣️→8♣️», this one covered by that one",
    "◀": "a page of a huge hand: ◀ 1/3 ▶",
}


def symbols(label: str) -> set[str]:
    """The marks of a label with no words: what is left without its cards,
    digits, spaces and the variation selector."""
    rest = CARD.sub("", label)
    if re.search(r"[^\W\d_]", rest):  # words say what it does
        return set()
    return {c for c in rest if not c.isdigit() and c not in " /()\ufe0f×"}


@pytest.mark.slow
@pytest.mark.parametrize("locale", LANGUAGES)
def test_help_names_every_symbol_a_hand_shows_without_words(locale: str) -> None:
    """«↪ 4♥️», «🎫 4♠️»: /help explained ✓ and ⏭ but not these (#29)."""
    seed = random.randrange(10**6)
    print("seed", seed)
    shown: set[str] = set()
    for _locale, kb in hand_keyboards(seed):
        for row in kb.inline_keyboard:
            for b in row:
                shown |= symbols(b.text)
    assert {"•", "✓", "↪", "🎫"} <= shown  # the sample reached them
    for group in (False, True):
        text = help_text(locale, group=group)
        missing = {s for s in shown - set(WORDLESS_OK) if s not in text}
        assert missing == set(), (group, missing)
