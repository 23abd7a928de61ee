"""What one seat may see (OpenSpiel's observer): his own hand and only public facts
about the others.  The admin view is :func:`engine.serialize.state_to_json`."""

from __future__ import annotations

from typing import Any

from engine.cards import SUITS, card_name, card_names
from engine.state import BOUT_PHASE, LEAD_PHASE, Event, GameState

PUBLIC_EVENTS = ("action", "bout_end", "out", "game_over")


def roles(state: GameState) -> list[str]:
    """Per seat: ``attacker``, ``defender``, ``thrower`` (may throw in this bout),
    ``out``, ``loser`` or ``idle``."""
    out = []
    for s in range(state.players):
        if state.loser == s:
            out.append("loser")
        elif s in state.out:
            out.append("out")
        elif (
            state.phase in (LEAD_PHASE, BOUT_PHASE) and s == state.attacker and s != state.defender
        ):
            out.append("attacker")
        elif state.phase in (LEAD_PHASE, BOUT_PHASE) and s == state.defender:
            out.append("defender")
        elif state.phase == BOUT_PHASE and state.sizes[s]:
            out.append("thrower")
        else:
            out.append("idle")
    return out


def public_event(event: Event, seat: int) -> dict[str, Any]:
    """An event as ``seat`` may see it: another seat's draw shows only how many cards."""
    data: dict[str, Any] = {"kind": event.kind, "seat": event.seat, "detail": event.detail}
    if event.kind == "draw" and event.seat != seat:
        data["count"] = len(event.cards)
    else:
        data["cards"] = card_names(event.cards)
    return data


def view(state: GameState, seat: int, *, last_events: int = 12) -> dict[str, Any]:
    """The seat's view: own hand and legal actions, everyone's counts and roles, the
    table, the trump (and its face-up card), stock and discard counts, a shown
    pass-ticket (public by S8), and the latest public events."""
    return {
        "seat": seat,
        "variant": state.variant.name,
        "players": state.players,
        "phase": state.phase,
        "attacker": state.attacker,
        "defender": state.defender,
        "hand": card_names(state.hand(seat)) if 0 <= seat < state.players else [],
        "hand_counts": list(state.sizes),
        "roles": roles(state),
        "table": [[card_name(a), card_name(c) if c >= 0 else None] for a, c in state.table],
        "taking": state.taking,
        "trump": SUITS[state.trump] if state.trump is not None else None,
        "trump_card": card_name(state.trump_card) if state.trump_card is not None else None,
        "stock_count": len(state.stock),
        "discard_count": sum(state.discard),
        "pass_ticket": (
            {"seat": state.ticket[0], "card": card_name(state.ticket[1])} if state.ticket else None
        ),
        "passed": [s for s in range(state.players) if state.passed >> s & 1],
        "thrown": state.thrown,
        "priority": state.priority(),
        "to_act": state.to_act(),
        "legal": [a.text() for a in state.legal_actions(seat)],
        "out": list(state.out),
        "loser": state.loser,
        "draw": state.draw,
        "ply": state.ply,
        "events": [
            public_event(e, seat) for e in (state.history[-last_events:] if last_events > 0 else [])
        ],
    }


def public_view(state: GameState) -> dict[str, Any]:
    """What a spectator (the group's table message) sees: no hand at all."""
    data = view(state, -1)
    for key in ("seat", "hand", "legal"):
        data.pop(key)
    return data
