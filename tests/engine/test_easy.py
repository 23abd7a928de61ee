"""The easy AI (issue 15): the heuristic with human-like mistakes -- legal,
deterministic per seed, and measurably weaker than the heuristic."""

from __future__ import annotations

import random

import pytest

from engine import new_game
from engine.ai import EasyPlayer, HeuristicPlayer, make_player
from engine.ai.base import Player
from engine.selfplay import play_game, selfplay

SEED = 15


@pytest.mark.parametrize(
    ("variant", "players", "options"),
    [("chuvash", 2, None), ("chuvash", 5, None), ("shchelkovsky", 3, {"decks": 2})],
)
def test_easy_plays_whole_games_legally(
    variant: str, players: int, options: dict[str, int] | None
) -> None:
    # play_game checks every action of a player that is not marked trusted
    assert not getattr(EasyPlayer, "trusted", False)
    state = new_game(variant, players, SEED, options)
    ais: list[Player] = [EasyPlayer(f"{SEED}:{s}") for s in range(players)]
    result = play_game(state, ais, random.Random(SEED))
    assert result.finished, f"seed {SEED}"


def test_easy_is_deterministic_per_seed_and_slips_now_and_then() -> None:
    print("seed", SEED)
    decisions = same = 0
    for g in range(6):
        state = new_game("chuvash", 3, f"{SEED}:{g}")
        rng = random.Random(g)
        while not state.over and decisions < 2000:
            seat = state.to_act()[0]
            key = f"{SEED}:{g}:{state.ply}:{seat}"
            easy = make_player("easy", key).choose(state, seat)
            assert easy == EasyPlayer(key).choose(state, seat)  # same seed, same move
            assert easy is not None
            state.copy().apply(easy)  # legal: the engine's checks (IllegalAction)
            same += easy == HeuristicPlayer(key).choose(state, seat)
            decisions += 1
            moves = state.legal_actions(seat)
            state.apply(easy if rng.random() < 0.5 else rng.choice(moves))
    # mostly the heuristic's move, but not always (EasyPlayer.mistake, .forget)
    assert 0.5 * decisions < same < decisions, (same, decisions)


def test_easy_loses_more_often_than_the_heuristic() -> None:
    report = selfplay("chuvash", 2, 120, SEED, ["easy", "heuristic"])
    share = report["loss_share_per_kind"]
    print("seed", SEED, share)
    assert share["easy"] > share["heuristic"] + 0.1
