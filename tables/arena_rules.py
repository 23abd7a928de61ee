"""The rules of an arena (#27), pure: how a game scores, who plays whom next,
the standings.  No I/O: :mod:`tables.arenas` keeps an arena in Redis and calls
these inside its compare-and-set.

An arena runs in a group for a fixed time (anchor: lichess arenas).  Its players
play as many games as they can; whenever players are free the arena seats them
at tables of its size.  See ``docs/ARENA.md`` for the rules in words.

Scoring (any table size, :func:`game_points`):

* the loser scores 0; the first player out scores 2; every other player who is
  not the loser scores 1 (a 2-player game: win 2, loss 0, draw 1 each -- as on
  lichess);
* a draw (RULES §0: nobody holds cards at the end, nobody is the loser) scores
  1 for everyone and makes nobody first out (the result does not tell who
  went out in the last bout together);
* a player who walked away (left, or the AI played his seat at the end) scores
  0 for that game, whatever his seat's place, and his streak ends; one whose
  seat an operator handed to the AI (``excused``, not his doing) scores 0 and
  keeps his streak as it was;
* **on fire**: after two games in a row that he finished first out, each of his
  games scores double until one does not end with him first out (that game is
  still doubled: a 2-player loss scores 0, a draw 2).

Pairing (:func:`pair`): the free players, best score first (then rating), are
cut into tables of the arena's size; a table is rearranged (a swap with the
next free player) when two of its players met in their last games, so nobody
meets the same opponent twice in a row while others wait.  A table that can only
be such a rematch waits while games are still running (one may free a new
opponent), at most ``patience`` seconds.  Fewer free players than a table's size
wait for the next pairing, unless they have waited ``patience`` seconds and
there are at least two of them: then they play at a smaller table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from tables.records import GameResult

SCHEDULED, RUNNING, FINISHED, CANCELLED = "scheduled", "running", "finished", "cancelled"
ARENA_STATUSES = (SCHEDULED, RUNNING, FINISHED, CANCELLED)

WIN, PLACE, LOSS, DRAW = 2, 1, 0, 1
"""Points of the first player out, of any other player who is not the loser, of
the loser, of a player tied in a draw (before doubling)."""
FIRE_AFTER = 2
"""Games in a row finished first out after which a player is on fire."""
SEATS_RANGE = (2, 6)
"""Players per table an arena may have."""
MINUTES_RANGE = (10, 180)
"""An arena's length in minutes."""
RECENT = 12
"""Points of his last games each player's row keeps (the standings' sheet)."""


@dataclass(frozen=True)
class Scored:
    """One player's score of one game."""

    user: int
    points: int
    fire: bool  # he was on fire: the points are doubled
    streak: int  # games in a row first out, after this one


def _first_out(result: GameResult, seat: int) -> bool:
    return not result.draw and result.places[seat] == 1 and result.loser != seat


def game_points(result: GameResult, streaks: dict[int, int]) -> list[Scored]:
    """Each human seat's score of ``result`` (see the module), given each user's
    streak before the game (games in a row first out)."""
    out: list[Scored] = []
    for seat, (user, _name) in enumerate(result.seats):
        if user is None:
            continue
        streak = streaks.get(user, 0)
        fire = streak >= FIRE_AFTER
        if seat in result.excused:  # an operator's act, not his: it does not count
            out.append(Scored(user, 0, fire, streak))
            continue
        if seat in result.away:  # walked away: nothing, and no streak
            out.append(Scored(user, 0, fire, 0))
            continue
        first = _first_out(result, seat)
        if result.draw:
            base = DRAW
        elif result.loser == seat:
            base = LOSS
        elif first:
            base = WIN
        else:
            base = PLACE
        points = base * 2 if fire else base
        out.append(Scored(user, points, fire, streak + 1 if first else 0))
    return out


@dataclass(frozen=True)
class ArenaPlayer:
    """A player of an arena: his score, streak, games, where he plays now."""

    user: int
    name: str
    rating: int = 0  # his shown rating when he last joined or scored (pairing order)
    score: int = 0
    streak: int = 0
    games: int = 0
    wins: int = 0  # games he finished first out
    table: str = ""  # the table he plays at now ('' = free)
    since: int = 0  # ms: free (waiting for a table) since then
    withdrawn: bool = False
    last: tuple[int, ...] = ()  # the other players of his last game
    recent: tuple[int, ...] = ()  # points of his last games, newest last
    fire: bool = False  # his last game was played on fire

    @property
    def waiting(self) -> bool:
        return not self.withdrawn and not self.table

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"u": self.user, "n": self.name, "r": self.rating}
        for key, value, empty in (
            ("s", self.score, 0),
            ("k", self.streak, 0),
            ("g", self.games, 0),
            ("w", self.wins, 0),
            ("t", self.table, ""),
            ("f", self.since, 0),
            ("x", self.withdrawn, False),
            ("l", list(self.last), []),
            ("p", list(self.recent), []),
            ("o", self.fire, False),
        ):
            if value != empty:
                d[key] = value
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ArenaPlayer:
        return cls(
            user=int(d["u"]),
            name=str(d["n"]),
            rating=int(d.get("r", 0)),
            score=int(d.get("s", 0)),
            streak=int(d.get("k", 0)),
            games=int(d.get("g", 0)),
            wins=int(d.get("w", 0)),
            table=str(d.get("t", "")),
            since=int(d.get("f", 0)),
            withdrawn=bool(d.get("x", False)),
            last=tuple(int(u) for u in d.get("l", ())),
            recent=tuple(int(p) for p in d.get("p", ())),
            fire=bool(d.get("o", False)),
        )


@dataclass(frozen=True)
class Pairing:
    """One table the arena seated: its id and players (seat order)."""

    table: str
    users: tuple[int, ...]
    at: int  # ms

    def to_json(self) -> dict[str, Any]:
        return {"t": self.table, "u": list(self.users), "at": self.at}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Pairing:
        return cls(str(d["t"]), tuple(int(u) for u in d["u"]), int(d["at"]))


@dataclass(frozen=True)
class Arena:
    """An arena: its settings, its status and its players.  ``playing`` holds the
    tables seated and not yet scored (the exactly-once of scoring: a game is
    scored only while its table is there)."""

    id: str
    chat: int
    creator: int
    variant: str
    seats: int  # players per table
    starts: int  # ms
    ends: int  # ms: no pairing after it; the games running then finish
    status: str = SCHEDULED
    timer: int = 60  # the turn timer of its games (seconds)
    players: tuple[ArenaPlayer, ...] = ()
    playing: tuple[Pairing, ...] = ()
    games: int = 0  # games scored
    created: int = 0
    ended: int = 0  # ms: when it finished or was cancelled
    why: str = ""  # a cancelled arena: by whom / why
    thread: int | None = None  # where in ``chat`` it lives (as Table.thread)

    # ------------------------------------------------------------ reading
    def player(self, user: int) -> ArenaPlayer | None:
        return next((p for p in self.players if p.user == user), None)

    @property
    def minutes(self) -> int:
        return (self.ends - self.starts) // 60_000

    @property
    def over(self) -> bool:
        return self.status in (FINISHED, CANCELLED)

    def standings(self) -> list[ArenaPlayer]:
        """Best first: score, then games finished first out, then fewer games
        played (the same points in fewer games), then rating, then name."""
        return sorted(
            self.players,
            key=lambda p: (-p.score, -p.wins, p.games, -p.rating, p.name.casefold(), p.user),
        )

    # ------------------------------------------------------------ changing
    def with_player(self, player: ArenaPlayer) -> Arena:
        players = tuple(player if p.user == player.user else p for p in self.players)
        if self.player(player.user) is None:
            players = (*players, player)
        return replace(self, players=players)

    def to_json(self) -> str:
        d: dict[str, Any] = {
            "id": self.id,
            "chat": self.chat,
            "creator": self.creator,
            "variant": self.variant,
            "seats": self.seats,
            "starts": self.starts,
            "ends": self.ends,
            "status": self.status,
            "timer": self.timer,
            "players": [p.to_json() for p in self.players],
            "playing": [t.to_json() for t in self.playing],
            "games": self.games,
            "created": self.created,
            "ended": self.ended,
            "why": self.why,
        }
        if self.thread is not None:
            d["thread"] = self.thread
        return json.dumps(d, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str | bytes) -> Arena:
        d = json.loads(raw)
        return cls(
            id=d["id"],
            chat=int(d["chat"]),
            creator=int(d["creator"]),
            variant=d["variant"],
            seats=int(d["seats"]),
            starts=int(d["starts"]),
            ends=int(d["ends"]),
            status=d["status"],
            timer=int(d.get("timer", 60)),
            players=tuple(ArenaPlayer.from_json(p) for p in d["players"]),
            playing=tuple(Pairing.from_json(t) for t in d["playing"]),
            games=int(d.get("games", 0)),
            created=int(d.get("created", 0)),
            ended=int(d.get("ended", 0)),
            why=str(d.get("why", "")),
            thread=d.get("thread"),
        )


def score(arena: Arena, table: str, result: GameResult, now: int) -> Arena | None:
    """``arena`` with the game at ``table`` scored and its players free again;
    None when that table is not being played (scored already, or not the
    arena's): the exactly-once of scoring -- and None once the arena is over:
    a cancelled arena stands as it was cancelled (#38)."""
    if arena.over:
        # #38: a game that ends after the cancel is an ordinary game; checked on
        # the arena as loaded for the compare-and-set, so a cancel that lands
        # between the load and the write makes the write retry and stop here
        return None
    seated = next((t for t in arena.playing if t.table == table), None)
    if seated is None:
        return None
    streaks = {p.user: p.streak for p in arena.players}
    scores = {s.user: s for s in game_points(result, streaks)}
    players: list[ArenaPlayer] = []
    for p in arena.players:
        if p.user not in seated.users:
            players.append(p)
            continue
        s = scores.get(p.user, Scored(p.user, 0, False, 0))
        players.append(
            replace(
                p,
                score=p.score + s.points,
                streak=s.streak,
                games=p.games + 1,
                wins=p.wins + (1 if s.streak > p.streak else 0),
                table="" if p.table == table else p.table,
                since=now,
                last=tuple(u for u in seated.users if u != p.user),
                recent=(*p.recent, s.points)[-RECENT:],
                fire=s.fire,
            )
        )
    return replace(
        arena,
        players=tuple(players),
        playing=tuple(t for t in arena.playing if t.table != table),
        games=arena.games + 1,
    )


def free_table(arena: Arena, table: str, now: int) -> Arena | None:
    """``arena`` with a seated table dropped unscored (its game never started,
    or ended without a result: cancelled); its players free again."""
    seated = next((t for t in arena.playing if t.table == table), None)
    if seated is None:
        return None
    players = tuple(
        replace(p, table="", since=now) if p.table == table else p for p in arena.players
    )
    return replace(
        arena, players=players, playing=tuple(t for t in arena.playing if t.table != table)
    )


@dataclass(frozen=True)
class PairingPlan:
    """What one pairing seats: each new table's players, in seat order; ``more``:
    more tables could be seated now than the pairing was allowed (``limit``),
    the rest wait for the next one (#38)."""

    tables: list[tuple[int, ...]] = field(default_factory=list)
    more: bool = False


def pair(arena: Arena, now: int, patience_ms: int, limit: int | None = None) -> PairingPlan:
    """Who plays whom among the free players now (see the module); at most
    ``limit`` tables (None: all), the best-placed first -- a wake's work stays
    bounded however many players are free at once (#38)."""
    if arena.status != RUNNING or now >= arena.ends:
        return PairingPlan()
    free = sorted(
        (p for p in arena.players if p.waiting),
        key=lambda p: (-p.score, -p.rating, p.since, p.user),
    )
    size = arena.seats
    groups: list[list[ArenaPlayer]] = []
    aside: list[ArenaPlayer] = []  # only a rematch for them now: they wait a while
    while len(free) >= size:
        group = free[:size]
        rest = free[size:]
        group, rest = _no_rematch(group, rest)
        patient = all(now - p.since >= patience_ms for p in group)
        if arena.playing and not patient and _rematch(group):
            aside += group  # a game still running may free a new opponent soon
        else:
            groups.append(group)
        free = rest
    if len(free) >= 2 and all(now - p.since >= patience_ms for p in free):
        groups.append(free)  # waited long enough: a smaller table
    more = limit is not None and len(groups) > limit
    if more:
        groups = groups[:limit]
    return PairingPlan([tuple(p.user for p in g) for g in groups], more)


def _rematch(group: list[ArenaPlayer]) -> bool:
    return any(_met(a, b) for i, a in enumerate(group) for b in group[i + 1 :])


def _met(a: ArenaPlayer, b: ArenaPlayer) -> bool:
    return b.user in a.last or a.user in b.last


def _no_rematch(
    group: list[ArenaPlayer], rest: list[ArenaPlayer]
) -> tuple[list[ArenaPlayer], list[ArenaPlayer]]:
    """Swap a player of ``group`` who met another of it in his last game for the
    first waiting player who met none of them (if any)."""
    for i in range(len(group) - 1, 0, -1):
        if not any(_met(group[i], group[j]) for j in range(i)):
            continue
        others = group[:i] + group[i + 1 :]
        for k, candidate in enumerate(rest):
            if not any(_met(candidate, o) for o in others):
                swapped = [*others, candidate]
                rest = [*rest[:k], group[i], *rest[k + 1 :]]
                return _no_rematch(swapped, rest)
        break  # nobody fits: play the rematch rather than wait
    return group, rest


def seat(arena: Arena, tables: list[tuple[str, tuple[int, ...]]], now: int) -> Arena:
    """``arena`` with the planned tables (id, players) seated."""
    at = {u: tid for tid, users in tables for u in users}
    players = tuple(replace(p, table=at[p.user]) if p.user in at else p for p in arena.players)
    playing = (*arena.playing, *(Pairing(tid, users, now) for tid, users in tables))
    return replace(arena, players=players, playing=playing)
