"""Cards in the notation of RULES §0: rank ``2..10 J Q K A`` + suit ``C D H S``; ``JK`` is a joker.

A card is a small ``int`` so that a hand can be a bitmask (python-chess style):
``card = rank_index * 4 + suit_index`` with ranks ``2..A`` -> ``0..12`` and suits
``C D H S`` -> ``0..3``; the joker is ``52``.  With this numbering the natural integer
order is "rank first, then suit in the C3 order ♣ < ♦ < ♥ < ♠", which is exactly the
C5 order for choosing the first attacker, and ``bit_length`` / lowest-bit tricks give
the lowest card of a hand at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

Card = int
"""A card index 0..52 (see module docstring)."""

RANKS: tuple[str, ...] = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUITS: tuple[str, ...] = ("C", "D", "H", "S")
SUIT_GLYPHS: dict[str, str] = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
JOKER: Card = 52
JOKER_RANK = 13
"""For throw-ins and transfers a joker counts as a rank of its own (RULES §0)."""
NCARDS = 53

_NAMES: list[str] = [r + s for r in RANKS for s in SUITS] + ["JK"]
_BY_NAME: dict[str, Card] = {name: i for i, name in enumerate(_NAMES)}


class CardError(ValueError):
    """A card name that is not in the notation of RULES §0."""


def card_name(card: Card) -> str:
    """``card_name(parse_card('10H')) == '10H'``."""
    return _NAMES[card]


def parse_card(text: str) -> Card:
    """Parse one card name (case-insensitive, surrounding blanks ignored)."""
    card = _BY_NAME.get(text.strip().upper())
    if card is None:
        raise CardError(f"not a card: {text!r} (expected e.g. 10H, AS, 6C or JK)")
    return card


def parse_cards(texts: Iterable[str]) -> list[Card]:
    return [parse_card(t) for t in texts]


def card_names(cards: Iterable[Card]) -> list[str]:
    return [_NAMES[c] for c in cards]


def rank_of(card: Card) -> int:
    """Rank index 0..12 (2..A); 13 for the joker."""
    return card >> 2


def rank_name(card: Card) -> str:
    """``10`` for 10H; ``JK`` for the joker (a rank of its own, RULES §0)."""
    return "JK" if card == JOKER else RANKS[card >> 2]


def suit_of(card: Card) -> int:
    """Suit index 0..3 (C D H S).  Meaningless for the joker (it has no suit, S4)."""
    return card & 3


def is_joker(card: Card) -> bool:
    return card == JOKER


def rank_mask(rank: int) -> int:
    """Bitmask of every card of ``rank`` (the joker 'rank' 13 gives the joker's bit)."""
    return 0xF << (rank * 4)


RANK_MASKS: tuple[int, ...] = tuple(rank_mask(c >> 2) for c in range(NCARDS))
"""``RANK_MASKS[card]``: the mask of every card sharing ``card``'s rank."""

SUIT_MASKS: tuple[int, ...] = tuple(sum(1 << (r * 4 + s) for r in range(13)) for s in range(4))


def iter_bits(mask: int) -> Iterator[Card]:
    """The cards of a presence mask, lowest first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def parse_card_run(text: str) -> list[Card]:
    """Parse cards written back to back, as in an action's text form (``6C10HJK``)."""
    cards: list[Card] = []
    i = 0
    up = text.upper()
    while i < len(up):
        if up.startswith("10", i) or up.startswith("JK", i):
            width = 3 if up.startswith("10", i) else 2
        else:
            width = 2
        cards.append(parse_card(up[i : i + width]))
        i += width
    return cards


def suit_index(letter: str) -> int:
    try:
        return SUITS.index(letter.strip().upper())
    except ValueError:
        raise CardError(f"not a suit: {letter!r} (expected C, D, H or S)") from None
