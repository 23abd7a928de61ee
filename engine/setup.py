"""Starting a game: the seeded shuffle and deal, the trump reveal (S3) and the
first attacker (C5, S5).  Chance is an explicit input -- a seed -- so the same seed
always gives the same game."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine.cards import JOKER, NCARDS, Card, card_names, rank_of, suit_of
from engine.errors import OptionsError
from engine.fairness import DealStream
from engine.state import GameState
from engine.variants import HAND_SIZE, Options, Variant, find_variant

Lot = Callable[[Sequence[int]], int]
"""Draws one seat from several (RULES: "by lot"); given by the caller."""


def new_game(
    variant: str | Variant,
    players: int,
    seed: int | str,
    options: Mapping[str, Any] | Options | None = None,
    previous_loser: int | None = None,
) -> GameState:
    """A new game: shuffle with ``seed``, deal six each (C2, S2), reveal the trump
    (S3) and pick the first attacker (C5, S5; a later game of a match when
    ``previous_loser`` is given: the seat before him leads)."""
    v = variant if isinstance(variant, Variant) else find_variant(variant)
    v.check_players(players)
    opts = v.options(options)
    if previous_loser is not None and not 0 <= previous_loser < players:
        raise OptionsError("bad_players", f"previous loser {previous_loser} is not a seat")
    rng = DealStream(v.name, players, seed)  # the fair deal, engine/fairness.py
    deck = v.deck(opts)
    rng.shuffle(deck)
    hands = [deck[i * HAND_SIZE : (i + 1) * HAND_SIZE] for i in range(players)]
    stock = deck[players * HAND_SIZE :]  # top first
    trump = None
    if v.has_trump:
        stock, trump = reveal_trump(stock)
    return from_deal(
        v,
        opts,
        hands,
        stock,
        trump=trump,
        previous_loser=previous_loser,
        lot=rng.choice,
    )


def reveal_trump(stock_top_first: list[Card]) -> tuple[list[Card], int | None]:
    """S3: the top card is shown and put at the bottom, face up; its suit is trump.
    A joker goes into the middle of the stock instead and the next top card is shown."""
    stock = list(stock_top_first)
    if all(c == JOKER for c in stock):
        return stock, None
    while True:
        top = stock.pop(0)
        if top != JOKER:
            stock.append(top)
            return stock, suit_of(top)
        # S3: the joker goes into the middle -- at least below the next plain card,
        # so that a short stock cannot bring it back to the top for ever.
        plain = next(i for i, c in enumerate(stock) if c != JOKER)
        stock.insert(max(len(stock) // 2, plain + 1), top)


def from_deal(
    variant: str | Variant,
    options: Mapping[str, Any] | Options | None,
    hands: list[list[Card]],
    stock_top_first: list[Card],
    *,
    trump: int | None = None,
    first_attacker: int | None = None,
    previous_loser: int | None = None,
    lot: Lot | None = None,
) -> GameState:
    """A game from an explicit deal (scenario files, RULES §3).  ``trump`` defaults
    to the suit of the stock's last card (S3); the first attacker defaults to C5/S5."""
    v = variant if isinstance(variant, Variant) else find_variant(variant)
    v.check_players(len(hands))
    opts = v.options(options)
    n = len(hands)
    _check_cards(v, hands, stock_top_first)
    if v.has_trump and trump is None and stock_top_first:
        bottom = stock_top_first[-1]
        if bottom == JOKER:
            raise OptionsError("bad_deal", "the face-up trump card cannot be a joker (S3)")
        trump = suit_of(bottom)
    if not v.has_trump:
        trump = None
    if first_attacker is None:
        if previous_loser is not None:
            if not 0 <= previous_loser < n:
                raise OptionsError("bad_players", f"previous loser {previous_loser} is not a seat")
            first_attacker = (previous_loser - 1) % n  # C5/S5: "под проигравшего"
        elif v.has_trump:
            first_attacker = shchelkovsky_first_attacker(hands, trump, lot or _first)
        else:
            first_attacker = chuvash_first_attacker(hands)
    if not 0 <= first_attacker < n:
        raise OptionsError("bad_players", f"first attacker {first_attacker} is not a seat")
    return GameState(v, opts, hands, stock_top_first, trump, first_attacker)


def _check_cards(v: Variant, hands: list[list[Card]], stock: list[Card]) -> None:
    """C1 / S1: an explicit deal holds only cards that the variant's deck can hold,
    each at most as often as its largest deck does (options do not constrain an
    explicit deal, RULES §3)."""
    dealt = Counter(stock)
    for hand in hands:
        dealt.update(hand)
    largest = Counter(v.deck(Options(decks=4, remove_joker=False) if v.has_trump else v.defaults))
    extra = [c for c, k in dealt.items() if k > largest.get(c, 0)]
    if extra:
        bad = sorted(c for c in extra if isinstance(c, int) and 0 <= c < NCARDS)
        names = " ".join(card_names(bad)) if len(bad) == len(extra) else repr(extra)
        raise OptionsError(
            "bad_deal", f"the {v.name} deck cannot deal these cards (that often): {names}"
        )


def _first(seats: Sequence[int]) -> int:
    return seats[0]


def chuvash_first_attacker(hands: Sequence[Sequence[Card]]) -> int:
    """C5: the holder of the lowest card by (rank, suit order): 6♣, 6♦, 6♥, 6♠, 7♣, …
    Card indices are ordered exactly so."""
    best: tuple[Card, int] | None = None
    for seat, hand in enumerate(hands):
        if hand:
            low = min(hand)
            if best is None or low < best[0]:
                best = (low, seat)
    return best[1] if best else 0


def shchelkovsky_first_attacker(
    hands: Sequence[Sequence[Card]], trump: int | None, lot: Lot
) -> int:
    """S5: the holder of the lowest trump; ties (multi-deck) compare the next-lowest
    trumps, and so on; when that runs out a tied player holding a joker wins;
    otherwise lot.  Nobody holds a trump: the lowest non-joker card, ties by lot.

    [interp] "runs out": as soon as one tied player has no further trump to compare,
    the comparison stops and the joker rule decides among those still tied."""
    seats = list(range(len(hands)))
    trumps = {
        s: sorted(rank_of(c) for c in hands[s] if c != JOKER and suit_of(c) == trump) for s in seats
    }
    tied = [s for s in seats if trumps[s]]
    if tied:
        k = 0
        while len(tied) > 1:
            if any(len(trumps[s]) <= k for s in tied):
                break
            low = min(trumps[s][k] for s in tied)
            tied = [s for s in tied if trumps[s][k] == low]
            k += 1
        if len(tied) > 1:
            jokers = [s for s in tied if JOKER in hands[s]]
            if jokers:
                tied = jokers
        return tied[0] if len(tied) == 1 else lot(tied)
    lows = {s: min((c for c in hands[s] if c != JOKER), default=None) for s in seats}
    present = [low for low in lows.values() if low is not None]
    if not present:
        return lot(seats)
    low_rank = min(rank_of(c) for c in present)
    tied = [s for s, c in lows.items() if c is not None and rank_of(c) == low_rank]
    return tied[0] if len(tied) == 1 else lot(tied)
