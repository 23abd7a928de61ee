"""The interface every AI player implements."""

from __future__ import annotations

import random
from typing import Protocol

from engine.actions import Action
from engine.state import GameState


class Player(Protocol):
    """Chooses one of ``state.legal_actions(seat)``; never an illegal action."""

    name: str

    def choose(self, state: GameState, seat: int) -> Action | None:
        """An action for ``seat`` now, or ``None`` if it has nothing to do."""
        ...


class RandomPlayer:
    """Uniformly random among the legal actions (seeded)."""

    name = "random"
    trusted = True  # proposes only actions taken from legal_actions() (see play_game)

    def __init__(self, seed: int | str = 0) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: GameState, seat: int) -> Action | None:
        # uniform over legal_actions(seat) (up to float granularity), without
        # building every multi-card lead (C6)
        return state.sample_action(seat, self.rng.random())
