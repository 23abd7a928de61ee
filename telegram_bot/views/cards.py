"""Cards as the bot shows them: suits in emoji presentation (♠️ ♥️ ♦️ ♣️: the
variation selector U+FE0F makes clients draw ♥️ ♦️ red, not as black text
glyphs), 🃏 for a joker, 🎴 before a count of cards held (the card back 🂠 draws as
a black block on Android); a hand sorted by
suit then rank with trumps (then jokers) last, identical cards of multi-deck games
grouped (``7♠×2``).  Cards arrive in the engine's notation (``10H``, ``JK``); the
face ranks are shown as the reader's language names them: В/Д/К/Т in Russian and
Ukrainian (валет, дама, король, туз), J/Q/K/A in English."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from engine.cards import RANKS, SUIT_GLYPHS

JOKER_GLYPH = "🃏"
CARDS_HELD = "🎴"
"""Before a number of cards held, hidden (``Anna: 🎴6``)."""
SUIT_EMOJI = {suit: glyph + "\ufe0f" for suit, glyph in SUIT_GLYPHS.items()}
FACE_RANKS: dict[str, dict[str, str]] = {
    "ru": {"J": "В", "Q": "Д", "K": "К", "A": "Т"},
    "uk": {"J": "В", "Q": "Д", "K": "К", "A": "Т"},
}
"""Face ranks by language (issue 13); a language not listed keeps J/Q/K/A."""
SUIT_ORDER = ("C", "D", "H", "S")
"""Suits left to right (C3 order, lowest first); the trump suit moves to the end."""


def rank_label(rank: str, locale: str) -> str:
    """``Q`` -> ``Д`` in ru and uk, ``Q`` in en; number ranks as they are."""
    return FACE_RANKS.get(locale, {}).get(rank, rank)


def glyph(card: str, locale: str) -> str:
    """``10H`` -> ``10♥️``, ``QS`` -> ``Д♠️`` (ru) or ``Q♠️`` (en), ``JK`` -> ``🃏``."""
    if card == "JK":
        return JOKER_GLYPH
    return rank_label(card[:-1], locale) + SUIT_EMOJI[card[-1]]


def glyphs(cards: Iterable[str], locale: str, sep: str = " ") -> str:
    return sep.join(glyph(c, locale) for c in cards)


def suit_glyph(suit: str) -> str:
    """``H`` -> ``♥️``."""
    return SUIT_EMOJI[suit]


def sort_key(card: str, trump: str | None) -> tuple[int, int, int]:
    """Plain suits first (♣ ♦ ♥ ♠), then the trump suit, then jokers; rank inside."""
    if card == "JK":
        return (2, 0, 0)
    suit = card[-1]
    return (1 if suit == trump else 0, SUIT_ORDER.index(suit), RANKS.index(card[:-1]))


def sorted_hand(cards: Iterable[str], trump: str | None) -> list[str]:
    return sorted(cards, key=lambda c: sort_key(c, trump))


def group_hand(cards: Iterable[str], trump: str | None) -> list[tuple[str, int]]:
    """Distinct cards in display order with how many of each the hand holds."""
    counts = Counter(cards)
    return [(c, counts[c]) for c in sorted_hand(counts, trump)]


def card_label(card: str, locale: str, count: int = 1) -> str:
    """``7♠`` or ``7♠×2`` for two identical cards."""
    return glyph(card, locale) + (f"×{count}" if count > 1 else "")
