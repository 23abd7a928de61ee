"""``bench/ai.py`` (issue 15's tournament) runs and reports what it played.

Tiny budgets: these check the script's accounting, not the AI's strength."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


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
