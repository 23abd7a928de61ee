"""The ratings' values and maths (#25, #38): the figures shown, a rating, the
ranks of a game (:func:`ranks`), who moves against whom (:func:`moves`), the
openskill update (:func:`rate`), the rules, and what a settlement did.  Pure:
no Redis -- :mod:`tables.ratings` stores them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from openskill.models import PlackettLuce

from tables.records import GameResult

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


def ranks(result: GameResult) -> dict[int, int]:
    """Each human seat's rank in ``result`` (1 best; ties share one): its place,
    the order they went out, the loser last; a draw's last players share their
    place (:func:`tables.games.finish_places`, #38), so they tie here; a seat
    whose human walked away ranks below everyone who did not (tied with the
    others who did).  A seat an operator handed to the AI and the AI played to
    the end (``result.excused``) is not ranked: his rating does not move (#38)."""
    n = len(result.seats)
    out: dict[int, int] = {}
    for seat, (user, _name) in enumerate(result.seats):
        if user is None or seat in result.excused:
            continue
        out[seat] = n + 1 if seat in result.away else result.places[seat]
    return out


def pair_of(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def moves(
    result: GameResult,
    before: Mapping[int, Rating],
    capped: Iterable[tuple[int, int]] = (),
) -> dict[int, Rating]:
    """The new rating of each player of ``result`` whose rating moves (#38):
    a new player (``result.fresh``) moves no one and is moved by no one; a
    pair in ``capped`` or ``result.capped`` (the farming guard) or in
    ``result.narrow`` (the opponent-diversity guard) does not count against
    each other.  Each other player is rated, with the model, in the game of
    himself and the opponents whose pair with him counts -- his rank among
    them as in the whole game (:func:`ranks`) --; alone, he does not move.
    ``before``: the ratings of every player not new."""
    order = ranks(result)
    fresh = set(result.fresh)
    off = {pair_of(a, b) for a, b in (*capped, *result.capped, *result.narrow)}
    seats = [
        (s, u)
        for s, (u, _n) in enumerate(result.seats)
        if u is not None and u not in fresh and s in order  # an excused seat: unranked
    ]
    out: dict[int, Rating] = {}
    for s, u in seats:
        group = [(s2, u2) for s2, u2 in seats if s2 == s or (u2 != u and pair_of(u, u2) not in off)]
        if len(group) < 2:
            continue
        after = rate([before[u2] for _s, u2 in group], [order[s2] for s2, _u in group])
        out[u] = after[[s2 for s2, _u in group].index(s)]
    return out


def opponents_met(result: GameResult) -> dict[int, tuple[int, ...]]:
    """#38, the opponent-diversity guard: the people each human of ``result``
    finished it with (every other human, whether he walked away or not) --
    none for one whose seat the AI played at the end (``result.away``: he
    walked away, or an operator handed it over; he did not finish it
    himself).  The settlement writes them (:data:`tables.rating_scripts.APPLY_LUA`)
    and ``migrate-ratings`` fills them from the games recorded before
    (:mod:`tables.migrate`): one rule."""
    humans = [(s, u) for s, (u, _n) in enumerate(result.seats) if u is not None]
    away = set(result.away)
    return {
        u: () if s in away else tuple(sorted({v for _s, v in humans if v != u})) for s, u in humans
    }


def rate(before: Sequence[Rating], order: Sequence[int]) -> list[Rating]:
    """The ratings after one game of these players ranked ``order`` (1 best)."""
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    after = _MODEL.rate(teams, ranks=[float(k) for k in order])
    return [
        Rating(float(t[0].mu), float(t[0].sigma), r.games + 1)
        for t, r in zip(after, before, strict=True)
    ]


@dataclass(frozen=True)
class RatingRules:
    """The numbers of the farming guard, reliability and cooldowns."""

    pair_daily: int = 5
    """Counted rated games of the same two players in any 24 hours."""
    reliability_games: int = 20
    offence_window: float = 72 * 3600.0
    cooldown_first: float = 600.0
    """The cooldown of the second offence in the window (the first: a warning)."""
    cooldown_factor: float = 3.0
    cooldown_max: float = 3 * 86400.0
    history: int = 100
    game_ttl: float = 8 * 86400.0
    """How long a game's settlement is kept (the result message, a late retry)."""
    established_games: int = 5
    """#38: a rated game counts for a player only once he has finished this many
    games with other people (casual or rated) ...  (``LiveConfig.rated_after_games``)"""
    established_days: float = 2.0
    """... and his first such game is at least this many days old
    (``LiveConfig.rated_after_days``): a fresh second account farms nothing."""
    diversity_opponents: int = 3
    """#38, the opponent-diversity guard: a rated result between two players
    counts against each other only if each of them finished games (casual or
    rated) with at least this many other people besides the other one in the
    last :attr:`diversity_days` -- a second account that only ever plays its
    main feeds it nothing, even within :attr:`pair_daily`.  0: no such guard
    (``LiveConfig.rated_diversity_opponents``)."""
    diversity_days: float = 7.0
    """The window of :attr:`diversity_opponents` (``LiveConfig.rated_diversity_days``;
    0: no guard, and no opponents are kept)."""
    diversity_keep: int = 32
    """Opponents kept per player (the latest; enough to answer the guard)."""
    log_maxlen: int = 100_000
    """Entries each log stream keeps (``MAXLEN ~``, approximately)."""
    lease: float = 30.0
    """A settlement in progress holds its players this long before another
    process may take them over (it crashed, or Redis failed it)."""

    def established(self, first: int | None, played: int, now_ms: int) -> bool:
        """Whether rated games count for a player who finished ``played`` games
        with other people, the first at ``first`` (ms; None: none yet)."""
        if played < self.established_games:
            return False
        if self.established_days <= 0:
            return True
        return first is not None and first <= now_ms - int(self.established_days * 86_400_000)

    @property
    def diversity(self) -> bool:
        """Whether the opponent-diversity guard is on (#38)."""
        return self.diversity_opponents > 0 and self.diversity_days > 0

    @property
    def opponents_window(self) -> int:
        """Milliseconds a player's opponents are kept (0: not kept)."""
        return int(self.diversity_days * 86_400_000) if self.diversity_days > 0 else 0

    @property
    def opponents_kept(self) -> int:
        """Opponents kept per player at most: :attr:`diversity_keep`, and
        never too few to answer the guard."""
        return max(self.diversity_keep, self.diversity_opponents + 1)

    def diverse(self, opponents: Iterable[int], other: int) -> bool:
        """Whether a player whose opponents of the window are ``opponents``
        has enough of them besides ``other`` for their pair to count (#38)."""
        if not self.diversity:
            return True
        return len(set(opponents) - {other}) >= self.diversity_opponents

    def cooldown(self, offences: int) -> float:
        """Seconds of cooldown after the ``offences``-th offence in the window."""
        if offences < 2:
            return 0.0
        return min(self.cooldown_first * self.cooldown_factor ** (offences - 2), self.cooldown_max)


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
