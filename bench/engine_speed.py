"""Engine benchmark: random self-play throughput and heuristic decision time.

    python bench/engine_speed.py [--seconds S] [--json]

For chuvash 2 and 6 players and shchelkovsky 2 players (2 decks) and 10 players
(4 decks) it prints random self-play games/s and actions/s (one process, so one
core) and the heuristic player's median and p99 decision time.  Targets (issue 2):
>= 1,600 full 2-player chuvash random games per second; heuristic median < 1 ms.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Any

from engine.ai import KINDS, make_player
from engine.selfplay import play_game
from engine.setup import new_game
from engine.state import OVER_PHASE

CONFIGS: list[tuple[str, int, dict[str, Any]]] = [
    ("chuvash", 2, {}),
    ("chuvash", 6, {}),
    ("shchelkovsky", 2, {"decks": 2}),
    ("shchelkovsky", 10, {"decks": 4}),
]


def random_throughput(
    variant: str, players: int, options: dict[str, Any], seconds: float
) -> dict[str, float]:
    """Whole games (deal included) with random players until ``seconds`` have passed."""
    rng = random.Random(1)
    games = actions = 0
    # warm-up: one game (fills the engine's memo of lead subsets, C6)
    play_game(
        new_game(variant, players, "warm", options),
        [make_player("random", s) for s in range(players)],
        rng,
    )
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = new_game(variant, players, games, options)
        ais = [make_player("random", f"{games}:{s}") for s in range(players)]
        actions += play_game(state, ais, rng).actions
        games += 1
    wall = time.perf_counter() - start
    return {
        "games": games,
        "games_per_s": games / wall,
        "actions_per_s": actions / wall,
        "mean_actions": actions / games,
    }


def heuristic_decisions(
    variant: str, players: int, options: dict[str, Any], seconds: float
) -> dict[str, float]:
    """Heuristic players at every seat; the time of every ``choose`` call."""
    times: list[float] = []
    rng = random.Random(2)
    start = time.perf_counter()
    g = 0
    while time.perf_counter() - start < seconds:
        state = new_game(variant, players, f"h{g}", options)
        ais = [make_player("heuristic", f"{g}:{s}") for s in range(players)]
        g += 1
        while state.phase != OVER_PHASE and time.perf_counter() - start < seconds:
            seats = state.to_act()
            seat = seats[0] if len(seats) == 1 else rng.choice(seats)
            t0 = time.perf_counter()
            action = ais[seat].choose(state, seat)
            times.append(time.perf_counter() - t0)
            assert action is not None
            state.apply(action)
    times.sort()
    return {
        "decisions": len(times),
        "games": g,
        "median_ms": statistics.median(times) * 1e3,
        "p99_ms": times[int(len(times) * 0.99)] * 1e3,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=5.0, help="per measurement")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for variant, players, options in CONFIGS:
        rnd = random_throughput(variant, players, options, args.seconds)
        heu = (
            heuristic_decisions(variant, players, options, args.seconds)
            if "heuristic" in KINDS
            else {"median_ms": float("nan"), "p99_ms": float("nan")}
        )
        rows.append(
            {
                "variant": variant,
                "players": players,
                "options": options,
                "random": rnd,
                "heuristic": heu,
            }
        )
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        f"{'config':<28}{'games/s':>10}{'actions/s':>12}{'act/game':>10}"
        f"{'heur p50 ms':>13}{'heur p99 ms':>13}"
    )
    for r in rows:
        name = f"{r['variant']} {r['players']}p" + (
            f" {r['options']['decks']}d" if r["options"] else ""
        )
        rnd, heu = r["random"], r["heuristic"]
        print(
            f"{name:<28}{rnd['games_per_s']:>10.0f}{rnd['actions_per_s']:>12.0f}"
            f"{rnd['mean_actions']:>10.1f}{heu['median_ms']:>13.3f}{heu['p99_ms']:>13.3f}"
        )


if __name__ == "__main__":
    main()
