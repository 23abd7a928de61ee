"""AI players (the :class:`~engine.ai.base.Player` protocol) and their registry."""

from __future__ import annotations

from engine.ai.base import Player, RandomPlayer
from engine.ai.heuristic import HeuristicPlayer
from engine.ai.search import SearchPlayer

KINDS: tuple[str, ...] = ("random", "heuristic", "search")
"""The registered AI kinds, for :func:`make_player`."""


def make_player(kind: str, seed: int | str = 0) -> Player:
    """A new player of ``kind`` (``random``, ``heuristic`` or ``search``), seeded with
    ``seed``."""
    if kind == "random":
        return RandomPlayer(seed)
    if kind == "heuristic":
        return HeuristicPlayer(seed)
    if kind == "search":
        return SearchPlayer(seed)
    raise ValueError(f"unknown AI kind {kind!r}; known: {', '.join(KINDS)}")


__all__ = ["KINDS", "HeuristicPlayer", "Player", "RandomPlayer", "SearchPlayer", "make_player"]
