"""The two games as a registry of variants (python-chess ``find_variant`` style).

A :class:`Variant` is the fixed part of a game (OpenSpiel's *Game*): its deck, its
player range, its validated options and its beating relation.  Everything that
changes during play lives in :class:`engine.state.GameState`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from engine.cards import JOKER, NCARDS, Card, rank_of, suit_of
from engine.errors import OptionsError

HAND_SIZE = 6
"""Both games deal 6 cards and draw up to 6 (C2, S2, RULES §0 drawing)."""

SHCH_THROW_CAP = 10
"""S10: at most ten thrown-in cards per bout."""


@dataclass(frozen=True)
class Options:
    """Validated variant options. ``decks`` is 1 for chuvash (C1) and 2 or 4 for
    shchelkovsky (S1); ``remove_joker`` only exists for shchelkovsky (S1)."""

    decks: int = 1
    remove_joker: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"decks": self.decks, "remove_joker": self.remove_joker}


@dataclass(frozen=True)
class Variant:
    name: str
    title: str
    min_players: int
    max_players: int
    defaults: Options
    has_trump: bool
    lead_many_of_one_suit: bool  # C6 (chuvash) vs S6 (one card)
    transfers: bool  # S8
    throw_cap: int | None  # S10
    immediate_take_ends_bout: bool  # C8
    final_defender_draws_last: bool  # S13 (C13: clockwise from the first attacker)
    loser_title: str = field(default="")

    # -- options -----------------------------------------------------------------
    def options(self, raw: Mapping[str, Any] | Options | None = None) -> Options:
        """Validate ``raw`` (a JSON-like mapping) against this variant; raise
        :class:`OptionsError` with a precise reason for anything invalid."""
        if isinstance(raw, Options):
            raw = raw.to_json()
        raw = dict(raw or {})
        decks = raw.pop("decks", self.defaults.decks)
        remove_joker = raw.pop("remove_joker", self.defaults.remove_joker)
        if raw:
            raise OptionsError(
                "unknown_option", f"{self.name} has no option(s) {', '.join(sorted(raw))}"
            )
        if isinstance(decks, bool) or not isinstance(decks, int):
            raise OptionsError("bad_option", f"decks must be an integer, not {decks!r}")
        if not isinstance(remove_joker, bool):
            raise OptionsError(
                "bad_option", f"remove_joker must be true or false, not {remove_joker!r}"
            )
        if self.name == "chuvash":
            if decks != 1:
                raise OptionsError("bad_option", "chuvash is played with one 36-card deck (C1)")
            if remove_joker:
                raise OptionsError("bad_option", "chuvash has no jokers (C1)")
        elif decks not in (2, 4):
            raise OptionsError(
                "bad_option", f"shchelkovsky is played with 2 or 4 decks, not {decks} (S1)"
            )
        return Options(decks=decks, remove_joker=remove_joker)

    def check_players(self, players: int) -> None:
        if isinstance(players, bool) or not isinstance(players, int):
            raise OptionsError("bad_players", f"player count must be an integer, not {players!r}")
        if not self.min_players <= players <= self.max_players:
            raise OptionsError(
                "bad_players",
                f"{self.name} is played by {self.min_players}–{self.max_players} players, not {players}",
            )

    # -- deck ----------------------------------------------------------------------
    def deck(self, options: Options) -> list[Card]:
        """The full deck in a fixed order (C1, S1)."""
        if self.name == "chuvash":
            return [c for c in range(NCARDS - 1) if rank_of(c) >= 4]  # ranks 6..A
        one = [*range(NCARDS - 1), JOKER, JOKER]
        cards = one * options.decks
        if options.remove_joker:
            cards.remove(JOKER)
        return cards

    # -- beating ---------------------------------------------------------------------
    def beats(self, card: Card, attack: Card, trump: int | None) -> bool:
        """Does ``card`` beat ``attack``?  C4 for chuvash, S4 for shchelkovsky."""
        return bool(beaters(self.name, trump)[attack] >> card & 1)


def _beats_chuvash(x: Card, y: Card) -> bool:
    # C4: same suit and higher rank, or higher suit (C3: S > H > D > C) and rank >= .
    sx, sy, rx, ry = suit_of(x), suit_of(y), rank_of(x), rank_of(y)
    return (sx == sy and rx > ry) or (sx > sy and rx >= ry)


def _beats_shchelkovsky(x: Card, y: Card, trump: int | None) -> bool:
    # S4 jokers: a joker beats any card but a 2; only a 2 or a joker beats a joker
    # (jokers beat each other: "identical cards never beat each other (a joker beats a joker)").
    if y == JOKER:
        return x == JOKER or rank_of(x) == 0
    if x == JOKER:
        return rank_of(y) != 0
    sx, sy, rx, ry = suit_of(x), suit_of(y), rank_of(x), rank_of(y)
    if sx == sy:
        return rx > ry  # higher of the same suit (also trump over lower trump)
    return trump is not None and sx == trump  # any trump beats any non-trump


@cache
def beaters(variant: str, trump: int | None) -> tuple[int, ...]:
    """``beaters(v, t)[attack]`` is the bitmask of every card that beats ``attack``.
    Precomputed once per (variant, trump): covering is then one AND with a hand."""
    table: list[int] = []
    for y in range(NCARDS):
        mask = 0
        for x in range(NCARDS):
            if variant == "chuvash":
                ok = x != JOKER and y != JOKER and _beats_chuvash(x, y)
            else:
                ok = _beats_shchelkovsky(x, y, trump)
            if ok:
                mask |= 1 << x
        table.append(mask)
    return tuple(table)


CHUVASH = Variant(
    name="chuvash",
    title="Chuvash Rooster",
    min_players=2,
    max_players=6,
    defaults=Options(decks=1, remove_joker=False),
    has_trump=False,
    lead_many_of_one_suit=True,
    transfers=False,
    throw_cap=None,
    immediate_take_ends_bout=True,
    final_defender_draws_last=False,
    loser_title="rooster",
)

SHCHELKOVSKY = Variant(
    name="shchelkovsky",
    title="Durak Shchelkovsky",
    min_players=2,
    max_players=10,
    defaults=Options(decks=2, remove_joker=True),
    has_trump=True,
    lead_many_of_one_suit=False,
    transfers=True,
    throw_cap=SHCH_THROW_CAP,
    immediate_take_ends_bout=False,
    final_defender_draws_last=True,
    loser_title="durak",
)

VARIANTS: dict[str, Variant] = {v.name: v for v in (CHUVASH, SHCHELKOVSKY)}


def find_variant(name: str) -> Variant:
    """The registered variant called ``name`` (``chuvash`` or ``shchelkovsky``)."""
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        raise OptionsError(
            "unknown_variant", f"unknown variant {name!r}; known: {', '.join(VARIANTS)}"
        ) from None
