"""The ratings' maths and values (#25, #38): the figure shown, a rating, the
openskill update (:func:`rate`: the Weng-Lin Plackett-Luce model, nothing of
it written here), and what a settlement, a player's ratings, a leaderboard
row and a recompute are.  Pure: no Redis, no rules -- who counts against
whom is :mod:`tables.rating_rules`, the store :mod:`tables.ratings`.

**The maths** is the ``openskill`` library's Weng-Lin Plackett-Luce model
(ranked results of 2 to 10 players): a game ranks its players by the order
they went out, the loser last, a draw's players tied (:func:`tables.rating_rules.ranks`).  A
rating is ``(mu, sigma)``; the figure shown is the conservative
``1000 + 30 * (mu - 3 sigma)``, never below 0 (:func:`shown`); a player is
*provisional* ("1120?") while ``sigma`` is at least
:data:`PROVISIONAL_SIGMA`.  ``docs/RATINGS.md`` explains it in plain words.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openskill.models import PlackettLuce

VARIANTS = ("chuvash", "shchelkovsky")
DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3
PROVISIONAL_SIGMA = 6.5
"""A rating is provisional while its sigma is at least this (about 10 games of
two, 12 of four, 17 of six from the start's 8.33)."""
BASE, SCALE = 1000, 30
LOG_SHARDS = 8
"""The ratings log is split into this many streams, by table, one slot each;
a game's settlement sits beside its stream (#38).  Fixed: every process
must find a game's settlement where the others wrote it."""


def shown(mu: float, sigma: float) -> int:
    """The rating a player sees: conservative (``mu - 3 sigma``), scaled."""
    return max(0, round(BASE + SCALE * (mu - 3 * sigma)))


def provisional(sigma: float) -> bool:
    return sigma >= PROVISIONAL_SIGMA


@dataclass(frozen=True)
class Rating:
    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA
    games: int = 0

    @property
    def shown(self) -> int:
        return shown(self.mu, self.sigma)

    @property
    def provisional(self) -> bool:
        return provisional(self.sigma)

    @property
    def label(self) -> str:
        return f"{self.shown}?" if self.provisional else str(self.shown)

    def to_json(self) -> str:
        return json.dumps([self.mu, self.sigma, self.games])

    @classmethod
    def from_json(cls, raw: str | bytes | None) -> Rating:
        if raw is None:
            return cls()
        mu, sigma, games = json.loads(raw)
        return cls(float(mu), float(sigma), int(games))

    def public(self) -> dict[str, Any]:
        return {
            "rating": self.shown,
            "provisional": self.provisional,
            "games": self.games,
            "mu": self.mu,
            "sigma": self.sigma,
        }


_MODEL = PlackettLuce()


def rate(before: Sequence[Rating], order: Sequence[int]) -> list[Rating]:
    """The ratings after one game of these players ranked ``order`` (1 best)."""
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    after = _MODEL.rate(teams, ranks=[float(k) for k in order])
    return [
        Rating(float(t[0].mu), float(t[0].sigma), r.games + 1)
        for t, r in zip(after, before, strict=True)
    ]


@dataclass(frozen=True)
class Eligibility:
    """#38, read at a rated game's start (:meth:`tables.ratings.Ratings.eligibility`):
    the users whose account is not established (``fresh``), the pairs (lower
    user first) of the others past the farming guard (``capped``), and those
    of the rest that fail the opponent-diversity guard (``narrow``)."""

    fresh: tuple[int, ...] = ()
    capped: tuple[tuple[int, int], ...] = ()
    narrow: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class Change:
    """One player's part of a settled game."""

    user: int
    seat: int
    before: int
    after: int
    provisional: bool
    games: int
    moved: bool = True
    """#38: his rating moved (False: listed unchanged -- a new player, an
    excused seat, a capped pair's player with no other opponent)."""

    @property
    def delta(self) -> int:
        return self.after - self.before


@dataclass(frozen=True)
class Settlement:
    """What a finished game did to its players: ``counted`` (it moved ratings),
    else ``why`` (``casual``, ``ai_seat`` -- casual by an AI seat --,
    ``abandoned``, ``pair_limit``, ``pair_diversity``, ``new_players``,
    ``operator``); the change of each human whose rating moved; the offences
    it brought (user -> cooldown seconds now, 0: a warning); #38: the seats of
    new players (``fresh``: their game was casual) and the pairs of seats
    whose result against each other did not count (``capped``: the farming
    guard; ``narrow``: the opponent-diversity guard)."""

    table: str
    game: int
    variant: str
    counted: bool
    why: str = ""
    changes: tuple[Change, ...] = ()
    offences: Mapping[int, float] = field(default_factory=dict)
    fresh: tuple[int, ...] = ()
    capped: tuple[tuple[int, int], ...] = ()
    narrow: tuple[tuple[int, int], ...] = ()

    def change_of(self, user: int) -> Change | None:
        return next((c for c in self.changes if c.user == user), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "game": self.game,
            "variant": self.variant,
            "counted": self.counted,
            "why": self.why,
            "changes": [
                {
                    "user": c.user,
                    "seat": c.seat,
                    "before": c.before,
                    "after": c.after,
                    "provisional": c.provisional,
                    "games": c.games,
                    **({} if c.moved else {"moved": False}),
                }
                for c in self.changes
            ],
            "offences": {str(u): s for u, s in self.offences.items()},
            **({"fresh": list(self.fresh)} if self.fresh else {}),
            **({"capped": [list(p) for p in self.capped]} if self.capped else {}),
            **({"narrow": [list(p) for p in self.narrow]} if self.narrow else {}),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Settlement:
        return cls(
            table=d["table"],
            game=d["game"],
            variant=d["variant"],
            counted=d["counted"],
            why=d.get("why", ""),
            changes=tuple(Change(**c) for c in d.get("changes", ())),
            offences={int(u): float(s) for u, s in d.get("offences", {}).items()},
            fresh=tuple(d.get("fresh", ())),
            capped=tuple((int(a), int(b)) for a, b in d.get("capped", ())),
            narrow=tuple((int(a), int(b)) for a, b in d.get("narrow", ())),
        )


@dataclass(frozen=True)
class PlayerRatings:
    """A player's ratings per variant, reliability and cooldown."""

    user: int
    name: str
    ratings: Mapping[str, Rating]
    reliability: float | None  # None: no finished game yet
    recent: int  # games the reliability counts
    cooldown_until: int | None  # epoch ms, None: none
    offences: int  # in the window

    def to_json(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "name": self.name,
            "ratings": {v: self.ratings.get(v, Rating()).public() for v in VARIANTS},
            "reliability": self.reliability,
            "recent_games": self.recent,
            "cooldown_until": self.cooldown_until,
            "offences": self.offences,
        }


@dataclass(frozen=True)
class BoardRow:
    user: int
    name: str
    rating: int
    provisional: bool
    games: int

    def to_json(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "name": self.name,
            "rating": self.rating,
            "provisional": self.provisional,
            "games": self.games,
        }


@dataclass(frozen=True)
class Recomputed:
    """:meth:`Ratings.recompute`: games replayed, players, and those whose
    stored rating differs from the replay (none, or something wrote around
    the log)."""

    games: int
    players: int
    mismatches: tuple[tuple[int, str, Rating, Rating], ...]  # user, variant, stored, replayed
