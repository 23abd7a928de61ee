"""Catalogs: every text of the code in all three catalogs, nothing untranslated
in ru/uk, placeholders kept, compiled catalogs up to date; language choice."""

from __future__ import annotations

import gettext
import re
import shutil
from pathlib import Path
from typing import Any, cast

import aiogram
import pytest
from aiogram.types import BotCommand
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.pofile import read_po

import telegram_bot
from telegram_bot.app.menus import set_commands
from telegram_bot.views import i18n, texts
from telegram_bot.views.i18n import (
    COMMANDS,
    GROUP_COMMANDS,
    LANGUAGES,
    LOCALES_DIR,
    PRIVATE_COMMANDS,
    RULES,
    CatalogError,
    bot_commands,
    help_text,
    load_i18n,
    pick_language,
    rules_message,
    rules_text,
)

PACKAGE = Path(telegram_bot.__file__).parent
PLACEHOLDER = re.compile(r"\{(\w+)\}")


def code_msgids() -> set[str]:
    ids: set[str] = set()
    for path in sorted(PACKAGE.rglob("*.py")):  # handlers/ and usecases/ too
        for _lineno, message, _comments, _context in extract_from_file(
            "python", str(path), keywords={"_": None, "N_": None}
        ):
            assert isinstance(message, str), f"{path}: plural or odd message {message!r}"
            ids.add(message)
    return ids


def catalog(lang: str) -> Catalog:
    with (LOCALES_DIR / lang / "LC_MESSAGES" / "messages.po").open("rb") as f:
        return read_po(f, locale=lang)


def test_code_and_catalogs_hold_the_same_msgids() -> None:
    ids = code_msgids()
    assert len(ids) > 50
    for lang in LANGUAGES:
        have = {m.id for m in catalog(lang) if m.id}
        assert ids - have == set(), f"{lang}: missing (pybabel extract + update)"
        assert have - ids == set(), f"{lang}: obsolete entries"


@pytest.mark.parametrize("lang", ["ru", "uk"])
def test_translations_complete_and_keep_placeholders(lang: str) -> None:
    for m in catalog(lang):
        if not m.id:
            continue
        assert m.string, f"{lang}: untranslated {m.id!r}"
        assert not m.fuzzy, f"{lang}: fuzzy {m.id!r}"
        assert isinstance(m.id, str), f"{lang}: plural or odd message {m.id!r}"
        assert isinstance(m.string, str), f"{lang}: plural or odd message {m.id!r}"
        assert sorted(PLACEHOLDER.findall(m.string)) == sorted(PLACEHOLDER.findall(m.id)), m.id
        assert m.string.count("<b>") == m.string.count("</b>") == m.id.count("<b>")


NAMES = ("name", "names", "a", "b")
"""Placeholders that a player's name fills: it cannot be declined."""
GOVERNS_A_CASE = {
    "ru": ("для", "у", "от", "к", "с", "со", "без", "про", "о", "об", "при"),
    "uk": ("для", "у", "в", "від", "до", "з", "із", "зі", "без", "про", "при"),
}
"""Prepositions after which a Russian or Ukrainian noun changes its ending."""


@pytest.mark.parametrize("lang", ["ru", "uk"])
def test_no_name_follows_a_preposition_it_cannot_decline_for(lang: str) -> None:
    """#41: «Для Иван, Ольга пока без рейтинга» -- a name put where the grammar
    wants «Ивана» reads as broken Russian; a noun carries the case instead
    («игроку {name}») or the name stands alone («новые игроки: {names}»)."""
    words = "|".join(GOVERNS_A_CASE[lang])
    names = "|".join(NAMES)
    bare = re.compile(rf"(?<!\w)({words})\s+\{{({names})\}}", re.IGNORECASE)
    for m in catalog(lang):
        if m.id and isinstance(m.string, str):
            assert not bare.search(m.string), f"{lang}: {m.string!r}"


def test_compiled_catalogs_are_up_to_date() -> None:
    for lang in ("ru", "uk"):
        mo = LOCALES_DIR / lang / "LC_MESSAGES" / "messages.mo"
        assert mo.is_file(), i18n.COMPILE_HINT
        with mo.open("rb") as f:
            compiled = gettext.GNUTranslations(f)
        for m in catalog(lang):
            if m.id:
                assert isinstance(m.id, str), f"{lang}: plural or odd message {m.id!r}"
                assert compiled.gettext(m.id) == m.string, f"stale {mo}: {i18n.COMPILE_HINT}"


def test_missing_mo_fails_loudly_with_a_hint(tmp_path: Path) -> None:
    for lang in LANGUAGES:
        shutil.copytree(LOCALES_DIR / lang, tmp_path / lang)
    (tmp_path / "uk" / "LC_MESSAGES" / "messages.mo").unlink()
    with pytest.raises(CatalogError, match="pybabel compile"):
        load_i18n(tmp_path)


def test_translates_per_locale() -> None:
    assert i18n.Translator("ru")("Take") == "Беру"
    assert i18n.Translator("uk")("Take") == "Беру"
    assert i18n.Translator("en")("Take") == "Take"
    assert i18n.Translator("xx")("Take") == "Take"
    assert i18n.Translator("ru")("stock: {n}", n=5) == "в колоде: 5"


@pytest.mark.parametrize(
    ("code", "lang"),
    [
        ("ru", "ru"),
        ("uk", "uk"),
        ("uk-UA", "uk"),
        ("en", "en"),
        ("en-GB", "en"),
        ("be", "ru"),
        ("kk", "ru"),
        ("de", "en"),
        ("pt-br", "en"),
        ("RU", "ru"),
        (None, "en"),
        ("", "en"),
    ],
)
def test_pick_language(code: str | None, lang: str) -> None:
    assert pick_language(code) == lang


def test_rules_and_help_in_every_language() -> None:
    for lang in LANGUAGES:
        for variant in RULES:
            text = rules_text(variant, lang)
            assert 300 < len(text) <= 4096
            assert text.startswith("<b>")
        assert "/rules" in help_text(lang)
    assert "♠" in rules_text("chuvash", "ru")
    assert "петух" in rules_text("chuvash", "ru")
    assert "10" in rules_text("shchelkovsky", "uk")
    assert "проїзний" in rules_text("shchelkovsky", "uk")
    assert "C4" not in rules_text("chuvash", "en")


def test_bot_commands_per_language() -> None:
    names = [c for c, _ in COMMANDS]
    assert names == [
        "start",
        "new",
        "play",
        "rules",
        "stats",
        "top",
        "rating",  # #25
        "arena",  # #27
        "replay",
        "leave",
        "lang",
        "help",
    ]
    for lang in LANGUAGES:
        cmds = bot_commands(lang)
        assert [c.command for c in cmds] == names
        assert all(0 < len(c.description) <= 256 for c in cmds)
    assert bot_commands("ru")[3].description == "Правила обеих игр"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_rules_message_is_one_message_of_expandable_quotes(lang: str) -> None:
    """/rules (issue 13): a summary, then each game's rules in an expandable block
    quote, within Telegram's 4096 characters (counted without the tags)."""
    text = rules_message(lang)
    assert text.count("<blockquote expandable>") == len(RULES)
    shown = re.sub(r"<[^>]+>", "", text)
    assert len(shown) <= 4096
    assert rules_message(lang, "chuvash") == rules_text("chuvash", lang)


def test_face_ranks_in_the_readers_language() -> None:
    from telegram_bot.views.cards import glyph

    assert [glyph(c, "ru") for c in ("JS", "QH", "KD", "AC", "10S")] == [
        "В♠️", "Д♥️", "К♦️", "Т♣️", "10♠️"
    ]  # fmt: skip
    assert glyph("QH", "uk") == "Д♥️"
    assert glyph("QH", "en") == "Q♥️"
    assert glyph("JK", "ru") == "🃏"


SLASH = re.compile(r"(?<![\w/])/([a-z]+)\b")
GROUP_ONLY_NAMED = {"top", "arena"}
"""Group commands the private /help names too, saying they work in a group (#41)."""


def named(text: str) -> set[str]:
    """The commands a text names (its HTML tags left out)."""
    return set(SLASH.findall(re.sub(r"<[^>]+>", "", text)))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_help_explains_every_command_of_its_menu_and_no_other(lang: str) -> None:
    """#41: /help listed neither /rating nor /leave, the group's not /rating.  Each
    chat's /help names every command of that chat's menu (but /start, the
    welcome that carries it, and /help, itself), and none the menu lacks -- but
    the private one points to /top and /arena, a group's."""
    private = {c.command for c in bot_commands(lang, PRIVATE_COMMANDS)} - {"start", "help"}
    group = {c.command for c in bot_commands(lang, GROUP_COMMANDS)} - {"help"}
    assert named(help_text(lang)) == private | GROUP_ONLY_NAMED
    assert group - private >= GROUP_ONLY_NAMED
    assert named(help_text(lang, group=True)) == group


def sentences(text: str) -> list[str]:
    plain = re.sub(r"<[^>]+>", "", text)
    parts = re.split(r"[.;!?\n]+", plain)
    return [re.sub(r"[•\s]+", " ", p).strip().lower() for p in parts if p.strip(" •")]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_welcome_says_nothing_twice(lang: str) -> None:
    """#41: the welcome's «/play …» and «/new …» sentences came twice (its own
    lines, then /help's): the welcome names no command, /help after it does."""
    _ = i18n.Translator(lang)
    welcome = _(texts.WELCOME) + "\n\n" + help_text(lang)
    said = sentences(welcome)
    assert len(said) == len(set(said)), said
    leads = [p.split()[0] for p in said if p.startswith("/")]
    assert len(leads) == len(set(leads)), said  # no «/play starts…» twice
    assert named(_(texts.WELCOME)) == set()


async def test_set_my_commands_sends_each_scope_its_own_menu() -> None:
    """#41: the menus the bot publishes at start-up, per scope and language: a
    private chat's with /play, /rating and /replay, a group's with /new, /top
    and /arena -- each explained by that chat's /help (above)."""
    calls: list[tuple[str, str | None, list[str]]] = []

    class Bot:
        async def set_my_commands(
            self, commands: list[BotCommand], scope: Any, language_code: str | None = None
        ) -> bool:
            calls.append((scope.type, language_code, [c.command for c in commands]))
            return True

    await set_commands(cast(aiogram.Bot, Bot()))
    menus = {(scope, lang): names for scope, lang, names in calls}
    assert len(menus) == len(calls)
    for lang in (*LANGUAGES, None):
        private = menus["all_private_chats", lang]
        group = menus["all_group_chats", lang]
        assert {"play", "rating", "replay"} <= set(private)
        assert not {"top", "arena"} & set(private)
        assert {"new", "top", "arena", "rating"} <= set(group)
        assert not {"play", "replay", "start"} & set(group)
    assert menus["default", None] == menus["all_private_chats", None]
