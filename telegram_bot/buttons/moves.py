"""What a button press means for one player, from his view alone (pure).

The hand message's keyboard shows cards and a few action buttons.  A card press is
turned into an engine action when its meaning is unambiguous (a one-card lead in
Shchelkovsky, a cover of the only attack that card beats, the only throw-in
possible, ...); otherwise it toggles the card into a multi-card selection (a
Chuvash lead of several cards of one suit, C6; several throw-ins at once, RULES §0)
or opens a choice between that card's moves (cover which attack, S8 transfer or
pass-ticket).  The selection lives server-side, per player, between presses.

:func:`resolve` maps ``(view, selection, press)`` to an :class:`Outcome`: an engine
action text to apply, a new selection to store and re-render, or an error (a msgid
of the catalogs, for a short alert).
"""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from engine import BOUT_PHASE, find_variant, parse_card
from engine.cards import card_names, parse_card_run
from telegram_bot.buttons.callbacks import Press

View = Mapping[str, Any]

# Why a press makes no move: a code; its words are views.texts.MOVE_REFUSALS.
ERR_NOT_YOUR_TURN = "not_your_turn"
ERR_NOT_IN_HAND = "not_in_hand"
ERR_CANNOT_PLAY = "cannot_play"
ERR_NOT_LEGAL = "not_legal"
ERR_BAD_SELECTION = "bad_selection"
ERR_DEFENDER_LIMIT = "defender_limit"
ERR_THROW_LIMIT = "throw_limit"


SEL_MOD = 100
"""A keyboard carries its selection's revision modulo this (two digits)."""

APPLIED_KEPT = 10
"""Writes of a selection whose request ids (and the cards each touched) it keeps
(:attr:`Selection.applied`): a copy of one of them is never applied again, and
a card press drawn that many writes back or fewer may still apply."""


@dataclass(frozen=True)
class Applied:
    """One write of a selection: the press (its request id) that made revision
    ``rev``, and the cards it touched -- whose count in the selection it changed,
    the card pressed, the card whose moves were or are offered."""

    request_id: str
    rev: int
    cards: tuple[str, ...] = ()

    def to_json(self) -> list[Any]:
        return [self.request_id, self.rev, list(self.cards)]

    @classmethod
    def from_json(cls, data: Any) -> Applied | None:
        if not isinstance(data, list) or len(data) != 3:
            return None
        rid, rev, cards = data
        if not isinstance(rid, str) or not isinstance(rev, int) or not isinstance(cards, list):
            return None
        return cls(rid, rev, tuple(c for c in cards if isinstance(c, str)))


@dataclass(frozen=True)
class Selection:
    """A player's pending input: toggled cards (a multiset, engine notation), the
    card whose moves are being offered (``choose``) and the hand page shown;
    ``rev`` counts its writes (each one compare-and-set on it), so a press drawn
    for another revision -- a toggle delivered twice -- is told apart;
    ``applied``: its last writes (#38), so a press is applied once whatever
    revision its copies come in at, and a quick tap of another card of an older
    keyboard still applies (:func:`drawn_for`).  Two selections are equal when
    they select the same (``applied`` is bookkeeping)."""

    cards: tuple[str, ...] = ()
    choose: str | None = None
    page: int = 0
    rev: int = 0
    applied: tuple[Applied, ...] = field(default=(), compare=False)

    @property
    def token(self) -> str:
        """The revision as a keyboard carries it (``GameCb.sel``)."""
        return str(self.rev % SEL_MOD)

    def has_applied(self, request_id: str) -> bool:
        """Did the press ``request_id`` make one of its last writes?"""
        return bool(request_id) and any(a.request_id == request_id for a in self.applied)

    def to_json(self) -> dict[str, Any]:
        return {
            "cards": list(self.cards),
            "choose": self.choose,
            "page": self.page,
            "rev": self.rev,
            "ap": [a.to_json() for a in self.applied],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Selection:
        """Lenient: whatever is unreadable is dropped (it is only UI state)."""
        if not isinstance(data, Mapping):
            return cls()
        cards = data.get("cards")
        choose = data.get("choose")
        page = data.get("page")
        rev = data.get("rev")
        applied = data.get("ap")
        entries = [Applied.from_json(a) for a in applied] if isinstance(applied, list) else []
        return cls(
            cards=tuple(c for c in cards if isinstance(c, str)) if isinstance(cards, list) else (),
            choose=choose if isinstance(choose, str) else None,
            page=page if isinstance(page, int) and page >= 0 else 0,
            rev=rev if isinstance(rev, int) and rev >= 0 else 0,
            applied=tuple(a for a in entries if a is not None),
        )


def drawn_for(selection: Selection, token: str, press: Press) -> bool:
    """Does ``press``, drawn for selection revision ``token`` (``GameCb.sel``),
    still mean what it meant on ``selection``?  Yes when drawn for its revision;
    and a card press drawn for an older one (two quick taps of one keyboard,
    #38) when each write since is known (:attr:`Selection.applied`) and none
    touched its card -- whatever it meant for that card, it means it now.  A
    second tap of the same card (a double tap), or a press drawn before writes
    no longer known, is not."""
    if token == selection.token:
        return True
    if press.kind != "card" or not token.isdigit():
        return False
    drawn = selection.rev - (selection.rev - int(token)) % SEL_MOD
    if drawn < 0:
        return False
    since = {a.rev: a for a in selection.applied if a.rev > drawn}
    if sorted(since) != list(range(drawn + 1, selection.rev + 1)):
        return False  # a write since that is not known any more
    return all(press.card not in a.cards for a in since.values())


def written(old: Selection, new: Selection, press: Press, request_id: str) -> Selection:
    """``new`` as press ``request_id`` writes it over ``old``: the next revision,
    the write recorded with the cards it touched (the last :data:`APPLIED_KEPT`)."""
    counts = Counter(old.cards)
    counts.subtract(Counter(new.cards))
    touched = {c for c, n in counts.items() if n}
    if old.choose != new.choose:
        touched.update(c for c in (old.choose, new.choose) if c)
    if press.kind == "card":
        touched.add(press.card)
    rev = old.rev + 1
    entry = Applied(request_id, rev, tuple(sorted(touched)))
    return replace(new, rev=rev, applied=(*old.applied, entry)[-APPLIED_KEPT:])


@dataclass(frozen=True)
class Outcome:
    """Exactly one of: ``action`` (apply it; then the selection is cleared;
    ``rest_of_bout``: a pass for the rest of the bout), ``selection`` (store it
    and re-render), ``error`` (a msgid for a short notice, formatted with
    ``error_args``)."""

    action: str | None = None
    selection: Selection | None = None
    error: str | None = None
    error_args: Mapping[str, int] = field(default_factory=dict)
    rest_of_bout: bool = False


@dataclass(frozen=True)
class Legal:
    """The seat's legal actions (``view["legal"]``) by kind."""

    texts: frozenset[str]
    leads: frozenset[tuple[str, ...]] = frozenset()  # each sorted in engine order
    covers: dict[str, list[str]] = field(default_factory=dict)  # card -> attacks it may cover
    throws: frozenset[str] = frozenset()  # cards that may be thrown in (one each)
    transfers: tuple[str, ...] = ()
    tickets: tuple[str, ...] = ()
    take: bool = False
    pass_: bool = False

    @property
    def any(self) -> bool:
        return bool(self.texts)


def legal(view: View) -> Legal:
    texts = [t for t in view.get("legal", ()) if isinstance(t, str)]
    leads: set[tuple[str, ...]] = set()
    covers: dict[str, list[str]] = {}
    throws: set[str] = set()
    transfers: list[str] = []
    tickets: list[str] = []
    for t in texts:
        kind, cards = t[0], card_names(parse_card_run(t[1:]))
        if kind == "L":
            leads.add(_canonical(cards))
        elif kind == "C":
            covers.setdefault(cards[1], []).append(cards[0])
        elif kind == "T":
            throws.update(cards)
        elif kind == "R":
            transfers.append(cards[0])
        elif kind == "S":
            tickets.append(cards[0])
    return Legal(
        texts=frozenset(texts),
        leads=frozenset(leads),
        covers=covers,
        throws=frozenset(throws),
        transfers=tuple(transfers),
        tickets=tuple(tickets),
        take="K" in texts,
        pass_="P" in texts,
    )


def _canonical(cards: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    return tuple(sorted(cards, key=parse_card))


def throw_room(view: View) -> int:
    """How many cards the seat may throw in at once now: the hand limit (RULES §0;
    for the defender's own S10a throw-in his hand after they leave it) and the S10 cap."""
    defender = view["defender"]
    size = view["hand_counts"][defender]
    uncovered = sum(1 for _, cover in view["table"] if cover is None)
    room = size - uncovered
    if view.get("seat") == defender:
        room //= 2
    cap = find_variant(view["variant"]).throw_cap
    if cap is not None:
        room = min(room, cap - view["thrown"])
    return max(room, 0)


def card_moves(view: View, card: str, lg: Legal | None = None) -> list[str]:
    """Every legal action text that plays ``card`` on its own (multi-card leads
    excepted): leads, covers (one per attack it beats), throw-in, transfer,
    pass-ticket."""
    lg = lg or legal(view)
    out = []
    if (card,) in lg.leads:
        out.append("L" + card)
    out.extend("C" + attack + card for attack in dict.fromkeys(lg.covers.get(card, ())))
    if card in lg.throws:
        out.append("T" + card)
    if card in lg.transfers:
        out.append("R" + card)
    if card in lg.tickets:
        out.append("S" + card)
    return out


def playable(view: View, lg: Legal | None = None) -> set[str]:
    """The cards of the hand that some legal action plays now."""
    lg = lg or legal(view)
    cards: set[str] = set(lg.throws) | set(lg.covers) | set(lg.transfers) | set(lg.tickets)
    for lead in lg.leads:
        cards.update(lead)
    return cards


def _multi(view: View, lg: Legal, card: str, selecting: bool = False) -> bool:
    """Can ``card`` be part of a move of several cards (a C6 lead, a throw-in)?
    A Chuvash lead card counts when some legal lead of several cards holds it
    -- else the only lead with it is the card alone, and one tap makes it
    (#24: never a mis-lead, since *Play* could make nothing else of it) --,
    or when he is already choosing cards (``selecting``: the tap starts a new
    choice, it does not play behind his back)."""
    if (
        any(card in lead for lead in lg.leads)
        and find_variant(view["variant"]).lead_many_of_one_suit
    ):
        return selecting or any(card in lead and len(lead) > 1 for lead in lg.leads)
    if card in lg.throws and throw_room(view) > 1:
        hand: Counter[str] = Counter(view["hand"])
        return sum(hand[c] for c in lg.throws) > 1
    return False


def selection_action(view: View, cards: tuple[str, ...], lg: Legal | None = None) -> str | None:
    """The action that *Play* makes of the toggled ``cards``, or ``None``."""
    if not cards:
        return None
    lg = lg or legal(view)
    if Counter(cards) - Counter(view["hand"]):
        return None
    canon = _canonical(cards)
    if canon in lg.leads:
        return "L" + "".join(canon)
    if all(c in lg.throws for c in cards) and len(cards) <= throw_room(view):
        return "T" + "".join(canon)
    return None


def _can_join(view: View, lg: Legal, cards: tuple[str, ...]) -> bool:
    """Could ``cards`` still grow into (or already be) a legal multi-card move?"""
    if Counter(cards) - Counter(view["hand"]):
        return False
    if any(all(c in lead for c in cards) for lead in lg.leads if len(lead) >= len(cards)):
        return len(set(cards)) == len(cards)
    return all(c in lg.throws for c in cards) and len(cards) <= throw_room(view)


def _over_limit(view: View, lg: Legal, cards: tuple[str, ...]) -> Outcome | None:
    """The notice for ``cards`` that would make a move but for their number: a C6
    lead longer than the defender's hand (RULES §0 hand limit), a throw-in past
    the room left (hand limit, S10 cap).  ``None``: they do not fit otherwise."""
    if Counter(cards) - Counter(view["hand"]):
        return None
    if view.get("phase") != BOUT_PHASE:
        one_suit = len({parse_card(c) % 4 for c in cards}) == 1 and len(set(cards)) == len(cards)
        if one_suit and all(any(c in lead for lead in lg.leads) for c in cards):
            n = view["hand_counts"][view["defender"]]
            return Outcome(error=ERR_DEFENDER_LIMIT, error_args={"n": n})
        return None
    if all(c in lg.throws for c in cards):
        return Outcome(error=ERR_THROW_LIMIT, error_args={"n": throw_room(view)})
    return None


def clean(view: View, selection: Selection) -> Selection:
    """Drop whatever no longer fits the view (cards that left the hand or are no
    longer playable, a choice that is no longer open)."""
    lg = legal(view)
    hand: Counter[str] = Counter(view["hand"])
    ok = playable(view, lg)
    kept: list[str] = []
    for c in selection.cards:
        if c in ok and hand[c] > 0:
            hand[c] -= 1
            kept.append(c)
    cards = tuple(kept) if kept and _can_join(view, lg, tuple(kept)) else ()
    choose = (
        selection.choose if selection.choose and card_moves(view, selection.choose, lg) else None
    )
    return replace(selection, cards=cards, choose=choose)


STAMP_LEN = 6
"""Characters of a :func:`stamp` (36 bits) in the callback data."""


BOUT_STAMP_LEN = 2
"""Leading characters of a :func:`stamp` that digest only the bout it belongs to."""


def _digest(value: object, length: int) -> str:
    digest = hashlib.blake2s(repr(value).encode(), digest_size=6).digest()
    return base64.urlsafe_b64encode(digest).decode()[:length]


def bout_key(view: View) -> tuple[object, ...]:
    """What tells one bout from the next: phase, attacker, defender, its lead
    card, stock and discard sizes (a new bout changes one of them)."""
    in_bout = view.get("phase") == BOUT_PHASE
    table = view.get("table") or []
    return (
        view.get("phase"),
        view.get("attacker"),
        view.get("defender"),
        table[0][0] if in_bout and table else None,
        view.get("stock_count"),
        view.get("discard_count"),
    )


def stamp(view: View) -> str:
    """A short digest of everything a press of this seat's keyboard can mean: the
    bout (:func:`bout_key`, the first :data:`BOUT_STAMP_LEN` characters), then
    his hand and legal actions, whether the defender takes, a shown
    pass-ticket, the throw-in room.  A button drawn at an older version whose
    stamp equals the current one means exactly what it meant then, so it is
    honoured (another player's throw-in, cover or pass elsewhere on the table
    does not void it); otherwise it is stale.  Any move of his own changes it
    (a card leaves his hand, or his options change as he takes, passes or shows
    a ticket): a double tap is stale."""
    in_bout = view.get("phase") == BOUT_PHASE
    rest = (
        sorted(view.get("hand", ())),
        sorted(view.get("legal", ())),
        view.get("taking"),
        view.get("pass_ticket"),
        throw_room(view) if in_bout else None,
    )
    key = bout_key(view)
    return _digest(key, BOUT_STAMP_LEN) + _digest((key, rest), STAMP_LEN - BOUT_STAMP_LEN)


def resolve(view: View, selection: Selection, press: Press) -> Outcome:
    """What ``press`` does for this seat now (see the module docstring)."""
    sel = clean(view, selection)
    lg = legal(view)
    if press.kind == "noop":
        return Outcome(selection=sel)
    if press.kind == "page":
        return Outcome(selection=replace(sel, page=press.page, choose=None))
    if press.kind == "clear":
        return Outcome(selection=Selection(page=sel.page))
    if press.kind == "back":
        return Outcome(selection=replace(sel, choose=None))
    if not lg.any:
        return Outcome(error=ERR_NOT_YOUR_TURN)
    if press.kind == "play":
        text = selection_action(view, sel.cards, lg)
        return Outcome(action=text) if text else Outcome(error=ERR_BAD_SELECTION)
    if press.kind == "bout_pass":  # RULES §0 Passing: while PASS is legal for him
        return Outcome(action="P", rest_of_bout=True) if lg.pass_ else Outcome(error=ERR_NOT_LEGAL)
    if press.kind == "action":
        if press.action in lg.texts:
            return Outcome(action=press.action)
        if press.action[0] in "LT":
            cards = tuple(card_names(parse_card_run(press.action[1:])))
            text = selection_action(view, cards, lg)
            if text:
                return Outcome(action=text)
        return Outcome(error=ERR_NOT_LEGAL)
    return _press_card(view, sel, lg, press.card)


def _press_card(view: View, sel: Selection, lg: Legal, card: str) -> Outcome:
    hand: Counter[str] = Counter(view["hand"])
    if not hand[card]:
        return Outcome(error=ERR_NOT_IN_HAND)
    if card in sel.cards:  # toggled: one more identical copy if it fits, else untoggle
        more = (*sel.cards, card)
        if sel.cards.count(card) < hand[card] and _can_join(view, lg, more):
            return Outcome(selection=replace(sel, cards=more, choose=None))
        rest = tuple(c for c in sel.cards if c != card)
        return Outcome(selection=replace(sel, cards=rest, choose=None))
    moves = card_moves(view, card, lg)
    multi = _multi(view, lg, card, selecting=bool(sel.cards))
    if not moves and not multi:
        return Outcome(error=ERR_CANNOT_PLAY)
    if sel.cards and multi:
        more = (*sel.cards, card)
        if _can_join(view, lg, more):
            return Outcome(selection=replace(sel, cards=more, choose=None))
        over = _over_limit(view, lg, more)
        if over is not None:  # one card too many: say why, keep what he chose
            return over
        return Outcome(selection=replace(sel, cards=(card,), choose=None))  # a new move
    others = [m for m in moves if m[0] not in "LT"]  # covers, transfer, pass-ticket
    if multi and not others:
        return Outcome(selection=replace(sel, cards=(card,), choose=None))
    if len(moves) == 1 and not multi:
        return Outcome(action=moves[0])
    return Outcome(selection=replace(sel, cards=(), choose=card))
