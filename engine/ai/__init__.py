"""AI players (the :class:`~engine.ai.base.Player` protocol) and their registry."""

from __future__ import annotations

from engine.ai.base import Player, RandomPlayer
from engine.ai.heuristic import HeuristicPlayer
from engine.ai.search import SearchPlayer

KINDS: tuple[str, ...] = ("random", "heuristic")
"""The AI kinds the product offers at a table (the table service and the admin API
validate seats against it)."""

ALL_KINDS: tuple[str, ...] = (*KINDS, "search")
"""Every kind :func:`make_player` builds.  ``search`` (issue 15) takes ~100 ms a
decision: it is for self-play and benchmarks until the product runs AI moves off
its event loop (issue 15, step 4), so it is not in :data:`KINDS` yet."""


def make_player(kind: str, seed: int | str = 0) -> Player:
    """A new player of ``kind`` (``random``, ``heuristic`` or ``search``), seeded with
    ``seed``."""
    if kind == "random":
        return RandomPlayer(seed)
    if kind == "heuristic":
        return HeuristicPlayer(seed)
    if kind == "search":
        return SearchPlayer(seed)
    raise ValueError(f"unknown AI kind {kind!r}; known: {', '.join(ALL_KINDS)}")


__all__ = [
    "ALL_KINDS",
    "KINDS",
    "HeuristicPlayer",
    "Player",
    "RandomPlayer",
    "SearchPlayer",
    "make_player",
]
