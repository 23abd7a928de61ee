"""Self-play: AI players against each other, for statistics and benchmarks."""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.ai import make_player
from engine.ai.base import Player
from engine.setup import new_game
from engine.state import OVER_PHASE, GameState
from engine.variants import Options


@dataclass(frozen=True)
class PlayedGame:
    loser: int | None
    draw: bool
    actions: int
    out: tuple[int, ...]
    finished: bool  # False if the action bound was hit (never seen; reported if it is)


def play_game(
    state: GameState,
    players: Sequence[Player],
    rng: random.Random,
    max_actions: int = 1_000_000,
) -> PlayedGame:
    """Play ``state`` to the end.  When the game waits for two seats at once (the
    defender and the throw-in priority holder), ``rng`` picks who moves first."""
    actions = 0
    # A player that only ever proposes actions straight from legal_actions() may skip
    # apply()'s check; any other player's moves are checked (and raise if illegal).
    checked = [not getattr(p, "trusted", False) for p in players]
    while state.phase != OVER_PHASE and actions < max_actions:
        seats = state.to_act()
        seat = seats[0] if len(seats) == 1 else seats[int(rng.random() * len(seats))]
        action = players[seat].choose(state, seat)
        if action is None:  # pragma: no cover - to_act() seats always have a move
            raise RuntimeError(f"{players[seat].name} at seat {seat} found no move in {state!r}")
        state.apply(action, checked=checked[seat])
        actions += 1
    return PlayedGame(state.loser, state.draw, actions, tuple(state.out), state.over)


def selfplay(
    variant: str,
    players: int,
    games: int,
    seed: int,
    kinds: Sequence[str],
    options: Mapping[str, Any] | Options | None = None,
) -> dict[str, Any]:
    """Play ``games`` games; seat ``s`` of game ``g`` is played by
    ``kinds[(s + g) % len(kinds)]``, so every kind sits in every seat in turn."""
    if not kinds:
        raise ValueError("at least one AI kind is needed")
    rng = random.Random(seed)
    losses_seat = [0] * players
    losses_kind: dict[str, int] = dict.fromkeys(kinds, 0)
    seats_kind: dict[str, int] = dict.fromkeys(kinds, 0)
    draws = unfinished = total_actions = 0
    start = time.perf_counter()
    for g in range(games):
        state = new_game(variant, players, f"{seed}:{g}", options)
        seat_kinds = [kinds[(s + g) % len(kinds)] for s in range(players)]
        ais = [make_player(k, f"{seed}:{g}:{s}") for s, k in enumerate(seat_kinds)]
        for k in seat_kinds:
            seats_kind[k] += 1
        result = play_game(state, ais, rng)
        total_actions += result.actions
        unfinished += not result.finished
        if result.draw:
            draws += 1
        elif result.loser is not None:
            losses_seat[result.loser] += 1
            losses_kind[seat_kinds[result.loser]] += 1
    wall = time.perf_counter() - start
    return {
        "variant": variant,
        "players": players,
        "options": (options.to_json() if isinstance(options, Options) else dict(options or {})),
        "ai": list(kinds),
        "seed": seed,
        "games": games,
        "draws": draws,
        "unfinished": unfinished,
        "mean_actions_per_game": total_actions / games if games else 0.0,
        "loss_share_per_seat": [x / games if games else 0.0 for x in losses_seat],
        "loss_share_per_kind": {k: v / games if games else 0.0 for k, v in losses_kind.items()},
        # a kind's losses per seat it occupied: comparable between kinds of unequal counts
        "loss_rate_per_seat_of_kind": {
            k: losses_kind[k] / seats_kind[k] if seats_kind[k] else 0.0 for k in kinds
        },
        "wall_seconds": wall,
        "games_per_second": games / wall if wall else 0.0,
    }
