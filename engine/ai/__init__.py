"""AI players.  ``make_player(kind, seed)`` builds one by kind name."""

from __future__ import annotations

from engine.ai.base import Player, RandomPlayer

KINDS: tuple[str, ...] = ("random",)


def make_player(kind: str, seed: int | str = 0) -> Player:
    """A new AI player of ``kind`` (one of :data:`KINDS`), seeded."""
    if kind == "random":
        return RandomPlayer(seed)
    raise ValueError(f"unknown AI kind {kind!r}; known: {', '.join(KINDS)}")


__all__ = ["KINDS", "Player", "RandomPlayer", "make_player"]
