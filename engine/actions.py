"""Actions: one immutable record per move, with a short text form (for Telegram's
64-byte callback data, python-chess ``Move.uci()`` style) and the JSON form of the
scenario files (RULES §3).

Text form (the seat is not part of it: it comes from who pressed the button)::

    L6C7C8C   lead 6C 7C 8C          C6CKS   cover 6C with KS
    T7H7D     throw in 7H 7D         R7S     transfer with 7S   (S8)
    S7S       show 7S as pass-ticket (S8)
    K         take                   P       pass ("done" / «бито»)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from engine.cards import Card, CardError, card_name, card_names, parse_card, parse_card_run
from engine.errors import ActionFormatError

LEAD, COVER, THROW, TRANSFER, SHOW_TRUMP, TAKE, PASS = (
    "lead",
    "cover",
    "throw",
    "transfer",
    "show_trump",
    "take",
    "pass",
)
KINDS: tuple[str, ...] = (LEAD, COVER, THROW, TRANSFER, SHOW_TRUMP, TAKE, PASS)
_LETTER = {LEAD: "L", COVER: "C", THROW: "T", TRANSFER: "R", SHOW_TRUMP: "S", TAKE: "K", PASS: "P"}
_KIND = {v: k for k, v in _LETTER.items()}


class Action(NamedTuple):
    """One move by one seat.  ``cards`` are card indices; for ``cover`` it is the
    covering card and ``attack`` the covered one (``-1`` for other kinds)."""

    seat: int
    kind: str
    cards: tuple[Card, ...] = ()
    attack: Card = -1

    # -- constructors ---------------------------------------------------------------
    @classmethod
    def lead(cls, seat: int, *cards: Card) -> Action:
        return cls(seat, LEAD, tuple(cards))

    @classmethod
    def cover(cls, seat: int, attack: Card, card: Card) -> Action:
        return cls(seat, COVER, (card,), attack)

    @classmethod
    def throw(cls, seat: int, *cards: Card) -> Action:
        return cls(seat, THROW, tuple(cards))

    @classmethod
    def transfer(cls, seat: int, card: Card) -> Action:
        return cls(seat, TRANSFER, (card,))

    @classmethod
    def show_trump(cls, seat: int, card: Card) -> Action:
        return cls(seat, SHOW_TRUMP, (card,))

    @classmethod
    def take(cls, seat: int) -> Action:
        return cls(seat, TAKE)

    @classmethod
    def pass_(cls, seat: int) -> Action:
        return cls(seat, PASS)

    # -- text form --------------------------------------------------------------------
    def text(self) -> str:
        """The short text form (see the module docstring); at most 33 bytes for a
        legal action (ten thrown-in cards, S10)."""
        if self.kind == COVER:
            return "C" + card_name(self.attack) + card_name(self.cards[0])
        return _LETTER[self.kind] + "".join(card_names(self.cards))

    @classmethod
    def from_text(cls, seat: int, text: str) -> Action:
        if not text or text[0] not in _KIND:
            raise ActionFormatError("bad_action", f"not an action: {text!r}")
        kind = _KIND[text[0]]
        try:
            cards = parse_card_run(text[1:])
        except CardError as e:
            raise ActionFormatError("bad_action", f"not an action: {text!r} ({e})") from None
        return cls._build(seat, kind, cards, text)

    @classmethod
    def _build(cls, seat: int, kind: str, cards: list[Card], shown: str) -> Action:
        if kind in (TAKE, PASS):
            if cards:
                raise ActionFormatError("bad_action", f"{kind} takes no cards: {shown!r}")
            return cls(seat, kind)
        if kind == COVER:
            if len(cards) != 2:
                raise ActionFormatError(
                    "bad_action", f"cover needs an attack card and a card: {shown!r}"
                )
            return cls(seat, COVER, (cards[1],), cards[0])
        if kind in (TRANSFER, SHOW_TRUMP) and len(cards) != 1:
            raise ActionFormatError("bad_action", f"{kind} takes exactly one card: {shown!r}")
        if not cards:
            raise ActionFormatError("bad_action", f"{kind} needs at least one card: {shown!r}")
        return cls(seat, kind, tuple(cards))

    # -- JSON form (RULES §3) -------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seat": self.seat, "type": self.kind}
        if self.kind == COVER:
            out["attack"] = card_name(self.attack)
            out["card"] = card_name(self.cards[0])
        elif self.kind in (TRANSFER, SHOW_TRUMP):
            out["card"] = card_name(self.cards[0])
        elif self.kind in (LEAD, THROW):
            out["cards"] = card_names(self.cards)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Action:
        if not isinstance(data, Mapping):
            raise ActionFormatError("bad_action", f"an action is a JSON object, not {data!r}")
        seat = data.get("seat")
        kind = data.get("type")
        if isinstance(seat, bool) or not isinstance(seat, int):
            raise ActionFormatError("bad_action", f"action needs an integer 'seat': {dict(data)!r}")
        if kind not in _LETTER:
            raise ActionFormatError(
                "bad_action", f"unknown action type {kind!r}; known: {', '.join(KINDS)}"
            )
        try:
            if kind == COVER:
                cards = [parse_card(_str(data, "attack")), parse_card(_str(data, "card"))]
            elif kind in (TRANSFER, SHOW_TRUMP):
                cards = [parse_card(_str(data, "card"))]
            elif kind in (LEAD, THROW):
                raw = data.get("cards")
                if "card" in data and raw is None:
                    raw = [data["card"]]
                if not isinstance(raw, list) or not all(isinstance(c, str) for c in raw):
                    raise ActionFormatError(
                        "bad_action", f"{kind} needs 'cards': a list of card names"
                    )
                cards = [parse_card(c) for c in raw]
            else:
                cards = []
        except CardError as e:
            raise ActionFormatError("bad_card", str(e)) from None
        return cls._build(seat, kind, cards, repr(dict(data)))

    def __str__(self) -> str:
        return f"{self.seat}:{self.text()}"

    def describe(self) -> str:
        """Human readable, e.g. ``seat 1 covers 6C with KS``."""
        if self.kind == COVER:
            return (
                f"seat {self.seat} covers {card_name(self.attack)} with {card_name(self.cards[0])}"
            )
        names = " ".join(card_names(self.cards))
        verb = {
            LEAD: "leads",
            THROW: "throws in",
            TRANSFER: "transfers with",
            SHOW_TRUMP: "shows the pass-ticket",
            TAKE: "takes",
            PASS: "passes",
        }[self.kind]
        return f"seat {self.seat} {verb}" + (f" {names}" if names else "")


def _str(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    if not isinstance(value, str):
        raise ActionFormatError("bad_action", f"action needs '{key}': a card name")
    return value
