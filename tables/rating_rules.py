"""The ratings' rules (#25, #38): who counts against whom in a finished game
and what its settlement does -- pure, no Redis: :mod:`tables.ratings` holds
the players and stores what these decide; the maths and the values are
:mod:`tables.rating_model`; what is an offence is :mod:`tables.fairplay`.

**Which games count.**  A game is rated when its lobby chose rated games and
every seat was human at its start (an AI seat: casual).  A player who walked
away -- left, or the AI still plays his seat at the end -- ranks last (tied
with any other who did), whatever the AI made of his cards; a game everyone
walked away from counts for no one.  #38, who counts against whom
(:func:`moves`): a player whose account is not established
(:meth:`RatingRules.established`: fewer than 5 finished games with other
people, or the first of them less than 2 days old) moves no one and is moved
by no one; the same two players count against each other at most
:attr:`RatingRules.pair_daily` times in any 24 hours (the farming guard) --
past it only *their* result against each other stops counting; and two
players count against each other only if each of them finished games with at
least :attr:`RatingRules.diversity_opponents` other people besides the other
one in the last :attr:`RatingRules.diversity_days` (the opponent-diversity
guard: a second account that only ever plays its main feeds it nothing, even
within the pair cap) -- a pair that fails it is treated as a capped one.
Each other player is rated by the model in the game of himself and the
opponents whose pair with him counts (his rank among them as in the whole
game).  All three are read at the rated start, inside the start's
compare-and-set (the table's ``fresh``, ``capped`` and ``narrow``: the lobby
and the table say it from the first move), and the settlement keeps them (the
result carries ``narrow`` into the log, so a recompute replays the decision
rather than deriving it again); it reads the pairs' counts again while it
holds the players, so the guard is never exceeded (a pair whose earlier game
was settled late may so lose one result that was announced).  Farming: every
move of a rating comes from results against opponents whose pair with him
counts, each pair at most ``pair_daily`` a day and only between established
accounts who both play other people too, so a second account feeds its owner
no more in a 3-player game than in a 2-player one.  Rejected: "rate
everyone, apply no change to a capped pair's players" voids their honest
results against the third player too; "rate without the capped players"
voids the third player's game.

* :func:`candidates` (before anyone is held: whether the game counts, who may
  move) and :func:`settlement_plan` (every player's part, the settlement and
  the log entry, from what was held): the steps of
  :meth:`tables.ratings.Ratings.settle`.
* :class:`RatingRules`: the numbers (the farming guard, established
  accounts, the diversity guard, the log; reliability and cooldowns from
  :class:`tables.fairplay.OffenceRules`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tables.fairplay import OffenceRules, offenders, reliability_mark
from tables.model import LiveConfig
from tables.rating_model import Change, Rating, Settlement, rate
from tables.records import GameResult


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


@dataclass(frozen=True)
class RatingRules(OffenceRules):
    """The numbers of the farming guard, established accounts, the diversity
    guard and the log; reliability and cooldowns are fair play's
    (:class:`tables.fairplay.OffenceRules`, inherited)."""

    pair_daily: int = 5
    """Counted rated games of the same two players in any 24 hours."""
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


@dataclass(frozen=True)
class Candidates:
    """A finished game before anyone is held (:func:`candidates`): whether it
    counts for anyone (``live``), else why not; its new players, the pairs
    capped or short of other opponents at its start, each human seat's rank,
    and each player whose rating may move with the players his may move
    against (``partners``)."""

    live: bool
    why: str
    fresh: frozenset[int]
    start_capped: frozenset[tuple[int, int]]
    narrow: frozenset[tuple[int, int]]
    order: Mapping[int, int]
    partners: Mapping[int, Sequence[int]]

    def to_hold(self) -> list[int]:
        """The players to hold for the settlement, in user order (two
        settlements never wait for each other in a ring)."""
        return [u for u in sorted(self.partners) if self.partners[u]]


def candidates(result: GameResult, humans: Sequence[tuple[int, int, str]]) -> Candidates:
    """Who may move in ``result`` (#25, #38): a game is rated only with every
    seat human (else ``ai_seat`` or ``casual``); everyone walked away:
    ``abandoned``; a new player moves no one; a pair capped or short of other
    opponents at the start does not count against each other; an operator's
    takeover to the end is unranked.  ``humans``: (seat, user, name)."""
    away = set(result.away)
    everyone_away = all(s in away for s, _, _ in humans)
    rated = result.rated and len(humans) == len(result.seats)
    why = "" if rated else ("ai_seat" if result.rated else "casual")
    if rated and everyone_away:
        why = "abandoned"
    live = rated and not everyone_away
    fresh = set(result.fresh) if live else set()
    start_capped = {pair_of(a, b) for a, b in result.capped}
    # #38: the pairs short of other opponents at the start count as capped ones
    narrow = {pair_of(a, b) for a, b in result.narrow} if live else set()
    order = ranks(result)  # an operator's takeover to the end: unranked (#38)
    rivals = sorted({u for s, u, _ in humans if u not in fresh and s in order}) if live else []
    partners = {
        u: [v for v in rivals if v != u and pair_of(u, v) not in start_capped | narrow]
        for u in rivals
    }
    return Candidates(
        live, why, frozenset(fresh), frozenset(start_capped), frozenset(narrow), order, partners
    )


def outcome(
    result: GameResult,
    cand: Candidates,
    held: Mapping[int, Rating],
    capped: Iterable[tuple[int, int]],
) -> dict[int, Rating]:
    """The new rating of each player whose rating moves (:func:`moves`), from
    the ratings ``held`` and the pairs ``capped`` as the settlement read them."""
    if not cand.live:
        return {}
    r = replace(result, fresh=tuple(sorted(cand.fresh)), capped=())
    return moves(r, held, capped)


def settlement_plan(
    result: GameResult,
    humans: Sequence[tuple[int, int, str]],
    cand: Candidates,
    held: Mapping[int, tuple[str, Rating]],
    capped: set[tuple[int, int]],
    after: Mapping[int, Rating],
    shown_only: Mapping[int, Rating],
    gid: str,
    token: str,
    now: int,
) -> dict[str, Any]:
    """Every player's part of the settlement of ``result`` (what
    :data:`tables.rating_scripts.APPLY_LUA` applies), the settlement and the
    log entry: the plan :meth:`tables.ratings.Ratings.settle` commits.
    ``held``: user -> (rev, rating) of the players held; ``capped``: the pairs
    past the farming guard as read while holding them; ``after``:
    :func:`outcome`; ``shown_only``: the ratings of the others (shown
    unchanged)."""
    partners, order, fresh, narrow = cand.partners, cand.order, cand.fresh, cand.narrow
    counting = {
        u: [v for v in partners[u] if v > u and pair_of(u, v) not in capped and v in after]
        for u in after
    }
    walked = offenders(result, after)  # the offence rule: tables.fairplay
    seat_of = {u: s for s, u, _ in humans}
    # #38, the diversity guard: the people each finished this game with
    # (casual or rated), kept in his slot with his part (the rule:
    # opponents_met -- none for one whose seat the AI played at the end)
    met = opponents_met(result)
    parts = []
    changes = []
    for s, u, name in humans:
        moved = u in after
        b = held[u][1] if u in held else shown_only.get(u, Rating())
        a = after.get(u, b)
        hist = {
            "at": result.at, "variant": result.variant, "table": result.table,
            "game": result.game, "rating": a.shown, "change": a.shown - b.shown,
            "provisional": a.provisional, "rank": order.get(s, 0),
        }  # fmt: skip
        parts.append({
            "u": u, "m": int(moved), "rev": held[u][0] if u in held else "0",
            "r": a.to_json() if moved else "", "sh": a.shown, "pv": int(a.provisional),
            "c": int(reliability_mark(result, s)), "h": json.dumps(hist, separators=(",", ":")),
            "n": name, "o": int(u in walked), "p": counting.get(u, []), "x": list(met[u]),
        })  # fmt: skip
        if after:  # a counted game lists every human, those it did not move too
            changes.append(Change(u, s, b.shown, a.shown, a.provisional, a.games, moved))
    capped_seats = tuple(
        sorted(pair_of(seat_of[a], seat_of[b]) for a, b in capped if a in seat_of and b in seat_of)
    )
    narrow_seats = tuple(
        sorted(pair_of(seat_of[a], seat_of[b]) for a, b in narrow if a in seat_of and b in seat_of)
    )
    fresh_seats = tuple(sorted(seat_of[u] for u in fresh))
    live, why = cand.live, cand.why
    if live and not after:
        if len([s for s, _, _ in humans if s in order]) < 2:
            why = "operator"  # #38: operators' takeovers left fewer than two ranked
        elif capped:
            why = "pair_limit"
        else:
            why = "pair_diversity" if narrow else "new_players"
    settlement = Settlement(
        result.table, result.game, result.variant, bool(after), why, tuple(changes),
        fresh=fresh_seats if live else (), capped=capped_seats if live else (),
        narrow=narrow_seats,
    )  # fmt: skip
    entry = ""
    if after:
        entry = json.dumps(
            {
                "g": gid, "v": result.variant, "at": result.at,
                "result": replace(result, fresh=tuple(sorted(fresh))).to_json(),
                "capped": sorted([a, b] for a, b in capped),
                "b": {str(u): [*json.loads(b.to_json()), int(rev)]
                      for u, (rev, b) in held.items()},
                "m": sorted(after),
            },
            separators=(",", ":"),
        )  # fmt: skip
    return {
        "gid": gid, "t": token, "table": result.table, "game": result.game,
        "v": result.variant, "at": now, "parts": parts,
        "s": settlement.to_json(), "log": entry,
    }  # fmt: skip


def rating_rules(config: LiveConfig) -> RatingRules:
    """The ratings' rules as the service's settings make them (#38)."""
    return RatingRules(
        established_games=config.rated_after_games,
        established_days=config.rated_after_days,
        diversity_opponents=config.rated_diversity_opponents,
        diversity_days=config.rated_diversity_days,
        log_maxlen=config.rating_log_maxlen,
    )


__all__ = [
    "Candidates",
    "RatingRules",
    "candidates",
    "moves",
    "opponents_met",
    "outcome",
    "pair_of",
    "ranks",
    "rating_rules",
    "settlement_plan",
]
