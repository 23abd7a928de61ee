"""Random self-play speed, side by side with jorisperrenet/durak's pure-Python engine.

    python bench/reference_speed.py --reference DIR [--seconds S] [--rounds R] [--json]

``DIR`` is the ``python_version`` folder of a checkout of
https://github.com/jorisperrenet/durak (``git clone`` it anywhere outside this
repository -- its code is not part of the project and must not be committed).
Both engines play 2-player games between uniformly random players in this one
process, in alternating rounds of ``S`` seconds (so a busy machine slows both
alike); it prints games/s and actions/s of each and our/their ratio, for our
chuvash (36 cards, like theirs) and shchelkovsky (2 decks) games, through the
public self-play path (``engine.selfplay.play_game``), the rules engine's playout
path (``engine.ai.rollout.random_playout``) and the playout representation made for
speed (``engine.ai.fastplay.FastGame``, checked against the rules engine by
``tests/engine/test_fastplay.py``).  Issue 15's goal: a ratio of at least 2; issue
26's: random playouts at least 3 times the reference.
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.ai import make_player
from engine.ai.fastplay import FastGame
from engine.ai.rollout import random_playout
from engine.selfplay import play_game
from engine.setup import new_game

HOW_TO = """no --reference given.  To measure side by side:
    git clone https://github.com/jorisperrenet/durak /tmp/durak
    python bench/reference_speed.py --reference /tmp/durak/python_version
(keep the checkout outside this repository: its code is not ours to commit)"""

Runner = Callable[[float], tuple[int, int]]


def reference_runner(folder: Path) -> Runner:
    """Random 2-player games of the reference engine (``GameTree`` + ``Random``)."""
    sys.path.insert(0, str(folder))
    main = importlib.import_module("main")
    players = importlib.import_module("players")
    ref_random = importlib.import_module("random")  # the reference draws from it
    ref_random.seed(1)

    def run(seconds: float) -> tuple[int, int]:
        games = actions = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            game = main.GameTree(
                [players.Random("A"), players.Random("B")], True, "A", print_info=False
            )
            while not game.is_end_state:
                game.next()
            games += 1
            actions += len(game.history)
        return games, actions

    return run


def ours_runner(variant: str, options: dict[str, Any], path: str) -> Runner:
    rng = random.Random(1)
    counter = [0]

    def run(seconds: float) -> tuple[int, int]:
        games = actions = 0
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            g = counter[0] = counter[0] + 1
            state = new_game(variant, 2, g, options)
            if path == "fast":
                actions += FastGame(state).random_playout(rng)
            elif path == "playout":
                actions += random_playout(state, rng)
            else:
                ais = [make_player("random", f"{g}:{s}") for s in range(2)]
                actions += play_game(state, ais, rng).actions
            games += 1
        return games, actions

    return run


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--reference", type=Path, help="jorisperrenet/durak's python_version")
    parser.add_argument("--seconds", type=float, default=2.0, help="per round and engine")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.reference is None or not (args.reference / "main.py").is_file():
        print(HOW_TO)  # not an error: `bash .ci/dev bench` runs every script bare
        return
    runners: dict[str, Runner] = {
        "reference": reference_runner(args.reference.resolve()),
        **{
            f"{variant} {path}": ours_runner(variant, options, path)
            for variant, options in (("chuvash", {}), ("shchelkovsky", {"decks": 2}))
            for path in ("play_game", "playout", "fast")
        },
    }
    for run in runners.values():
        run(0.2)  # warm-up (memos, imports)
    totals = {name: [0, 0, 0.0] for name in runners}
    for _ in range(args.rounds):
        for name, run in runners.items():
            t0 = time.perf_counter()
            games, actions = run(args.seconds)
            totals[name][0] += games
            totals[name][1] += actions
            totals[name][2] += time.perf_counter() - t0
    rows = {
        name: {"games_per_s": g / w, "actions_per_s": a / w, "mean_actions": a / g}
        for name, (g, a, w) in totals.items()
    }
    ref = rows["reference"]
    for row in rows.values():
        row["ratio_games"] = row["games_per_s"] / ref["games_per_s"]
        row["ratio_actions"] = row["actions_per_s"] / ref["actions_per_s"]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(
        f"{'engine (2 players, random)':<28}{'games/s':>9}{'actions/s':>11}{'act/game':>10}"
        f"{'ratio games':>13}{'ratio acts':>12}"
    )
    for name, r in rows.items():
        print(
            f"{name:<28}{r['games_per_s']:>9.0f}{r['actions_per_s']:>11.0f}"
            f"{r['mean_actions']:>10.1f}{r['ratio_games']:>13.2f}{r['ratio_actions']:>12.2f}"
        )


if __name__ == "__main__":
    main()
