"""Versioned JSON of the full state, with a round-trip guarantee:
``state_from_json(state_to_json(s)) == s`` and the JSON of both is identical."""

from __future__ import annotations

from typing import Any

from engine.cards import NCARDS, SUITS, Card, CardError, card_name, card_names, parse_card
from engine.errors import OptionsError, StateFormatError
from engine.state import BOUT_PHASE, LEAD_PHASE, OVER_PHASE, Event, GameState
from engine.variants import find_variant

FORMAT = "durak-state/1"


def _run(cards: list[Card] | tuple[Card, ...]) -> str:
    return " ".join(card_names(cards))


def _unrun(text: str) -> list[Card]:
    return [parse_card(t) for t in text.split()] if text else []


def state_to_json(state: GameState, *, history: bool = True) -> dict[str, Any]:
    """Everything, hidden cards included (the admin's full view).  Card lists are
    space-separated strings to keep the stored form compact."""
    out: dict[str, Any] = {
        "format": FORMAT,
        "variant": state.variant.name,
        "options": state.options.to_json(),
        "players": state.players,
        "hands": [_run(state.hand(s)) for s in range(state.players)],
        "stock": _run(state.stock_top_first()),
        "trump": SUITS[state.trump] if state.trump is not None else None,
        "trump_card": card_name(state.trump_card) if state.trump_card is not None else None,
        "discard": _run(state.discard_cards()),
        "phase": state.phase,
        "attacker": state.attacker,
        "defender": state.defender,
        "passer": state.passer,
        "table": [[card_name(a), card_name(c) if c >= 0 else None] for a, c in state.table],
        "taking": state.taking,
        "covered_any": state.covered_any,
        "passed": [s for s in range(state.players) if state.passed >> s & 1],
        "thrown": state.thrown,
        "ticket": [state.ticket[0], card_name(state.ticket[1])] if state.ticket else None,
        "out": list(state.out),
        "emptied_at": list(state.emptied_at),
        "loser": state.loser,
        "draw": state.draw,
        "ply": state.ply,
    }
    if history:
        out["history"] = [[e.kind, e.seat, _run(e.cards), e.detail] for e in state.history]
    return out


def state_from_json(data: dict[str, Any]) -> GameState:
    """Rebuild a state from :func:`state_to_json`; raise :class:`StateFormatError`
    on anything malformed."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise StateFormatError("bad_state", f"not a {FORMAT} state")
    try:
        variant = find_variant(data["variant"])
        options = variant.options(data["options"])
        n = int(data["players"])
        variant.check_players(n)
        s = GameState.__new__(GameState)
        s.variant = variant
        s.options = options
        s.players = n
        trump = data["trump"]
        s.trump = SUITS.index(trump) if trump is not None else None
        from engine.variants import beaters

        s.beat = beaters(variant.name, s.trump)
        s.counts = [[0] * NCARDS for _ in range(n)]
        s.masks = [0] * n
        s.sizes = [0] * n
        hands = data["hands"]
        if len(hands) != n:
            raise StateFormatError("bad_state", "one hand per seat expected")
        for seat, text in enumerate(hands):
            for c in _unrun(text):
                s.counts[seat][c] += 1
                s.masks[seat] |= 1 << c
                s.sizes[seat] += 1
        s.stock = _unrun(data["stock"])[::-1]
        s.trump_card = parse_card(data["trump_card"]) if data["trump_card"] is not None else None
        s.discard = [0] * NCARDS
        for c in _unrun(data["discard"]):
            s.discard[c] += 1
        s.phase = data["phase"]
        if s.phase not in (LEAD_PHASE, BOUT_PHASE, OVER_PHASE):
            raise StateFormatError("bad_state", f"unknown phase {s.phase!r}")
        s.attacker = int(data["attacker"])
        s.defender = int(data["defender"])
        s.passer = int(data["passer"])
        s.table = [
            [parse_card(a), parse_card(c) if c is not None else -1] for a, c in data["table"]
        ]
        s.table_ranks = 0
        for a, c in s.table:
            s.table_ranks |= 0xF << (a >> 2 << 2)
            if c >= 0:
                s.table_ranks |= 0xF << (c >> 2 << 2)
        s.uncovered = sum(1 for _, c in s.table if c < 0)
        s.taking = bool(data["taking"])
        s.covered_any = bool(data["covered_any"])
        s.passed = 0
        for seat in data["passed"]:
            s.passed |= 1 << int(seat)
        s.thrown = int(data["thrown"])
        ticket = data["ticket"]
        s.ticket = (int(ticket[0]), parse_card(ticket[1])) if ticket else None
        s.out = [int(x) for x in data["out"]]
        s.emptied_at = [int(x) for x in data["emptied_at"]]
        s.loser = None if data["loser"] is None else int(data["loser"])
        s.draw = bool(data["draw"])
        s.ply = int(data["ply"])
        s._prio = -2  # priority is computed on demand
        s.history = [
            Event(str(k), int(seat), tuple(_unrun(cards)), str(detail))
            for k, seat, cards, detail in data.get("history", [])
        ]
    except StateFormatError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, CardError, OptionsError) as e:
        raise StateFormatError("bad_state", f"malformed state: {e!r}") from None
    return s
