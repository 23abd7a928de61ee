"""What a seat may know of the game: public facts only, never another seat's hand."""

from __future__ import annotations

from engine.actions import COVER, SHOW_TRUMP
from engine.cards import NCARDS, Card, iter_bits
from engine.state import Event, GameState


class PublicInfo:
    """What ``seat`` may know now -- and nothing more.

    Sources: its own hand, every seat's card count (``sizes``), the table, the discard
    pile (every card in it was seen on the table), the face-up trump card, and the
    public events of ``state.history``: a seat that took a bout holds those cards
    until it plays them; a shown pass-ticket trump (S8) stays in its shower's hand;
    the seat that drew the last card of the stock holds the face-up trump card (S3).
    Other seats' draws are *not* read (their cards are private), only their sizes.
    """

    __slots__ = ("hand", "history_ref", "known", "pos", "seat", "stale", "unseen")

    def __init__(self, seat: int) -> None:
        self.seat = seat
        self.hand: list[int] = []  # count vector of the seat's own cards
        self.known: dict[int, list[int]] = {}  # seat -> count vector of cards known held
        self.unseen: list[int] = []  # cards whose place is unknown to us
        self.pos = 0  # history events consumed
        self.stale = 0  # bouts taken in a row with no draw and no beaten-off bout
        self.history_ref: list[Event] | None = None

    def update(self, state: GameState) -> None:
        """Catch up with ``state``: read the history events not yet seen, then recount
        the own hand and the unseen cards."""
        if self.history_ref is not state.history or self.pos > len(state.history):
            self._forget(state.history)  # another game (or a rewound one)
        self._read_history(state.history, state)
        # own hand: the seat's own count vector (never another seat's)
        self.hand = state.counts[self.seat][:]
        self._count_unseen(state)

    def _forget(self, history: list[Event]) -> None:
        self.history_ref = history
        self.pos = 0
        self.known = {}
        self.stale = 0

    def _read_history(self, hist: list[Event], state: GameState) -> None:
        """Consume the public events from ``self.pos`` on."""
        # the stock's size before these events: the seat that empties it drew the
        # face-up trump card (S3: it is drawn last), which everybody saw
        stock = len(state.stock)
        bottom = state.trump_card if state.variant.has_trump else None
        if bottom is not None:
            stock += sum(len(ev.cards) for ev in hist[self.pos :] if ev.kind == "draw")
        for i in range(self.pos, len(hist)):
            ev = hist[i]
            if ev.kind == "action":
                if ev.seat != self.seat:
                    self._note_action(ev)
            elif ev.kind == "bout_end":
                self._note_bout_end(ev)
            elif ev.kind == "draw" and ev.cards:  # C13 / S13: who drew is public, not what
                self.stale = 0
                stock -= len(ev.cards)
                if bottom is not None and stock == 0 and ev.seat != self.seat:
                    self.known.setdefault(ev.seat, [0] * NCARDS)[bottom] += 1
        self.pos = len(hist)

    def _note_action(self, ev: Event) -> None:
        """Another seat acted: a shown pass-ticket trump stays in his hand (S8); the
        cards he played leave it (for a cover only the covering card is his)."""
        s = ev.seat
        if ev.detail == SHOW_TRUMP:
            row = self.known.setdefault(s, [0] * NCARDS)
            if not row[ev.cards[0]]:
                row[ev.cards[0]] = 1
            return
        row_opt = self.known.get(s)
        if row_opt is None:
            return
        played = ev.cards[1:] if ev.detail == COVER else ev.cards
        for c in played:
            if row_opt[c]:
                row_opt[c] -= 1

    def _note_bout_end(self, ev: Event) -> None:
        """Beaten off: the table went to the discard pile.  Taken (§0 End of a bout): the
        defender holds every table card now."""
        if ev.detail != "taken":
            self.stale = 0
            return
        self.stale += 1
        if ev.seat != self.seat:
            row = self.known.setdefault(ev.seat, [0] * NCARDS)
            for c in ev.cards:
                row[c] += 1

    def _count_unseen(self, state: GameState) -> None:
        """The deck less the discard pile, the own hand, the table and the cards
        known in other hands."""
        total = deck_counts(state)
        unseen = [t - d - h for t, d, h in zip(total, state.discard, self.hand, strict=True)]
        for attack, cover in state.table:
            unseen[attack] -= 1
            if cover >= 0:
                unseen[cover] -= 1
        for s, row in self.known.items():
            if s == self.seat:
                continue
            for c in range(NCARDS):
                if row[c]:
                    unseen[c] -= row[c]
        self.unseen = [max(0, u) for u in unseen]

    def known_of(self, seat: int) -> list[int]:
        row = self.known.get(seat)
        return row if row is not None else [0] * NCARDS

    def hard_to_beat(self, state: GameState, card: Card, target: int) -> float:
        """0..1: how unlikely ``target`` is to beat ``card``, from public facts only
        (the cards known in his hand, else the unseen pool scaled by his hand size)."""
        beat = state.beat[card]
        known = self.known_of(target)
        if any(known[c] for c in iter_bits(beat)):
            return 0.0
        pool = sum(self.unseen)
        if pool <= 0:
            return 1.0
        n_beat = sum(self.unseen[c] for c in iter_bits(beat))
        size = state.sizes[target] - sum(known)
        if size <= 0:
            return 1.0
        # chance that none of his unknown cards beats it (hypergeometric, approximated)
        p_none = max(0.0, 1.0 - n_beat / pool) ** size
        return p_none


def deck_counts(state: GameState) -> list[int]:
    """How many of each card the game's deck holds (C1, S1), memoised per deck."""
    key = (state.variant.name, state.options.decks, state.options.remove_joker)
    cached = _DECKS.get(key)
    if cached is None:
        cached = [0] * NCARDS
        for c in state.variant.deck(state.options):
            cached[c] += 1
        _DECKS[key] = cached
    return cached


_DECKS: dict[tuple[str, int, bool], list[int]] = {}
