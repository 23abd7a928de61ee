"""Scenario files (RULES §3): a fixed deal plus actions, replayed by the engine so
that rules can be checked without any UI."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from engine.actions import Action
from engine.cards import SUITS, CardError, card_name, card_names, parse_card, suit_index
from engine.errors import EngineError, StateFormatError
from engine.setup import from_deal
from engine.state import GameState

LEGAL_NOTE = (
    "throw-ins are listed one card per action; several cards of ranks on the table "
    "may be thrown at once (one 'throw' with several cards)"
)


def load_scenario(data: Mapping[str, Any]) -> tuple[GameState, list[Any]]:
    """The starting state and the raw action list of a scenario file."""
    if not isinstance(data, Mapping):
        raise StateFormatError("bad_scenario", "a scenario file holds one JSON object")
    try:
        hands_raw = data["hands"]
        if not isinstance(hands_raw, list) or not all(_names_list(h) for h in hands_raw):
            raise StateFormatError("bad_scenario", "'hands' must be a list of card-name lists")
        stock_raw = data.get("stock", [])
        if not _names_list(stock_raw):
            raise StateFormatError("bad_scenario", "'stock' must be a list of card names")
        for key in ("first_attacker", "previous_loser"):
            value = data.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise StateFormatError("bad_scenario", f"'{key}' must be a seat number")
        trump_raw = data.get("trump")
        if trump_raw is not None and not isinstance(trump_raw, str):
            raise StateFormatError("bad_scenario", "'trump' must be a suit letter")
        options = data.get("options") or {}
        if not isinstance(options, Mapping):
            raise StateFormatError("bad_scenario", "'options' must be an object")
        hands = [[parse_card(c) for c in h] for h in hands_raw]
        stock = [parse_card(c) for c in stock_raw]
        trump = suit_index(trump_raw) if isinstance(trump_raw, str) else None
        seed = data.get("seed", 0)
        rng = random.Random(f"lot:{seed}")
        state = from_deal(
            data.get("variant"),  # type: ignore[arg-type]
            options,
            hands,
            stock,
            trump=trump,
            first_attacker=data.get("first_attacker"),
            previous_loser=data.get("previous_loser"),
            lot=lambda seats: rng.choice(list(seats)),
        )
    except CardError as e:
        raise StateFormatError("bad_card", str(e)) from None
    except KeyError as e:
        raise StateFormatError("bad_scenario", f"missing key {e}") from None
    actions = data.get("actions", [])
    if not isinstance(actions, list):
        raise StateFormatError("bad_scenario", "'actions' must be a list")
    return state, actions


def _names_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(c, str) for c in value)


def summary(state: GameState) -> dict[str, Any]:
    """The ``state`` object of RULES §3 (plus a few helpful extras)."""
    return {
        "phase": state.phase,
        "attacker": state.attacker,
        "defender": state.defender,
        "table": [[card_name(a), card_name(c) if c >= 0 else None] for a, c in state.table],
        "hands": [card_names(state.hand(s)) for s in range(state.players)],
        "stock_count": len(state.stock),
        "trump": SUITS[state.trump] if state.trump is not None else None,
        "out": list(state.out),
        "loser": state.loser,
        "draw": state.draw,
        "taking": state.taking,
        "trump_card": card_name(state.trump_card) if state.trump_card is not None else None,
        "discard_count": sum(state.discard),
        "thrown": state.thrown,
        "pass_ticket": (
            {"seat": state.ticket[0], "card": card_name(state.ticket[1])} if state.ticket else None
        ),
        "passed": [s for s in range(state.players) if state.passed >> s & 1],
        "to_act": state.to_act(),
    }


def replay(data: Mapping[str, Any]) -> tuple[dict[str, Any], GameState]:
    """Replay a scenario; the result object of RULES §3 and the final state."""
    state, actions = load_scenario(data)
    error: dict[str, Any] | None = None
    applied = 0
    for index, raw in enumerate(actions):
        try:
            state.apply(Action.from_json(raw))
        except EngineError as e:
            error = {"index": index, "code": e.code, "message": e.message}
            break
        applied += 1
    result = {"ok": error is None, "applied": applied, "error": error, "state": summary(state)}
    return result, state


def legal(data: Mapping[str, Any]) -> dict[str, Any]:
    """Every seat's legal actions after the file's actions (a debugging aid)."""
    result, state = replay(data)
    result["legal"] = [[a.to_json() for a in state.legal_actions(s)] for s in range(state.players)]
    result["note"] = LEGAL_NOTE
    return result
