"""Small text pieces shared by the messages: player names (HTML-escaped), roles,
the last moves in words.  Texts go out with ``parse_mode="HTML"``: every text a
user chose (a name) goes into one through :func:`user_text` only."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from aiogram.utils.text_decorations import html_decoration

from telegram_bot.views.cards import glyph, glyphs
from telegram_bot.views.i18n import LOSER_TITLES, N_, Translator

MAX_NAME = 32

ROLE_LABELS: dict[str, str] = {
    "attacker": N_("attacking"),
    "defender": N_("defending"),
    "thrower": N_("throwing in"),
    "out": N_("out"),
}


def short_name(raw: str) -> str:
    """A name as messages show it: at most ``MAX_NAME`` characters."""
    return raw[: MAX_NAME - 1] + "…" if len(raw) > MAX_NAME else raw


_AI_NAME = re.compile(r"AI (\d+)")
"""The name the service gives an AI seat (``AI 2``), shown in the reader's words."""


def ai_name(raw: str, _: Translator) -> str:
    """An AI seat's name: ``AI 2`` -> «Компьютер 2» (ru); a name an operator chose
    stays as it is."""
    m = _AI_NAME.fullmatch(raw)
    return _("AI {n}", n=m.group(1)) if m else raw


BIDI_ISOLATE = ("\u2068", "\u2069")  # FIRST STRONG ISOLATE ... POP DIRECTIONAL ISOLATE
_DIRECTIONAL = frozenset(
    {"R", "AL", "AN", "LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"}
)
"""Bidi classes that can change the direction of the text around them: a right-to-left
letter or number, or an explicit embedding, override or isolate control."""


def isolated(text: str) -> str:
    """``text`` as an island of its own direction (Unicode bidi isolates): a name
    with U+202E (RIGHT-TO-LEFT OVERRIDE), or in Hebrew or Arabic, cannot reorder
    the rest of its line -- the isolate ends every embedding and override begun
    inside it.  Text without such characters is returned as it is."""
    if any(unicodedata.bidirectional(c) in _DIRECTIONAL for c in text):
        return BIDI_ISOLATE[0] + text + BIDI_ISOLATE[1]
    return text


def user_text(raw: str) -> str:
    """A name (or any text a user chose) for an HTML message: shortened, its
    ``<``, ``>`` and ``&`` escaped, so Telegram shows it literally, and isolated
    (:func:`isolated`), so it cannot reorder the text around it."""
    return isolated(html_decoration.quote(short_name(raw)))


def name_of(names: Sequence[str], seat: int, _: Translator) -> str:
    """The seat's player name, shortened and HTML-escaped."""
    raw = names[seat] if 0 <= seat < len(names) and names[seat] else ""
    if not raw:
        return _("Seat {n}", n=seat + 1)
    return user_text(raw)


def role_label(view: Mapping[str, Any], seat: int, _: Translator) -> str:
    """``defending, takes`` / ``throwing in, passed`` / ``out (1st place)`` ..."""
    role = view["roles"][seat]
    parts = []
    if role == "out" and seat in view["out"]:
        parts.append(_("out, place {place}", place=view["out"].index(seat) + 1))
    elif role == "loser":  # «дурак», not «в проигрыше» (#29)
        parts.append(_(LOSER_TITLES.get(view["variant"], LOSER_TITLES["shchelkovsky"])))
    elif role in ROLE_LABELS:
        parts.append(_(ROLE_LABELS[role]))
    if role == "defender" and view.get("taking"):
        parts.append(_("takes"))
    if seat in view.get("passed", ()):
        parts.append(_("passed"))
    return ", ".join(parts)


def action_line(detail: str, who: str, cards: list[str], _: Translator) -> str | None:
    """A player's move (``detail``: lead, cover, throw, ...) in words."""
    if detail == "lead":
        return _("{name} leads {cards}", name=who, cards=glyphs(cards, _.locale))
    if detail == "cover":
        return _(
            "{name} covers {attack} with {card}",
            name=who,
            attack=glyph(cards[0], _.locale),
            card=glyph(cards[1], _.locale),
        )
    if detail == "throw":
        return _("{name} throws in {cards}", name=who, cards=glyphs(cards, _.locale))
    if detail == "transfer":
        return _("{name} transfers with {card}", name=who, card=glyph(cards[0], _.locale))
    if detail == "show_trump":
        return _("{name} shows the pass-ticket {card}", name=who, card=glyph(cards[0], _.locale))
    if detail == "take":
        return _("{name} takes", name=who)
    if detail == "pass":
        return _("{name} passes", name=who)
    return None


def event_line(
    event: Mapping[str, Any], view: Mapping[str, Any], names: Sequence[str], _: Translator
) -> str | None:
    """One public event in words; ``None`` for events not worth a line (draws of
    other players)."""
    kind, seat = event["kind"], event["seat"]
    who = name_of(names, seat, _) if seat >= 0 else ""
    cards: list[str] = event.get("cards", [])
    if kind == "action":
        return action_line(event["detail"], who, cards, _)
    if kind == "bout_end":
        if event["detail"] == "taken":
            return _("{name} picks up the cards ({n})", name=who, n=len(cards))
        return _("Beaten off ({n} to the discard)", n=len(cards))
    if kind == "draw":
        if seat == view.get("seat") and cards:  # in the third person, as his moves (#29)
            return _("{name} draws {cards}", name=who, cards=glyphs(cards, _.locale))
        return None
    if kind == "out":
        return _("{name} is out, place {place}", name=who, place=event["detail"])
    if kind == "game_over":
        if event["detail"] == "draw":
            return _("The game is a draw")
        title = _(LOSER_TITLES.get(view["variant"], LOSER_TITLES["shchelkovsky"]))
        return _("{name} is {title}", name=who, title=title)
    return None


def history_lines(
    view: Mapping[str, Any], names: Sequence[str], _: Translator, last: int
) -> list[str]:
    """The last ``last`` public events in words, oldest first; passes in a row are
    one line (seats pass by themselves, several at once: issue 13)."""
    lines: list[str] = []
    passers: list[str] = []
    for e in view.get("events", ()):
        if e["kind"] == "action" and e["detail"] == "pass":
            passers.append(name_of(names, e["seat"], _))
            continue
        if passers:
            lines.append(_passes_line(passers, _))
            passers = []
        line = event_line(e, view, names, _)
        if line is not None:
            lines.append(line)
    if passers:
        lines.append(_passes_line(passers, _))
    return lines[-last:] if last > 0 else []


def _passes_line(passers: list[str], _: Translator) -> str:
    if len(passers) == 1:
        return _("{name} passes", name=passers[0])
    return _("Pass: {names}", names=", ".join(passers))


def bold(text: str) -> str:
    """``<b>text</b>`` (``text`` is already HTML: a translation or escaped name)."""
    return f"<b>{text}</b>"
