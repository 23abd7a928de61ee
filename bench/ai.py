"""AI tournament: the search player against the heuristic, with 95% intervals.

    python bench/ai.py [--games N] [--quick] [--variants chuvash,shchelkovsky]
                       [--players 2,4] [--iterations K] [--steps K] [--timing-seconds S]
                       [--seed S] [--first G] [--beliefs on|off] [--epsilon E] [--expert]
                       [--budget-scale X] [--cpu-clock] [--jobs N] [--json]
    python bench/ai.py --ladder [--games N] [--fast-games N] [--levels random,easy,normal,hard,expert] ...

Per variant:

* 2 players, search vs heuristic: every deal is played twice with the seats
  swapped, so both players get both hands of every deal;
* 4 players, 1 search and 3 heuristic: the search player sits at every seat of a
  deal in turn (four games per deal);

it prints the search player's loss share with its 95% Wilson interval (the goal of
issue 15: at most 40% in 2-player games, well under 1 in 4 in 4-player games), and
the search player's decision time (median, p99) over every decision it made, plus
a timing-only run of 10-player 4-deck shchelkovsky (1 search, 9 heuristic).
Each chunk of games also names the games the search lost (stderr), so that two
runs on the same deals (``--seed``, ``--first``, ``--games``) compare game by game.
Default: 1,000 games per row (the issue's figure; that takes hours on one core:
``--jobs`` spreads the games over processes, at most one per core so that the
decision times stay one core's); ``--quick``: 40.

``--ladder`` (issue #26): a round robin of 2-player games between the levels
instead, ``--games`` deals per pair (each deal twice, seats swapped), and the
levels' ratings on one Elo-style scale with 95 % intervals (``bench/ladder.py``);
``--fast-games``: deals per pair without the search (those games take
milliseconds, the search's seconds).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.ladder import LADDER, pair_games, table
from engine.actions import Action
from engine.ai import LEVELS, SLOW_KINDS, HeuristicPlayer, SearchConfig, SearchPlayer
from engine.ai.base import Player
from engine.ai.endgame import DEFAULT_NODE_LIMIT
from engine.ai.search import DEFAULT_PLAYOUT_LIMIT, EXPERT_SCALE
from engine.selfplay import play_game
from engine.setup import new_game
from engine.state import OVER_PHASE, GameState

OPTIONS: dict[str, dict[str, Any]] = {"chuvash": {}, "shchelkovsky": {"decks": 2}}


@dataclass
class Timed:
    """A player whose every decision is timed (``perf_counter``; ``--cpu-clock``:
    the process's CPU time, which other processes on the machine do not inflate)."""

    inner: SearchPlayer
    times: list[float] = field(default_factory=list)
    name: str = "search"
    clock: Callable[[], float] = time.perf_counter

    def choose(self, state: GameState, seat: int) -> Action | None:
        t0 = self.clock()
        action = self.inner.choose(state, seat)
        self.times.append(self.clock() - t0)
        return action


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a share ``k / n``."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def games_range(
    variant: str,
    players: int,
    start: int,
    stop: int,
    seed: int,
    config: SearchConfig,
    cpu: bool = False,
) -> dict[str, Any]:
    """Games ``start`` .. ``stop - 1`` of a row; game ``g`` deals deal ``g // players``
    with the search player at seat ``g % players`` (the others: heuristic).  Each
    game has its own seeds, so a row's result does not depend on how it is split
    over processes (``--jobs``)."""
    losses = draws = unfinished = 0
    lost: list[int] = []
    times: list[float] = []
    for g in range(start, stop):
        deal, seat = divmod(g, players)
        state = new_game(variant, players, f"bench:{seed}:{deal}", OPTIONS[variant])
        timed = Timed(SearchPlayer(f"{seed}:{g}", config), clock=_clock(cpu))
        ais: list[Player] = [
            timed if s == seat else HeuristicPlayer(f"{seed}:{g}:{s}") for s in range(players)
        ]
        result = play_game(state, ais, random.Random(f"{seed}:{g}"))
        times += timed.times
        draws += result.draw
        unfinished += not result.finished
        losses += result.loser == seat
        if result.loser == seat:
            lost.append(g)
    return {
        "variant": variant,
        "players": players,
        "games": stop - start,
        "start": start,
        "stop": stop,
        "search_losses": losses,
        "draws": draws,
        "unfinished": unfinished,
        "lost": lost,
        "times": times,
    }


def finish_row(parts: list[dict[str, Any]], wall: float) -> dict[str, Any]:
    """One row from its parts: loss share with its 95% Wilson interval."""
    games = sum(p["games"] for p in parts)
    losses = sum(p["search_losses"] for p in parts)
    low, high = wilson(losses, games)
    players = parts[0]["players"]
    return {
        "variant": parts[0]["variant"],
        "players": players,
        "games": games,
        "search_losses": losses,
        "draws": sum(p["draws"] for p in parts),
        "unfinished": sum(p["unfinished"] for p in parts),  # play_game's bound (never seen)
        "loss_share": losses / games if games else 0.0,
        "ci95": [low, high],
        "fair_share": 1 / players,
        "wall_s": wall,
        "decision": summary([t for p in parts for t in p["times"]]),
    }


def run_rows(
    rows: list[tuple[str, int]],
    games: int,
    seed: int,
    config: SearchConfig,
    jobs: int,
    first: int = 0,
    cpu: bool = False,
) -> list[dict[str, Any]]:
    """Every row (games ``first`` .. ``first + games - 1``), its games split into chunks of whole deals over ``jobs``
    processes; each finished chunk prints the row's running count (stderr), so
    a long run shows where it stands."""
    chunk = max(1, 20 // max(p for _, p in rows)) * max(p for _, p in rows)
    tasks = [
        (row, start, min(first + games, start + chunk))
        for row in rows
        for start in range(first, first + games, chunk)
    ]
    parts: dict[tuple[str, int], list[dict[str, Any]]] = {row: [] for row in rows}
    started = {row: time.perf_counter() for row in rows}
    walls: dict[tuple[str, int], float] = {}

    def record(row: tuple[str, int], part: dict[str, Any]) -> None:
        parts[row].append(part)
        done = sum(p["games"] for p in parts[row])
        lost = sum(p["search_losses"] for p in parts[row])
        print(f"{row[0]} {row[1]}p: {done}/{games} games, search lost {lost}", file=sys.stderr)
        # the games lost, by number: two runs on the same deals compare game by game
        print(f"  lost games {part['start']}-{part['stop'] - 1}: {part['lost']}", file=sys.stderr)
        if done == games:  # the row's line now: a run stopped later keeps it
            walls[row] = time.perf_counter() - started[row]
            print("done: " + row_line(finish_row(parts[row], walls[row])), file=sys.stderr)

    if jobs <= 1:
        for row, start, stop in tasks:
            record(row, games_range(row[0], row[1], start, stop, seed, config, cpu))
    else:
        with ProcessPoolExecutor(jobs) as pool:
            futures = {
                pool.submit(games_range, row[0], row[1], start, stop, seed, config, cpu): row
                for row, start, stop in tasks
            }
            for future in as_completed(futures):
                record(futures[future], future.result())
    return [finish_row(parts[row], walls.get(row, 0.0)) for row in rows]


def timing_only(
    variant: str,
    players: int,
    options: dict[str, Any],
    seconds: float,
    config: SearchConfig,
    cpu: bool = False,
) -> list[float]:
    """Decision times of one search player among heuristics for ``seconds``."""
    times: list[float] = []
    rng = random.Random(7)
    start = time.perf_counter()
    g = 0
    while time.perf_counter() - start < seconds:
        state = new_game(variant, players, f"time:{g}", options)
        timed = Timed(SearchPlayer(g, config), clock=_clock(cpu))
        ais: list[Player] = [timed, *(HeuristicPlayer(f"{g}:{s}") for s in range(1, players))]
        g += 1
        while state.phase != OVER_PHASE and time.perf_counter() - start < seconds:
            seats = state.to_act()
            seat = seats[0] if len(seats) == 1 else rng.choice(seats)
            action = ais[seat].choose(state, seat)
            assert action is not None
            state.apply(action)
        times += timed.times
    return times


def _clock(cpu: bool) -> Callable[[], float]:
    return time.process_time if cpu else time.perf_counter


def summary(times: list[float]) -> dict[str, float]:
    if not times:
        return {"decisions": 0, "median_ms": float("nan"), "p99_ms": float("nan")}
    ordered = sorted(times)
    return {
        "decisions": len(ordered),
        "median_ms": statistics.median(ordered) * 1e3,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3,
    }


def row_line(r: dict[str, Any]) -> str:
    """One row of the printed table."""
    d = r["decision"]
    ci = f"{r['ci95'][0]:.3f}-{r['ci95'][1]:.3f}"
    return (
        f"{r['variant'] + ' ' + str(r['players']) + 'p':<20}{r['games']:>7}"
        f"{r['search_losses']:>8}{r['loss_share']:>8.3f}{ci:>16}{r['fair_share']:>7.2f}"
        f"{d['median_ms']:>9.1f}{d['p99_ms']:>9.1f}{r['wall_s']:>8.0f}"
    )


def run_ladder(
    variants: list[str],
    levels: list[str],
    deals: int,
    seed: int,
    jobs: int,
    fast_deals: int | None = None,
) -> dict[str, dict[tuple[str, str], list[float]]]:
    """Every pair of ``levels`` on ``deals`` deals of each variant (in chunks of
    10 deals, 2 for a pair with the search, over ``jobs`` processes): the first level's score in each game.  A
    pair without a slow level (the search) plays ``fast_deals`` deals when given:
    its games cost milliseconds, so its score can be pinned down far tighter."""
    pairs = [(a, b) for i, a in enumerate(levels) for b in levels[i + 1 :]]

    def pair_deals(pair: tuple[str, str]) -> int:
        if fast_deals is None or any(LEVELS.get(lvl, lvl) in SLOW_KINDS for lvl in pair):
            return deals
        return fast_deals

    def chunk(pair: tuple[str, str]) -> int:  # a slow pair's progress shows every 2 deals
        return 2 if any(LEVELS.get(lvl, lvl) in SLOW_KINDS for lvl in pair) else 10

    tasks = [
        (v, pair, start, min(pair_deals(pair), start + chunk(pair)))
        for v in variants
        for pair in pairs
        for start in range(0, pair_deals(pair), chunk(pair))
    ]
    results: dict[str, dict[tuple[str, str], list[float]]] = {
        v: {pair: [] for pair in pairs} for v in variants
    }
    parts: dict[tuple[str, tuple[str, str], int], list[float]] = {}

    def record(key: tuple[str, tuple[str, str], int], scores: list[float]) -> None:
        parts[key] = scores
        v, pair, _ = key
        got = [x for (v2, p2, _s), s in parts.items() if (v2, p2) == (v, pair) for x in s]
        print(
            f"{v} {pair[0]} vs {pair[1]}: {len(got)} games, {pair[0]} scored {sum(got):g}",
            file=sys.stderr,
        )

    if jobs <= 1:
        for v, pair, start, stop in tasks:
            record((v, pair, start), pair_games(v, *pair, start, stop, seed))
    else:
        with ProcessPoolExecutor(jobs) as pool:
            futures = {
                pool.submit(pair_games, v, *pair, start, stop, seed): (v, pair, start)
                for v, pair, start, stop in tasks
            }
            for future in as_completed(futures):
                record(futures[future], future.result())
    for (v, pair, _start), scores in sorted(parts.items()):
        results[v][pair] += scores  # in deal order, whatever the finishing order
    return results


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=1000, help="games per row (0: timing only)")
    parser.add_argument("--quick", action="store_true", help="40 games per row")
    parser.add_argument("--variants", default="chuvash,shchelkovsky")
    parser.add_argument("--players", default="2,4", help="player counts, e.g. 2 or 2,4")
    parser.add_argument(
        "--iterations", type=int, default=None, help="playouts (default: the search's own)"
    )
    parser.add_argument(
        "--steps", type=int, default=None, help="simulated actions (default: the search's own)"
    )
    parser.add_argument("--timing-seconds", type=float, default=20.0, help="10p 4-deck run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--first", type=int, default=0, help="the row's first game (to extend an earlier run)"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--solve-stock",
        type=int,
        default=0,
        help="2 players, at most this many cards in the stock: solve sampled deals",
    )
    parser.add_argument(
        "--margin", type=float, default=0.03, help="how much a deviation must score better"
    )
    parser.add_argument(
        "--z", type=float, default=0.0, help="standard errors a deviation must win by"
    )
    parser.add_argument(
        "--halving", action="store_true", help="the second half of the budget on the better half"
    )
    parser.add_argument(
        "--playout-policy",
        default=None,
        help="the search's playouts: greedy or heuristic (default: the variant's)",
    )
    parser.add_argument(
        "--epsilon", type=float, default=0.1, help="the share of random moves in playouts"
    )
    parser.add_argument(
        "--playout-limit", type=int, default=DEFAULT_PLAYOUT_LIMIT, help="actions per playout"
    )
    parser.add_argument(
        "--search-stock",
        type=int,
        default=None,
        help="search only with at most this many cards in the stock, else the heuristic's"
        " move (default: the variant's; a big number: always)",
    )
    parser.add_argument(
        "--endgame-nodes",
        type=int,
        default=DEFAULT_NODE_LIMIT,
        help="the exact endgame's nodes a decision (0: never solve)",
    )
    parser.add_argument(
        "--solve-nodes", type=int, default=300, help="--solve-stock's nodes a sampled deal"
    )
    parser.add_argument(
        "--beliefs",
        choices=["on", "off"],
        default=None,
        help="deal the hidden cards by beliefs from the opponents' play, or uniformly"
        " (default: the variant's, DEFAULT_BELIEFS)",
    )
    parser.add_argument("--no-beliefs", action="store_true", help="--beliefs off")
    parser.add_argument(
        "--expert",
        action="store_true",
        help="the expert level's budget (EXPERT_SCALE times the hard level's)",
    )
    parser.add_argument(
        "--budget-scale",
        type=float,
        default=None,
        help="the default budget times this (on top of the variant's BUDGET_SCALE;"
        " default 1, --expert: EXPERT_SCALE)",
    )
    parser.add_argument(
        "--cpu-clock",
        action="store_true",
        help="time decisions by the process's CPU time (a busy machine's wall time lies)",
    )
    parser.add_argument("--ladder", action="store_true", help="the levels' round robin")
    parser.add_argument("--levels", default=",".join(LADDER), help="--ladder's levels")
    parser.add_argument(
        "--fast-games",
        type=int,
        default=None,
        help="--ladder: deals per pair of levels without the search (default: --games)",
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="processes (one per core: decision times hold)"
    )
    return parser


def search_config(args: argparse.Namespace) -> SearchConfig:
    """The search player's options from the command line."""
    return SearchConfig(
        iterations=args.iterations,
        steps=args.steps,
        solve_stock=args.solve_stock,
        z=args.z,
        margin=args.margin,
        halving=args.halving,
        playout_policy=args.playout_policy,
        playout_epsilon=args.epsilon,
        playout_limit=args.playout_limit,
        search_stock=args.search_stock,
        endgame_nodes=args.endgame_nodes,
        solve_nodes=args.solve_nodes,
        beliefs=False if args.no_beliefs else {"on": True, "off": False, None: None}[args.beliefs],
        budget_scale=(args.budget_scale or 1.0) * (EXPERT_SCALE if args.expert else 1.0),
    )


def main() -> None:
    args = build_parser().parse_args()
    games = 40 if args.quick else args.games
    if args.ladder:
        variants = [v.strip() for v in args.variants.split(",") if v.strip()]
        levels = [lvl.strip() for lvl in args.levels.split(",") if lvl.strip()]
        ladder = run_ladder(variants, levels, games, args.seed, args.jobs, args.fast_games)
        if args.json:
            print(
                json.dumps(
                    {
                        v: {f"{a}:{b}": s for (a, b), s in pairs.items()}
                        for v, pairs in ladder.items()
                    }
                )
            )
            return
        fast = "" if args.fast_games is None else f" ({args.fast_games} without hard)"
        print(
            f"AI ladder: {games} deals per pair{fast} (each twice, seats swapped), seed {args.seed}"
        )
        for v, pairs in ladder.items():
            print("\n".join(table(v, levels, pairs)))
        return
    config = search_config(args)
    wanted = [
        (variant, players)
        for variant in [v.strip() for v in args.variants.split(",") if v.strip()]
        for players in [int(p) for p in args.players.split(",")]
    ]
    # --games 0: only the 10-player timing run
    rows = (
        run_rows(wanted, games, args.seed, config, args.jobs, args.first, args.cpu_clock)
        if wanted and games > 0
        else []
    )
    ten = summary(
        timing_only("shchelkovsky", 10, {"decks": 4}, args.timing_seconds, config, args.cpu_clock)
        if args.timing_seconds > 0
        else []
    )
    if args.json:
        print(
            json.dumps(
                {
                    "iterations": args.iterations,
                    "steps": args.steps,
                    "rows": rows,
                    "ten_players": ten,
                }
            )
        )
        return
    size = (
        ("the expert budget" if args.expert else "the default budget")
        if args.iterations is None and args.steps is None
        else f"{args.iterations or 'default'} playouts, {args.steps or 'default'} steps"
    )
    clock = ", CPU-time decisions" if args.cpu_clock else ""
    print(f"search ({size}) vs heuristic, seed {args.seed}{clock}")
    print(
        f"{'config':<20}{'games':>7}{'losses':>8}{'share':>8}{'95% CI':>16}{'fair':>7}"
        f"{'p50 ms':>9}{'p99 ms':>9}{'wall s':>8}"
    )
    for r in rows:
        print(row_line(r))
    print(
        f"{'shchelkovsky 10p 4d':<20}{'decisions ' + str(ten['decisions']):>46}"
        f"{ten['median_ms']:>9.1f}{ten['p99_ms']:>9.1f}"
    )


if __name__ == "__main__":
    main()
