"""Button labels (#29, #41): none wider than a phone shows whole (the width model
of :mod:`telegram_bot.views.keyboards`), in any language, on every keyboard the
bot draws -- each module that draws a button is listed here; and /help names
every symbol a hand's keyboard shows without words."""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup

import engine
import telegram_bot
from engine.ai import LEVELS
from engine.cards import SUIT_GLYPHS
from engine.replay import replay_step
from tables import OVER, PLAYING
from tables.arena_rules import RUNNING, Arena
from telegram_bot.buttons.moves import Selection, card_moves
from telegram_bot.views import texts
from telegram_bot.views.arena import cancel_markup
from telegram_bot.views.cards import FACE_RANKS, JOKER_GLYPH
from telegram_bot.views.hand import hand_screen, render_hand
from telegram_bot.views.i18n import LANGUAGES, Translator, help_text
from telegram_bot.views.keyboards import (
    label_width,
    language_keyboard,
    open_table_keyboard,
    play_here_keyboard,
    play_screen,
    row_budget,
    take_back_keyboard,
    url_keyboard,
)
from telegram_bot.views.lobby import render_invite, render_lobby, settings_keyboard
from telegram_bot.views.miniapp import MiniApp, open_table_screen
from telegram_bot.views.replay import render_replay, replay_label
from telegram_bot.views.table import render_game_over, render_table, table_screen, watch_screen
from tests.bot.test_render import GID, NAMES, FakeLobby, FakeSeat, random_game
from tests.bot.test_render_fair import snap
from tests.engine.test_records import played

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


ARENA = Arena(
    id="abcDEF12", chat=-5, creator=1, variant="chuvash", seats=3, starts=0, ends=60_000,
    status=RUNNING, players=(), games=0,
)  # fmt: skip


APP = MiniApp("https://durak.example.org/miniapp/", "table", "durak_bot")


def screen_keyboards() -> Iterator[tuple[str, InlineKeyboardMarkup | None]]:
    """Every other keyboard the bot draws (#41: «🔎 Check the…» under every result,
    «Україн…» in the language choice), in every language."""
    record, _final = played("shchelkovsky", 3, 11)
    record = {
        **record,
        "table": "T1",
        "game": 1,
        "seats": [[7, "Annabelle"], [None, "AI 1"], [8, "Bartholomew"]],
        "ai": [None, LEVELS["hard"], None],
        "result": {**record.get("result", {}), "at": 1_800_000_000_000},
    }
    for locale in LANGUAGES:
        _ = Translator(locale)
        yield locale, language_keyboard()
        yield locale, take_back_keyboard(GID, _(texts.TAKE_BACK))
        yield locale, open_table_keyboard(GID, _(texts.OPEN_TABLE))
        yield locale, url_keyboard("➕ " + _(texts.ADD_TO_GROUP), "https://t.me/b?startgroup=1")
        yield locale, url_keyboard("🔒 " + _(texts.OPEN_MY_CARDS), "https://t.me/b?start=c")
        yield locale, play_here_keyboard("https://t.me/b?start=c", "chuvash", _)
        for last in [None, *((v, lv) for v in ("chuvash", "shchelkovsky") for lv in LEVELS)]:
            yield locale, play_screen(last, _)[1]  # /play's choice, «▶ Again: …» (#41)
        yield locale, cancel_markup(ARENA, _)
        for status in (PLAYING, OVER):
            for chat in (-100, None):
                s = snap(status, chat=chat)
                s.ui = replace(s.ui, group_lang=locale)
                yield locale, table_screen(s, "durak_bot")[1]
                yield locale, watch_screen(s, locale)[1]
                # the Mini App's buttons (#42): a row each, under every one of them
                yield locale, table_screen(s, "durak_bot", app=APP)[1]
                yield locale, watch_screen(s, locale, APP)[1]
                for grouped in (False, True):
                    yield (
                        locale,
                        hand_screen(s, 0, locale, Selection(), app=APP, in_group=grouped)[1],
                    )
                for link in (None, "https://t.me/durak_bot?start=c"):
                    yield locale, hand_screen(s, 0, locale, Selection(), private_link=link)[1]
                taken = replace(s.table.seats[0], ai="heuristic")
                s.loaded = replace(s.loaded, table=s.table.with_seat(0, taken))
                yield locale, hand_screen(s, 0, locale, Selection())[1]
        yield locale, open_table_screen(APP, GID, _)[1]
        for step in (0, 5, 10**6):
            yield locale, render_replay(replay_step(record, step), locale=locale)[1]
        label = replay_label(record, _)
        yield locale, InlineKeyboardMarkup(inline_keyboard=[[InlineKeyboardButton(text=label)]])


def too_wide(locale: str, kb: InlineKeyboardMarkup | None) -> list[Any]:
    rows = kb.inline_keyboard if kb is not None else []
    return [
        (locale, b.text, len(row), label_width(b.text))
        for row in rows
        for b in row
        if label_width(b.text) > row_budget(len(row))
    ]


def test_the_width_model() -> None:
    """The budget the tests hold labels to (#41: a 280-px keyboard, 8.2 px a
    letter): 32 letters alone, 15 of two, 9 of three, 3 of six; an emoji counts
    two -- a flag too --, its variation selector nothing."""
    assert [row_budget(n) for n in (1, 2, 3, 4, 5, 6)] == [32, 15, 9, 6, 5, 3]
    assert label_width("Take") == 4
    assert label_width("•10♥️") == 5
    assert label_width("✓ 👀 spectators") == 15
    assert label_width("▶ Сыграть (2)") == 14  # ▶ is drawn as an emoji by Telegram
    assert label_width("🇺🇦 Українська") == 13  # a flag is one emoji: «Україн…» in three
    assert label_width("👨‍👩‍👧") == 2  # a joined sequence too
    assert label_width("🔎 Check the deal") > row_budget(2)  # «🔎 Check the…» (#41)


def test_no_label_of_a_lobby_or_table_is_cut_on_a_phone() -> None:
    """«✓ nor…», «✓ 👀 spect…» (#29)."""
    cut = [
        w for locale, kb in [*lobby_keyboards(), *table_keyboards()] for w in too_wide(locale, kb)
    ]
    assert cut == []


def test_no_label_of_any_other_screen_is_cut_on_a_phone() -> None:
    """«🔎 Check the…» on every result, «Україн…» in /lang (#41)."""
    cut = [w for locale, kb in screen_keyboards() for w in too_wide(locale, kb)]
    assert cut == []


DRAWN_HERE = {
    # the modules that draw a button, and the generator above that draws each
    "views/hand.py": "hand_keyboards, screen_keyboards",
    "views/lobby.py": "lobby_keyboards",
    "views/table.py": "table_keyboards, screen_keyboards",
    "views/fair.py": "screen_keyboards (a result's Replay and Check the deal, Watch)",
    "views/keyboards.py": "screen_keyboards",
    "views/replay.py": "screen_keyboards",
    "views/arena.py": "tests/bot/test_render_arena.py, screen_keyboards (cancel)",
    "handlers/replay.py": "screen_keyboards (replay_label, a row each)",
    "views/miniapp.py": "screen_keyboards (the Mini App's buttons, #42)",
}


def test_every_module_that_draws_a_button_is_measured() -> None:
    """A keyboard drawn in a module this test does not know is a keyboard no
    test measures (#41: the language choice, the result's row were not)."""
    root = Path(telegram_bot.__file__).parent
    drawing = {
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "InlineKeyboardButton(" in p.read_text(encoding="utf-8")
    }
    assert drawing == set(DRAWN_HERE)


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
