"""The AI ladder (issue #26): every level on one rating scale.

``python bench/ai.py --ladder`` plays a round robin of two-player games between
the AI levels -- ``random``, ``easy``, ``normal`` (the heuristic player),
``hard`` (the search player) and ``expert`` (the search on four times the
budget, #43) -- in both variants: every pair meets on
``--games`` deals, each deal played twice with the seats swapped.  A game is a
win for the player who is not the loser, half a point each for a draw (RULES §0).

Ratings: the Bradley-Terry model fitted by maximum likelihood (Hunter's MM
iterations), on the Elo scale (400 points = 10 : 1 odds), ``random`` pinned at
0.  One virtual draw per pair is added (as BayesElo does) so that a level that
never loses to another still gets a finite rating.  The 95 % intervals come from
a seeded bootstrap: each pair's games are drawn again with replacement and the
ratings fitted again, 200 times; the 2.5th and 97.5th percentiles are shown.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from engine.ai import LEVELS, make_player
from engine.ai.base import Player
from engine.selfplay import play_game
from engine.setup import new_game

LADDER: tuple[str, ...] = ("random", "easy", "normal", "hard", "expert")
OPTIONS: dict[str, dict[str, Any]] = {"chuvash": {}, "shchelkovsky": {"decks": 2}}
PRIOR_DRAWS = 1.0
BOOTSTRAP = 200


def level_player(level: str, seed: str) -> Player:
    return make_player(LEVELS.get(level, level), seed)


def pair_games(variant: str, a: str, b: str, start: int, stop: int, seed: int) -> list[float]:
    """Deals ``start`` .. ``stop - 1`` between levels ``a`` and ``b``, each deal
    twice with the seats swapped: ``a``'s score in each game (1, 0.5, 0)."""
    scores: list[float] = []
    for deal in range(start, stop):
        for a_seat in (0, 1):
            state = new_game(variant, 2, f"ladder:{seed}:{a}:{b}:{deal}", OPTIONS[variant])
            tag = f"{seed}:{deal}:{a_seat}"
            players = [level_player(a, f"{tag}:a"), level_player(b, f"{tag}:b")]
            if a_seat == 1:
                players.reverse()
            result = play_game(state, players, random.Random(tag))
            if result.draw or result.loser is None:
                scores.append(0.5)
            else:
                scores.append(0.0 if result.loser == a_seat else 1.0)
    return scores


def fit(
    levels: Sequence[str],
    results: Mapping[tuple[str, str], Sequence[float]],
    prior: float = PRIOR_DRAWS,
    anchor: str | None = None,
) -> dict[str, float]:
    """Bradley-Terry ratings on the Elo scale from each pair's scores (the first
    level's score in each game of the pair); ``anchor`` (default: the first
    level) is pinned at 0."""
    index = {lvl: i for i, lvl in enumerate(levels)}
    n = len(levels)
    wins = [0.0] * n
    games = [[0.0] * n for _ in range(n)]
    for (a, b), scores in results.items():
        i, j = index[a], index[b]
        got = sum(scores) + prior / 2
        wins[i] += got
        wins[j] += len(scores) + prior - got
        games[i][j] += len(scores) + prior
        games[j][i] += len(scores) + prior
    gamma = [1.0] * n
    for _ in range(10_000):
        new = []
        for i in range(n):
            denom = sum(games[i][j] / (gamma[i] + gamma[j]) for j in range(n) if games[i][j])
            new.append(wins[i] / denom if denom else gamma[i])
        norm = math.exp(sum(math.log(g) for g in new) / n)
        new = [g / norm for g in new]
        done = max(abs(math.log(x / y)) for x, y in zip(new, gamma, strict=True)) < 1e-10
        gamma = new
        if done:
            break
    base = gamma[index[anchor or levels[0]]]
    return {lvl: 400 * math.log10(gamma[index[lvl]] / base) for lvl in levels}


def bootstrap(
    levels: Sequence[str],
    results: Mapping[tuple[str, str], Sequence[float]],
    rounds: int = BOOTSTRAP,
    seed: int = 26,
) -> dict[str, tuple[float, float]]:
    """95 % intervals of :func:`fit`'s ratings by resampling each pair's games."""
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {lvl: [] for lvl in levels}
    for _ in range(rounds):
        again = {pair: [rng.choice(s) for _ in s] if s else [] for pair, s in results.items()}
        for lvl, r in fit(levels, again).items():
            samples[lvl].append(r)
    out = {}
    for lvl, values in samples.items():
        values.sort()
        out[lvl] = (values[int(0.025 * len(values))], values[int(0.975 * len(values)) - 1])
    return out


def table(
    variant: str, levels: Sequence[str], results: Mapping[tuple[str, str], Sequence[float]]
) -> list[str]:
    """The printed ladder of one variant: ratings with intervals, then each pair's
    score."""
    ratings = fit(levels, results)
    intervals = bootstrap(levels, results)
    lines = [f"{variant}: 2-player round robin, Bradley-Terry / Elo scale, random = 0"]
    lines.append(f"  {'level':<8}{'rating':>8}{'95% interval':>18}{'gap to the one below':>24}")
    below: float | None = None
    for lvl in levels:
        lo, hi = intervals[lvl]
        gap = "" if below is None else f"{ratings[lvl] - below:+.0f}"
        lines.append(f"  {lvl:<8}{ratings[lvl]:>8.0f}{f'{lo:.0f} .. {hi:.0f}':>18}{gap:>24}")
        below = ratings[lvl]
    for (a, b), scores in results.items():
        share = sum(scores) / len(scores) if scores else float("nan")
        lines.append(f"  {a} vs {b}: {len(scores)} games, {a} scored {share:.3f}")
    return lines
