"""The ratings part (#25): a rating per player and variant, reliability and the
cooldowns of rated games, updated once per finished game.

**The maths** is the ``openskill`` library's Weng-Lin Plackett-Luce model
(ranked results of 2 to 10 players): a game ranks its players by the order
they went out, the loser last, a draw's players tied (:func:`ranks`).  A
rating is ``(mu, sigma)``; the figure shown is the conservative
``1000 + 30 * (mu - 3 sigma)``, never below 0 (:func:`shown`); a player is
*provisional* ("1120?") while ``sigma`` is at least
:data:`PROVISIONAL_SIGMA`.  ``docs/RATINGS.md`` explains it in plain words.

**Which games count.**  A game is rated when its lobby chose rated games and
every seat was human at its start (an AI seat: casual).  A player who walked
away -- left, or the AI still plays his seat at the end -- ranks last (tied
with any other who did), whatever the AI made of his cards; a game everyone
walked away from counts for no one.  The same two players' rated games count
at most :attr:`RatingRules.pair_daily` times in any 24 hours (the farming
guard): a game past it is recorded, not counted.

**Reliability** is the share of a player's last 20 finished games (rated or
not) in which the AI never took his seat.  **Cooldowns**: walking away from a
rated game is an offence; the offences of the last 72 hours set the cooldown
before his next rated game: none for the first, then 10 minutes, x3 for each
more, at most 3 days (:meth:`RatingRules.cooldown`).  Casual games are never
blocked.  A voluntary leave is charged when he leaves (:meth:`Ratings.charge_leave`,
#38: a pending offence, the cooldown at once), not at the game's end -- he is
free to sit elsewhere meanwhile; the settlement confirms it (no second
offence) or undoes it (he took his seat back and played to the end, everyone
walked away: no offence by the rules above).

**Exactly once.**  Every key is in the hash tag ``{rt}`` (one slot), so one
script (:data:`tables.rating_scripts.SETTLE_LUA`) checks and writes everything a game changes: it
refuses a game already settled (its key ``g:<table>:<game>``), and it
compare-and-sets every player's ``rev``, read with his rating before the
maths -- a lost race reads and computes again.  A settled rated game is
appended to the ratings log (``log``) in that same script, so the log's order
is the order the ratings moved in: :meth:`Ratings.recompute` replays it from
the defaults and must land on the stored ratings exactly.

Keys (``P`` the prefix):

``P{rt}:r:<user>``      hash: ``<variant>`` -> JSON ``[mu, sigma, games]``,
                        ``rev`` (+1 on each settled game of his), ``name``
``P{rt}:rel:<user>``    list of ``1``/``0``, newest first: his last games, the
                        AI never took his seat in them (``1``) or did
``P{rt}:off:<user>``    zset ``<table>:<game>`` -> ms: his walkaways from rated
                        games (older than 72 h trimmed at his next one; the
                        reads count only the 72 h, #38)
``P{rt}:pend:<user>``   hash ``<table>:<game>`` -> the cooldown (ms) it set: his
                        leaves charged at once and not settled yet (#38)
``P{rt}:cool:<user>``   string JSON ``{"until", "n"}``, expiring then: the latest
                        end any offence in ``off`` sets (:data:`tables.rating_scripts.RECOOL_LUA`)
``P{rt}:h:<user>``      list of JSON history entries, newest first
``P{rt}:pair:<a>:<b>``  zset ``<table>:<game>`` -> ms: the two's counted rated
                        games in the last 24 h (``a < b``)
``P{rt}:top:<variant>`` zset user -> shown rating (established players)
``P{rt}:new:<variant>`` zset user -> shown rating (provisional players)
``P{rt}:g:<table>:<game>`` hash: ``s`` the game's settlement (JSON), ``o:<user>``
                        the cooldown (ms) of each offence; for the result
                        message, and against a second settlement
``P{rt}:log``           stream: every counted rated game, in settling order
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, cast

from openskill.models import PlackettLuce

from engine.clock import Clock
from tables.rating_scripts import CHARGE_LUA, SETTLE_LUA
from tables.records import GameResult
from tables.store import Store, text

VARIANTS = ("chuvash", "shchelkovsky")
DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3
PROVISIONAL_SIGMA = 6.5
"""A rating is provisional while its sigma is at least this (about 10 games of
two, 12 of four, 17 of six from the start's 8.33)."""
BASE, SCALE = 1000, 30


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

    def cooldown(self, offences: int) -> float:
        """Seconds of cooldown after the ``offences``-th offence in the window."""
        if offences < 2:
            return 0.0
        return min(self.cooldown_first * self.cooldown_factor ** (offences - 2), self.cooldown_max)


@dataclass(frozen=True)
class Change:
    """One player's part of a settled game."""

    user: int
    seat: int
    before: int
    after: int
    provisional: bool
    games: int

    @property
    def delta(self) -> int:
        return self.after - self.before


@dataclass(frozen=True)
class Settlement:
    """What a finished game did to its players: ``counted`` (it moved their
    ratings), else ``why`` (``casual``, ``ai_seat`` -- casual by an AI seat --,
    ``abandoned``, ``pair_limit``); each human's change when counted; the
    offences it brought (user -> cooldown seconds now, 0: a warning)."""

    table: str
    game: int
    variant: str
    counted: bool
    why: str = ""
    changes: tuple[Change, ...] = ()
    offences: Mapping[int, float] = field(default_factory=dict)

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
                }
                for c in self.changes
            ],
            "offences": {str(u): s for u, s in self.offences.items()},
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


def _settlement(fields: Mapping[Any, Any]) -> Settlement:
    """A game's key as :data:`SETTLE_LUA` wrote it: ``s`` the settlement, and
    ``o:<user>`` the cooldown (ms) each offence set."""
    f = {text(k): text(v) for k, v in fields.items()}
    s = Settlement.from_json(json.loads(f["s"]))
    offences = {int(k[2:]): int(v) / 1000 for k, v in f.items() if k.startswith("o:")}
    return replace(s, offences=offences) if offences else s


def _pair(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


class Ratings:
    """Settles finished games into ratings and answers the reads (#25)."""

    def __init__(
        self,
        store: Store,
        prefix: str,
        rules: RatingRules | None = None,
        clock: Clock = time.time,
    ) -> None:
        self.store = store
        self.rules = rules or RatingRules()
        self.clock = clock
        """Now, for the reads that depend on it (the offences in the window)."""
        self.base = f"{prefix}{{rt}}"
        self._settle = store.script(SETTLE_LUA)
        self._charge = store.script(CHARGE_LUA)

    # ---------------------------------------------------------------- keys
    def rating_key(self, user: int) -> str:
        return f"{self.base}:r:{user}"

    def _user_keys(self, user: int) -> list[str]:
        b = self.base
        return [f"{b}:r:{user}", f"{b}:rel:{user}", f"{b}:off:{user}", f"{b}:cool:{user}",
                f"{b}:h:{user}", f"{b}:pend:{user}"]  # fmt: skip

    def game_key(self, table: str, game: int) -> str:
        return f"{self.base}:g:{table}:{game}"

    @property
    def log_key(self) -> str:
        return f"{self.base}:log"

    def board_key(self, variant: str, provisional: bool = False) -> str:
        return f"{self.base}:{'new' if provisional else 'top'}:{variant}"

    def _pair_key(self, a: int, b: int) -> str:
        lo, hi = _pair(a, b)
        return f"{self.base}:pair:{lo}:{hi}"

    # -------------------------------------------------------------- settle
    async def settle(self, result: GameResult, now_ms: int | None = None) -> Settlement | None:
        """Count ``result`` once: ratings (when counted), reliability, offences.
        None for a game without humans.  A second call (another process, a
        retry) answers the first's settlement and changes nothing."""
        humans = [(s, u, name) for s, (u, name) in enumerate(result.seats) if u is not None]
        if not humans:
            return None
        now = result.at if now_ms is None else now_ms
        gid = f"{result.table}:{result.game}"
        users = [u for _, u, _ in humans]
        away = set(result.away)
        taken = set(result.taken)
        everyone_away = all(s in away for s, _, _ in humans)
        rated = result.rated and len(humans) == len(result.seats) >= 2
        why = "" if rated else ("ai_seat" if result.rated else "casual")
        if rated and everyone_away:
            why = "abandoned"
        order = ranks(result)
        if rated and not everyone_away and len(order) < 2:
            why = "operator"  # #38: operators' takeovers left fewer than two ranked
        counted = rated and not everyone_away and len(order) >= 2
        # walking away from a rated game is an offence -- unless everyone did
        walked = [u for s, u, _ in humans if s in away and s in taken and counted]
        for _ in range(50):
            got = await self.store.run(
                lambda p: (
                    [
                        (
                            p.hget(self.rating_key(u), "rev"),
                            p.hget(self.rating_key(u), result.variant),
                        )
                        for u in users
                    ]
                    + [p.hgetall(self.game_key(result.table, result.game))]
                )
            )
            if got[-1]:
                return _settlement(got[-1])
            revs = [text(got[2 * i]) if got[2 * i] is not None else "0" for i in range(len(users))]
            before = [Rating.from_json(got[2 * i + 1]) for i in range(len(users))]
            after = list(before)
            if counted:  # the ranked seats only: an excused one keeps his (#38)
                moved = [i for i, (s, _, _) in enumerate(humans) if s in order]
                new = rate([before[i] for i in moved], [order[humans[i][0]] for i in moved])
                for i, a in zip(moved, new, strict=True):
                    after[i] = a
            changes = tuple(
                Change(u, s, b.shown, a.shown, a.provisional, a.games)
                for (s, u, _), b, a in zip(humans, before, after, strict=True)
            )
            base = Settlement(result.table, result.game, result.variant, counted, why)
            yes = Settlement(result.table, result.game, result.variant, True, "", changes)
            no = Settlement(result.table, result.game, result.variant, False, "pair_limit")
            entry = {
                "g": gid,
                "v": result.variant,
                "at": result.at,
                "result": result.to_json(),
            }
            keys = [self.game_key(result.table, result.game), self.log_key]
            for u in users:
                keys += self._user_keys(u)
            pairs = [
                self._pair_key(a, b) for i, a in enumerate(users) for b in users[i + 1 :] if a != b
            ] if counted else []  # fmt: skip
            keys += [*pairs, self.board_key(result.variant), self.board_key(result.variant, True)]
            r = self.rules
            args: list[str | int | float] = [
                gid, now, int(r.game_ttl * 1000), int(counted), r.pair_daily, 86_400_000,
                len(users), len(pairs), json.dumps(entry, separators=(",", ":")),
                result.variant, int(r.offence_window * 1000), int(r.cooldown_first * 1000),
                r.cooldown_factor, int(r.cooldown_max * 1000), r.reliability_games, r.history,
                int(rated), json.dumps((yes if counted else base).to_json()),
                "," + ",".join(str(u) for u in walked) + "," if walked else "",
                json.dumps(no.to_json()),
            ]  # fmt: skip
            for (s, u, name), rev, b, a in zip(humans, revs, before, after, strict=True):
                hist = {
                    "at": result.at, "variant": result.variant, "table": result.table,
                    "game": result.game, "rating": a.shown, "change": a.shown - b.shown,
                    "provisional": a.provisional, "rank": order.get(s, 0),
                }  # fmt: skip
                args += [
                    u, rev, a.to_json() if counted else "", a.shown, int(a.provisional),
                    int(s not in taken), json.dumps(hist, separators=(",", ":")), name,
                ]  # fmt: skip
            reply = await self._settle(keys, args)
            if text(reply[0]) == "stale":
                continue
            flat = reply[1:]
            return _settlement(dict(zip(flat[::2], flat[1::2], strict=True)))
        raise RuntimeError(f"ratings of {gid}: too many lost races")

    async def charge_leave(self, table: str, game: int, user: int, now_ms: int) -> float | None:
        """``user`` left game ``game`` of ``table``, a rated game, of his own
        will: the offence now (#38), pending until the game's settlement
        confirms it or undoes it, and the cooldown it sets at once -- so the
        checks before a rated game (:meth:`cooldowns`) see it while the AI
        still plays his seat.  Once, keyed by the game and him: a retry, a
        second process or a leave of the same game again charges nothing
        more, nor does a game already settled (None; its settlement decided).
        The cooldown (seconds) it set, 0: a warning."""
        gid = f"{table}:{game}"
        b = self.base
        r = self.rules
        keys = [self.game_key(table, game), f"{b}:off:{user}", f"{b}:pend:{user}",
                f"{b}:cool:{user}"]  # fmt: skip
        args: list[str | int | float] = [
            gid, now_ms, int(r.offence_window * 1000), int(r.cooldown_first * 1000),
            r.cooldown_factor, int(r.cooldown_max * 1000),
        ]  # fmt: skip
        reply = await self._charge(keys, args)
        if text(reply[0]) == "settled":
            return None
        return int(reply[1]) / 1000

    # --------------------------------------------------------------- reads
    async def settlement(self, table: str, game: int) -> Settlement | None:
        """How game ``game`` of ``table`` was settled (None: not yet, or long ago)."""
        raw = await self.store.one(lambda p: p.hgetall(self.game_key(table, game)))
        return _settlement(raw) if raw else None

    async def of(self, user: int) -> PlayerRatings:
        """His ratings, reliability, cooldown and the offences of the window
        (``/rating`` and the admin API): those older than
        :attr:`RatingRules.offence_window` by :attr:`clock` are not counted
        (#38) -- the key keeps them until a newer offence trims it."""
        b = self.base
        since = int(self.clock() * 1000) - int(self.rules.offence_window * 1000)
        raw, rel, off, cool = await self.store.run(
            lambda p: [
                p.hgetall(self.rating_key(user)),
                p.lrange(f"{b}:rel:{user}", 0, -1),
                p.zcount(f"{b}:off:{user}", f"({since}", "+inf"),
                p.get(f"{b}:cool:{user}"),
            ]
        )
        fields = {text(k): v for k, v in cast("dict[Any, Any]", raw).items()}
        ratings = {v: Rating.from_json(fields[v]) for v in VARIANTS if v in fields}
        marks = [text(x) for x in rel]
        until = int(json.loads(cool)["until"]) if cool is not None else None
        return PlayerRatings(
            user=user,
            name=text(fields.get("name", b"")),
            ratings=ratings,
            reliability=(marks.count("1") / len(marks)) if marks else None,
            recent=len(marks),
            cooldown_until=until,
            offences=int(off),
        )

    async def many(self, users: Iterable[int], variant: str) -> dict[int, Rating]:
        """The ratings in ``variant`` of ``users`` (the default for a new one)."""
        us = list(dict.fromkeys(users))
        if not us:
            return {}
        raw = await self.store.run(lambda p: [p.hget(self.rating_key(u), variant) for u in us])
        return {u: Rating.from_json(r) for u, r in zip(us, raw, strict=True)}

    async def labels(self, users: Iterable[int], variant: str) -> dict[int, str]:
        """Each user's rating as a seat shows it: ``"1240"``, ``"1010?"`` (provisional)."""
        return {u: r.label for u, r in (await self.many(users, variant)).items()}

    async def cooldowns(self, users: Iterable[int]) -> dict[int, int]:
        """The users in a cooldown from rated games now: user -> its end (ms)."""
        us = list(dict.fromkeys(users))
        if not us:
            return {}
        raw = await self.store.run(lambda p: [p.get(f"{self.base}:cool:{u}") for u in us])
        return {u: int(json.loads(r)["until"]) for u, r in zip(us, raw, strict=True) if r}

    async def top(self, variant: str, limit: int = 20, provisional: bool = False) -> list[BoardRow]:
        """The global leaderboard: established players (or the provisional ones) best first."""
        key = self.board_key(variant, provisional)
        rows = await self.store.one(lambda p: p.zrevrange(key, 0, max(0, limit - 1)))
        users = [int(text(u)) for u in rows]
        return await self._rows(users, variant)

    async def board(self, users: Iterable[int], variant: str) -> list[BoardRow]:
        """``users`` ranked by their rating in ``variant`` (only those who have
        one), best first; provisional players after the established ones."""
        rows = await self._rows(list(dict.fromkeys(users)), variant)
        rows = [r for r in rows if r.games]
        rows.sort(key=lambda r: (r.provisional, -r.rating, r.user))
        return rows

    async def _rows(self, users: list[int], variant: str) -> list[BoardRow]:
        if not users:
            return []
        raw = await self.store.run(
            lambda p: [
                (p.hget(self.rating_key(u), variant), p.hget(self.rating_key(u), "name"))
                for u in users
            ]
        )
        out = []
        for i, u in enumerate(users):
            r = Rating.from_json(raw[2 * i])
            name = text(raw[2 * i + 1]) if raw[2 * i + 1] is not None else ""
            out.append(BoardRow(u, name, r.shown, r.provisional, r.games))
        return out

    async def history(self, user: int, limit: int = 50) -> list[dict[str, Any]]:
        key = f"{self.base}:h:{user}"
        rows = await self.store.one(lambda p: p.lrange(key, 0, max(0, limit - 1)))
        return [cast("dict[str, Any]", json.loads(x)) for x in rows]

    async def cooldown(self, user: int) -> int | None:
        """When his cooldown from rated games ends (epoch ms), None: none."""
        raw = await self.store.one(lambda p: p.get(f"{self.base}:cool:{user}"))
        return int(json.loads(raw)["until"]) if raw is not None else None

    async def lift_cooldown(self, user: int) -> bool:
        """End his cooldown and forget his offences (an operator's act): whether
        there was either.  His pending leaves stay marked as charged (#38):
        their settlement confirms nothing new, and a retried charge of them
        charges nothing -- a lifted offence does not come back."""
        b = self.base
        cool, offences = await self.store.run(
            lambda p: [p.delete(f"{b}:cool:{user}"), p.delete(f"{b}:off:{user}")]
        )
        return bool(cool or offences)

    # ---------------------------------------------------------- recompute
    async def log_entries(self, batch: int = 500) -> list[dict[str, Any]]:
        """Every counted rated game, in the order it was settled."""
        out: list[dict[str, Any]] = []
        start = "-"
        while True:
            rows = await self._log_page(start, batch)
            for _id, fields in rows:
                f = {text(k): v for k, v in fields.items()}
                out.append(cast("dict[str, Any]", json.loads(f["g"])))
            if len(rows) < batch:
                return out
            last = text(rows[-1][0])
            ms, _, seq = last.partition("-")
            start = f"{ms}-{int(seq) + 1}"

    async def _log_page(self, start: str, count: int) -> list[Any]:
        return cast(
            "list[Any]",
            await self.store.one(lambda p: p.xrange(self.log_key, min=start, max="+", count=count)),
        )

    async def recompute(self) -> Recomputed:
        """Replay the log from the default ratings and compare with the stored
        ones: equal, to the last bit, when every rating moved through
        :meth:`settle` (the log holds each counted game's result)."""
        replayed: dict[tuple[int, str], Rating] = {}
        entries = await self.log_entries()
        for e in entries:
            result = GameResult.from_json(e["result"])
            order = ranks(result)
            seats = sorted(order)
            users = [cast(int, result.seats[s][0]) for s in seats]
            before = [replayed.get((u, result.variant), Rating()) for u in users]
            for u, a in zip(users, rate(before, [order[s] for s in seats]), strict=True):
                replayed[(u, result.variant)] = a
        keys = sorted(replayed)
        stored = await self.store.run(
            lambda p: [p.hget(self.rating_key(u), v) for u, v in keys]
        ) if keys else []  # fmt: skip
        bad = []
        for (u, v), raw in zip(keys, stored, strict=True):
            have = Rating.from_json(raw)
            want = replayed[(u, v)]
            if have != want or raw is None:
                bad.append((u, v, have, want))
        return Recomputed(len(entries), len({u for u, _ in keys}), tuple(bad))


__all__ = [
    "PROVISIONAL_SIGMA",
    "VARIANTS",
    "BoardRow",
    "Change",
    "PlayerRatings",
    "Rating",
    "RatingRules",
    "Ratings",
    "Recomputed",
    "Settlement",
    "provisional",
    "ranks",
    "rate",
    "shown",
]
