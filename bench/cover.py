"""The defender's cover plan in its worst case, before and after #38 point 19.

    python bench/cover.py [--cards 8,9,10] [--repeat N] [--json]

``cover_plan`` (``engine/ai/cover.py``) runs on the event loop for the normal
level (and takeovers, and the AI pool's fallback).  Its worst case: many attack
cards sharing their cheapest beaters -- here low hearts and diamonds against a
Shchelkovsky hand of twelve low trumps, so that every assignment of the cheapest
trumps costs the same and the former search's bound cuts nothing.  For 8, 9 and
10 uncovered cards (Shchelkovsky allows 10, S10) it prints the time and the work
of the former exact search (``reference_cover_plan``: nodes; one run, it takes
seconds at 10 cards) and of the Hungarian method (``cover_plan_steps``: reduced
costs looked at; the median of ``--repeat`` runs), and checks that both find a
plan of the same cost.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.ai.cover import cover_plan_steps, reference_cover_plan
from engine.ai.values import shchelkovsky_values
from engine.cards import parse_cards
from engine.variants import beaters

TRUMP = 3  # spades
ATTACKS = parse_cards(["2H", "3H", "4H", "5H", "6H", "2D", "3D", "4D", "5D", "6D"])
HAND = parse_cards(["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "JS", "QS", "KS"])


def measure(k: int, repeat: int) -> dict[str, Any]:
    """The former search once, the Hungarian method ``repeat`` times, on ``k`` cards."""
    beat = beaters("shchelkovsky", TRUMP)
    values = shchelkovsky_values(TRUMP, True)
    attacks = ATTACKS[:k]
    t0 = time.perf_counter()
    before, nodes = reference_cover_plan(attacks, HAND, beat, values)
    before_s = time.perf_counter() - t0
    times: list[float] = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        after, steps = cover_plan_steps(attacks, HAND, beat, values)
        times.append(time.perf_counter() - t0)
    assert before is not None
    assert after is not None
    assert before[0] == after[0], (before, after)
    return {
        "cards": k,
        "before_s": before_s,
        "before_nodes": nodes,
        "after_s": statistics.median(times),
        "after_steps": steps,
        "cost": after[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--cards", default="8,9,10", help="uncovered card counts (<= 10)")
    parser.add_argument("--repeat", type=int, default=200, help="runs of the new method")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    rows = [measure(int(k), args.repeat) for k in args.cards.split(",")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'cards':>5}{'before s':>12}{'nodes':>12}{'after ms':>12}{'steps':>8}{'cost':>8}")
    for r in rows:
        print(
            f"{r['cards']:>5}{r['before_s']:>12.3f}{r['before_nodes']:>12}"
            f"{r['after_s'] * 1e3:>12.3f}{r['after_steps']:>8}{r['cost']:>8.0f}"
        )


if __name__ == "__main__":
    main()
