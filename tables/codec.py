"""Compact encoding of a game state for the table hash (field ``s``).

The blob is ``b"\\x01"`` + raw deflate of the engine's own JSON
(:func:`engine.state_to_json`), compressed with a preset dictionary of that
JSON's keys so that even a small state compresses well.  Only the last
``keep_history`` engine events are kept (enough for the views' "last moves"; the
full record of a game is its event stream, :mod:`tables.keys`).
"""

from __future__ import annotations

import json
import zlib

from engine import GameState, state_from_json, state_to_json
from engine.errors import StateFormatError

_VERSION = b"\x01"
_ZDICT = (
    b'"history": [["action", ["draw", ["bout_end", "taken"], "beaten"], ["out", '
    b'"game_over", "loser"], "lead"], "cover"], "throw"], "pass"], "take"], '
    b'"transfer"], "show_trump"], "emptied_at": [0, 0, 0, "loser": null, "draw": false, '
    b'"ply": "ticket": null, "out": [], "thrown": 0, "passed": [], "taking": false, '
    b'"covered_any": false, "table": [], "passer": -1, "defender": 1, "attacker": 0, '
    b'"phase": "bout", "lead", "discard": "", "trump_card": "trump": "stock": '
    b'"hands": ["players": 6, "options": {"decks": 1, "remove_joker": false}, '
    b'"variant": "chuvash", "shchelkovsky", {"format": "durak-state/1", '
    b"6C 6D 6H 6S 7C 7D 7H 7S 8C 8D 8H 8S 9C 9D 9H 9S 10C 10D 10H 10S JC JD JH JS "
    b"QC QD QH QS KC KD KH KS AC AD AH AS JK 2C 2D 2H 2S 3C 3D 3H 3S 4C 4D 4H 4S 5C 5D 5H 5S"
)


def encode_state(state: GameState, keep_history: int = 24) -> bytes:
    """The blob of ``state`` (history trimmed to the last ``keep_history`` events)."""
    data = state_to_json(state, history=False)
    data["history"] = (
        [
            [e.kind, e.seat, " ".join(_names(e.cards)), e.detail]
            for e in state.history[-keep_history:]
        ]
        if keep_history > 0
        else []
    )
    raw = json.dumps(data, separators=(",", ":")).encode()
    comp = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, _ZDICT)
    return _VERSION + comp.compress(raw) + comp.flush()


def decode_state(blob: bytes) -> GameState:
    """The state from :func:`encode_state`; :class:`StateFormatError` if unreadable."""
    if not blob or blob[:1] != _VERSION:
        raise StateFormatError("bad_state", "unknown state blob version")
    try:
        dec = zlib.decompressobj(-15, _ZDICT)
        raw = dec.decompress(blob[1:]) + dec.flush()
        data = json.loads(raw)
    except (zlib.error, ValueError) as e:
        raise StateFormatError("bad_state", f"corrupt state blob: {e}") from None
    return state_from_json(data)


def _names(cards: tuple[int, ...]) -> list[str]:
    from engine.cards import card_names

    return card_names(cards)
