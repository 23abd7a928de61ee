"""Checking a finished game from outside (issue #16): the deal a seed gives, the
commitment it matches, and a game record replayed move by move.

A *game record* (format ``durak-record/1``) is a scenario file (RULES §3: the
deal written out, then the actions) plus the seed, the commitment, the seats
and the result, so ``python -m engine replay`` and any scenario tool read it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine.actions import Action
from engine.cards import SUITS, card_name, card_names
from engine.errors import EngineError, StateFormatError
from engine.fairness import commitment
from engine.scenario import summary
from engine.setup import new_game
from engine.state import GameState
from engine.variants import Options

RECORD_FORMAT = "durak-record/1"


def deal_json(state: GameState) -> dict[str, Any]:
    """A fresh game's deal as scenario keys: hands, stock (top first), trump,
    the face-up trump card and the first attacker."""
    return {
        "hands": [card_names(state.hand(s)) for s in range(state.players)],
        "stock": card_names(state.stock_top_first()),
        "trump": SUITS[state.trump] if state.trump is not None else None,
        "trump_card": card_name(state.trump_card) if state.trump_card is not None else None,
        "first_attacker": state.attacker,
    }


def verify(
    seed: int | str,
    expected: str,
    variant: str,
    players: int,
    options: Mapping[str, Any] | Options | None = None,
    previous_loser: int | None = None,
) -> dict[str, Any]:
    """Recompute the commitment and the deal; ``ok`` when the commitment matches."""
    state = new_game(variant, players, seed, options, previous_loser)
    got = commitment(seed, variant, players, options)
    return {
        "ok": got == expected.strip().lower(),
        "commitment": got,
        "variant": state.variant.name,
        "players": players,
        "options": state.options.to_json(),
        **deal_json(state),
    }


def make_record(
    *,
    seed: int,
    variant: str,
    options: Mapping[str, Any],
    players: int,
    previous_loser: int | None,
    actions: Sequence[tuple[int, str]],
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A game record: the deal ``seed`` gives, the actions ``(seat, text)``."""
    state = new_game(variant, players, seed, options, previous_loser)
    return {
        "format": RECORD_FORMAT,
        "variant": state.variant.name,
        "options": state.options.to_json(),
        "players": players,
        "seed": str(seed),
        "commitment": commitment(seed, variant, players, options),
        "previous_loser": previous_loser,
        **deal_json(state),
        "actions": [Action.from_text(seat, text).to_json() for seat, text in actions],
        **(extra or {}),
    }


def load_record(record: Mapping[str, Any]) -> tuple[GameState, list[Any]]:
    """The deal a record's seed gives and its raw actions.  Raises
    :class:`StateFormatError` when the record is malformed, its commitment does not
    match its seed or its written-out deal is not the one the seed gives."""
    if not isinstance(record, Mapping) or record.get("format") != RECORD_FORMAT:
        raise StateFormatError("bad_record", f"not a {RECORD_FORMAT} record")
    try:
        seed, variant, players = record["seed"], record["variant"], int(record["players"])
        options = record.get("options") or {}
        state = new_game(variant, players, seed, options, record.get("previous_loser"))
        raw_actions = record["actions"]
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, EngineError):
            raise StateFormatError(e.code, e.message) from None
        raise StateFormatError("bad_record", f"malformed record: {e!r}") from None
    if commitment(seed, variant, players, options) != record.get("commitment"):
        raise StateFormatError("bad_commitment", "the seed does not match the commitment")
    for key, value in deal_json(state).items():
        if key in record and record[key] != value:
            raise StateFormatError("bad_deal", f"the seed does not give the record's {key}")
    if not isinstance(raw_actions, list):
        raise StateFormatError("bad_record", "'actions' must be a list")
    return state, raw_actions


def record_states(record: Mapping[str, Any]) -> list[GameState]:
    """Every state of a record: the deal, then one per action (a copy each).
    Raises :class:`EngineError` for a malformed record or an illegal action."""
    state, actions = load_record(record)
    states = [state.copy()]
    for raw in actions:
        state.apply(Action.from_json(raw))
        states.append(state.copy())
    return states


def replay_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """``python -m engine replay`` on a record: each step's state and the final
    result; ``ok`` false (and the error) at the first illegal action."""
    state, actions = load_record(record)
    steps: list[dict[str, Any]] = [{"step": 0, "action": None, "state": summary(state)}]
    error: dict[str, Any] | None = None
    for i, raw in enumerate(actions):
        try:
            state.apply(Action.from_json(raw))
        except EngineError as e:
            error = {"index": i, "code": e.code, "message": e.message}
            break
        steps.append({"step": i + 1, "action": raw, "state": summary(state)})
    return {
        "ok": error is None,
        "applied": len(steps) - 1,
        "error": error,
        "steps": steps,
        "result": {
            "over": state.over,
            "out": list(state.out),
            "loser": state.loser,
            "draw": state.draw,
        },
    }


__all__ = [
    "RECORD_FORMAT",
    "deal_json",
    "load_record",
    "make_record",
    "record_states",
    "replay_record",
    "verify",
]
