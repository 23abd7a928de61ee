"""AI players (the :class:`~engine.ai.base.Player` protocol) and their registry."""

from __future__ import annotations

from engine.ai.base import Player, RandomPlayer
from engine.ai.easy import EasyPlayer
from engine.ai.heuristic import HeuristicPlayer
from engine.ai.search import EXPERT, HARD, SearchConfig, SearchPlayer

KINDS: tuple[str, ...] = ("random", "easy", "heuristic", "search", "expert")
"""The AI kinds the product offers at a table (the table service and the admin API
validate seats against it).  ``search`` takes ~100 ms a decision, ``expert`` (the
search on the ``EXPERT`` preset: ``EXPERT_SCALE`` times its budget) several times that: the bot runs them
in a process pool, off its event loop (:mod:`tables.deciders`)."""

ALL_KINDS: tuple[str, ...] = KINDS
"""Every kind :func:`make_player` builds."""

LEVELS: dict[str, str] = {
    "easy": "easy",
    "normal": "heuristic",
    "hard": "search",
    "expert": "expert",
}
"""The product's difficulty levels -> the AI kind playing them."""

LEVEL_OF: dict[str, str] = {kind: level for level, kind in LEVELS.items()}
"""An AI kind -> its level (``random`` has none)."""

SLOW_KINDS: frozenset[str] = frozenset({"search", "expert"})
"""Kinds whose decision is too slow for an event loop (run them in a pool)."""


def make_player(kind: str, seed: int | str = 0) -> Player:
    """A new player of ``kind`` (``random``, ``easy``, ``heuristic``, ``search`` or
    ``expert``), seeded with ``seed``."""
    if kind == "random":
        return RandomPlayer(seed)
    if kind == "easy":
        return EasyPlayer(seed)
    if kind == "heuristic":
        return HeuristicPlayer(seed)
    if kind == "search":
        return SearchPlayer(seed, HARD)
    if kind == "expert":
        return SearchPlayer(seed, EXPERT, name="expert")
    raise ValueError(f"unknown AI kind {kind!r}; known: {', '.join(ALL_KINDS)}")


__all__ = [
    "ALL_KINDS",
    "KINDS",
    "LEVELS",
    "LEVEL_OF",
    "SLOW_KINDS",
    "EasyPlayer",
    "HeuristicPlayer",
    "Player",
    "RandomPlayer",
    "SearchConfig",
    "SearchPlayer",
    "make_player",
]
