"""``bench/ai.py`` (issue 15's tournament) runs and reports what it played.

Tiny budgets: these check the script's accounting, not the AI's strength."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]

# one worker runs these one after another (#37): the soak's three bot processes
# never share the two cores with the CPU-bound solver and tournament tests
pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("heavy"),
]  # each runs bench/ai.py as a process


def bench(*args: str) -> dict[str, Any]:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "ai.py"),
            "--json",
            "--iterations",
            "4",
            "--steps",
            "200",
            *args,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def test_a_row_counts_every_game_and_its_losses() -> None:
    result = bench(
        "--games", "4", "--variants", "chuvash", "--players", "2", "--timing-seconds", "0"
    )
    [row] = result["rows"]
    assert (row["variant"], row["players"], row["games"]) == ("chuvash", 2, 4)
    assert 0 <= row["search_losses"] <= 4
    assert row["ci95"][0] <= row["loss_share"] <= row["ci95"][1]
    assert row["decision"]["decisions"] > 0


def test_games_zero_runs_only_the_ten_player_timing() -> None:
    result = bench("--games", "0", "--timing-seconds", "0.5")
    assert result["rows"] == []
    assert result["ten_players"]["decisions"] > 0


def test_the_ladder_plays_every_pair_both_ways() -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "ai.py"),
            "--ladder",
            "--json",
            "--games",
            "2",
            "--levels",
            "random,easy,normal",
            "--variants",
            "chuvash",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout)
    pairs = result["chuvash"]
    assert set(pairs) == {"random:easy", "random:normal", "easy:normal"}
    for scores in pairs.values():
        assert len(scores) == 4  # two deals, each with the seats swapped
        assert set(scores) <= {0.0, 0.5, 1.0}


def test_the_ladder_plays_more_deals_where_no_search_plays() -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "ai.py"),
            "--ladder",
            "--json",
            "--games",
            "1",
            "--fast-games",
            "3",
            "--levels",
            "random,easy,hard",
            "--variants",
            "chuvash",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    pairs = json.loads(out.stdout)["chuvash"]
    # each deal twice: 3 deals without the search, 1 with it
    assert {pair: len(scores) for pair, scores in pairs.items()} == {
        "random:easy": 6,
        "random:hard": 2,
        "easy:hard": 2,
    }


def test_the_ladder_fit_recovers_known_ratings() -> None:
    sys.path.insert(0, str(ROOT))
    from bench.ladder import bootstrap, fit

    # a level 200 points above another scores 1 / (1 + 10 ** (-200 / 400)) = 0.760
    rng = random.Random(26)
    truth = {"a": 0.0, "b": 200.0, "c": 400.0}
    results: dict[tuple[str, str], list[float]] = {}
    for x, y in (("a", "b"), ("a", "c"), ("b", "c")):
        p = 1 / (1 + 10 ** ((truth[y] - truth[x]) / 400))
        results[(x, y)] = [1.0 if rng.random() < p else 0.0 for _ in range(4000)]
    ratings = fit(["a", "b", "c"], results)
    assert ratings["a"] == 0.0
    assert abs(ratings["b"] - 200) < 30
    assert abs(ratings["c"] - 400) < 30
    intervals = bootstrap(["a", "b", "c"], results, rounds=50)
    for level in ("b", "c"):
        low, high = intervals[level]
        assert low <= ratings[level] <= high
    # a level that never loses still gets a finite rating (the prior's virtual draw)
    one_sided = {("a", "b"): [0.0] * 50}
    assert 0 < fit(["a", "b"], one_sided)["b"] < 2000


def test_the_search_options_reach_the_player() -> None:
    # the same deals with other playouts: every option is accepted and played
    rows = {}
    for extra in ([], ["--playout-policy", "greedy", "--halving", "--epsilon", "0.3"]):
        result = bench(
            "--games",
            "2",
            "--variants",
            "chuvash",
            "--players",
            "2",
            "--timing-seconds",
            "0",
            *extra,
        )
        [row] = result["rows"]
        assert row["games"] == 2
        rows[tuple(extra)] = row["decision"]["decisions"]
    assert all(n > 0 for n in rows.values())


def test_an_unknown_playout_policy_is_refused() -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "ai.py"),
            "--games",
            "1",
            "--timing-seconds",
            "0",
            "--playout-policy",
            "perfect",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0
    assert "unknown playout policy" in out.stderr


def test_the_expert_budget_the_cpu_clock_and_the_ladder_with_expert() -> None:
    """#43: ``--expert`` plays the expert level's budget against the heuristic,
    ``--cpu-clock`` times decisions by CPU time, and the ladder's default levels
    end with expert."""
    import time

    sys.path.insert(0, str(ROOT))
    from bench.ai import Timed, _clock, build_parser, search_config
    from bench.ladder import LADDER
    from engine.ai import SearchPlayer
    from engine.ai.search import EXPERT, EXPERT_SCALE, HARD

    parser = build_parser()
    assert search_config(parser.parse_args([])) == HARD
    assert search_config(parser.parse_args(["--expert"])) == EXPERT
    assert EXPERT.budget_scale == EXPERT_SCALE
    assert search_config(parser.parse_args(["--epsilon", "0.2"])).playout_epsilon == 0.2
    assert _clock(True) is time.process_time
    assert _clock(False) is time.perf_counter
    timed = Timed(SearchPlayer(0), clock=_clock(True))
    assert timed.clock is time.process_time
    assert LADDER[-2:] == ("hard", "expert")


def test_a_row_names_the_games_it_lost_and_takes_a_budget_scale() -> None:
    """#43: two runs on the same deals compare game by game (a paired comparison),
    so each chunk names the games the search lost; ``--budget-scale`` multiplies the
    default budget as the expert level's scale does."""
    sys.path.insert(0, str(ROOT))
    from bench.ai import build_parser, games_range, search_config
    from engine.ai.search import EXPERT_SCALE, SearchConfig

    parser = build_parser()
    assert search_config(parser.parse_args(["--budget-scale", "1.5"])).budget_scale == 1.5
    both = parser.parse_args(["--budget-scale", "1.5", "--expert"])
    assert search_config(both).budget_scale == 1.5 * EXPERT_SCALE
    part = games_range("chuvash", 2, 2, 6, 26, SearchConfig(iterations=4, steps=200))
    assert (part["start"], part["stop"]) == (2, 6)
    assert len(part["lost"]) == part["search_losses"]
    assert set(part["lost"]) <= set(range(2, 6))
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "ai.py"),
            *("--games", "4", "--first", "2", "--variants", "chuvash", "--players", "2"),
            *("--timing-seconds", "0", "--iterations", "4", "--steps", "200", "--seed", "26"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert f"lost games 2-5: {part['lost']}" in out.stderr
