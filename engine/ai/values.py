"""What a card is worth to the heuristic player, per variant (C4, S4).

Chuvash: how many cards it beats plus how hard it is to beat, so aces and high
spades are precious.  Shchelkovsky: rank, trumps above all plain cards, jokers on
top and 2s raised while jokers may still be out (a 2 beats a joker, S4).
"""

from __future__ import annotations

from functools import cache

from engine.cards import JOKER, NCARDS, rank_of, suit_of
from engine.variants import beaters


@cache
def chuvash_values() -> tuple[float, ...]:
    """C4 value: cards it beats (defence) + half the cards that cannot beat it (attack)."""
    beat = beaters("chuvash", None)
    deck = [c for c in range(NCARDS - 1) if rank_of(c) >= 4]
    values = [0.0] * NCARDS
    for c in deck:
        beats = sum(1 for y in deck if beat[y] >> c & 1)
        beaten_by = sum(1 for x in deck if beat[c] >> x & 1)
        values[c] = beats + 0.5 * (35 - beaten_by)
    return tuple(values)


@cache
def shchelkovsky_values(trump: int | None, jokers_out: bool) -> tuple[float, ...]:
    """S4 value: plain cards by rank (0..12), trumps 14..26, jokers 32; a 2 is worth
    a middling card while a joker may still come at us (only a 2 or a joker beats a
    joker)."""
    values = [0.0] * NCARDS
    for c in range(NCARDS - 1):
        r = rank_of(c)
        v = float(r)
        if r == 0 and jokers_out:
            v = 7.0
        if trump is not None and suit_of(c) == trump:
            v += 14.0
        values[c] = v
    values[JOKER] = 32.0
    return tuple(values)


# chuvash: A♣ (8 + 16.5) upwards and 10♠ (.. + ..) upwards count as precious.
CHUVASH_PRECIOUS = 24.0
SHCH_PRECIOUS = 14.0  # any trump, any joker
