"""Plain records of the table service: configuration, seats, tables, results and
the errors it raises.  The table record round-trips through compact JSON (the
``t`` field of the table hash, :mod:`tables.keys`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from engine import Event, GameState
from engine.ai import KINDS as AI_KINDS
from engine.errors import EngineError

OPEN, PLAYING, OVER, CANCELLED = "open", "playing", "over", "cancelled"
STATUSES = (OPEN, PLAYING, OVER, CANCELLED)
DEFAULT_AI = "heuristic" if "heuristic" in AI_KINDS else AI_KINDS[0]
"""The AI that plays AI seats and taken-over seats unless told otherwise."""
TIMER_CHOICES = (0, 30, 60, 120)
"""Turn timer settings in seconds (PRODUCT: off/30/60/120 s)."""
RATED_TIMER = 60
"""The turn timer (s) of a rated lobby that asks for none: a rated game always
has one, or its loser could stall it for ever (#38)."""


def rated_timer(rated: bool, timer: int) -> int:
    """The turn timer a lobby or game gets: ``timer``, or :data:`RATED_TIMER`
    when it is rated and ``timer`` is 0 (off) -- #38."""
    return RATED_TIMER if rated and not timer else timer


@dataclass(frozen=True)
class LiveConfig:
    """Tunables of the table service (times in seconds)."""

    prefix: str = "durak:"
    lobby_ttl: float = 3600.0  # an open lobby untouched this long expires
    game_ttl: float = 86400.0  # a game in progress with no write this long expires
    finished_ttl: float = 6 * 3600.0  # a finished/cancelled table (rematch window)
    # #38: a rematch offer (the first *Rematch* press) stands this long: the
    # next game starts once every present player of the last game agreed, or
    # at its end with those who did (:meth:`tables.games.Games.rematch`)
    rematch_offer: float = 60.0
    # a finished game's follow-ups (stats, record, ratings, arena score) are
    # looked at again this long after the write that ended it, and then until
    # they all went through (#38: the table's timer hint, set in that write)
    settle_check: float = 30.0
    user_ttl: float = 30 * 86400.0  # the user -> table pointer (validated on read)
    claim_window: float = 15.0  # a claim not yet seated keeps the user from other tables
    stats_ttl: float = 400 * 86400.0  # per-user and per-chat stats, refreshed on write
    replay_ttl: float = 7 * 86400.0  # a finished game's record (issue #16), then 404
    log_chunk: int = 2048  # bytes of log text kept in the table before a flush to the stream
    events_maxlen: int = 64  # stream entries (deflated chunks, ~30-60 moves each) kept
    timeouts_to_ai: int = 2  # consecutive timeouts before the AI takes the seat
    ai_kind: str = DEFAULT_AI  # the AI that takes over a seat
    timer_lease: float = 30.0  # a claimed timer is hidden this long from other schedulers
    # the timer hints are split into this many sorted sets; each is handled by
    # the one process holding its lease (renewed every tick, taken over by
    # another process this long after its holder stopped renewing)
    timer_shards: int = 4
    shard_lease: float = 10.0
    # a restart gap (#28): a shard whose holder stopped ticking it longer than
    # ``timer_gap`` ago (killed, or the whole fleet restarted) -- the deadlines
    # that fell inside the gap are extended by the gap, to at least
    # ``restart_grace`` from the tick that found it, not enforced
    timer_gap: float = 3.0
    restart_grace: float = 10.0
    # #38: a rated game counts for a player once he finished this many games
    # with other people and the first of them is this many days old
    rated_after_games: int = 5
    rated_after_days: float = 2.0
    # #38, the opponent-diversity guard: two players' rated result counts
    # against each other only if each finished games with at least this many
    # other people besides the other one in the last this many days (0: off)
    rated_diversity_opponents: int = 3
    rated_diversity_days: float = 7.0
    # #38: each stream of the ratings log (tables.ratings.LOG_SHARDS, one slot
    # each) keeps about this many entries (recompute-ratings replays what is kept)
    rating_log_maxlen: int = 100_000
    recent_requests: int = 16  # request ids remembered per table (idempotency)
    keep_history: int = 24  # engine events kept inside the state blob
    max_ai_moves: int = 5000  # safety bound for one AI chain
    cas_retries: int = 20  # optimistic retries of lobby/system writes
    arena_max_players: int = 200  # players one arena takes (#38; tables.arenas.ArenaConfig)
    audit_maxlen: int = 10000  # operator audit entries kept (approximately)
    # Redis client (tables.store.make_client): a command that meets a
    # connection error or a timeout is retried on a fresh connection this many
    # times, with exponential backoff (base, cap); an idle pooled connection is
    # PINGed first after ``redis_health_check`` s.  So the first request after a
    # Redis restart succeeds, and one during an outage fails within about
    # (retries + 1) * socket timeout + the backoffs -- inside Telegram's
    # callback window.
    redis_retries: int = 2
    redis_backoff_base: float = 0.05
    redis_backoff_cap: float = 0.5
    redis_socket_timeout: float = 1.0  # a reply (SIGSTOPped Redis: each attempt waits this)
    redis_connect_timeout: float = 0.5
    redis_health_check: float = 5.0
    # after a connection error or timeout, each request first waits at most this
    # long for a PING (tables.store.Store): an outage answers at once
    redis_probe_timeout: float = 0.5
    # #40: a press that meets a Redis Cluster master failed less than this long
    # ago, with a replica known, waits for the replica's promotion and is made
    # again (the cluster promotes it after about 2 cluster-node-timeouts: 3.3-4.6 s
    # at 2000 ms), instead of "the game is unavailable" and a press again later
    redis_failover_wait: float = 8.0


class LiveError(EngineError):
    """A request the table service refuses; nothing was changed.  ``code`` is
    stable: no_table, not_open, no_game, game_over, lobby_full, not_seated,
    seated_elsewhere, not_allowed, too_few_players, bad_seat, ai_controlled,
    stale_version, busy, bad_settings, not_owner, bad_cursor, no_record, unavailable,
    cooldown (#25: ``info["until"]`` ms, ``info["left"]`` seconds; ``info["name"]``
    when it is another player's) (plus the engine's codes for illegal moves).
    A refusal about one player names him in ``info["user"]`` (a cooldown, a
    seated_elsewhere, a busy of his claim on a seat; #38)."""

    def __init__(self, code: str, message: str, **info: Any) -> None:
        super().__init__(code, message)
        self.info = info

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.info}


class ServiceUnavailable(Exception):
    """The game store (Redis) failed or cannot be reached; the request may or may
    not have been applied.  Code ``unavailable``; every Redis or connection error
    of the service surfaces as this (:mod:`tables.store`).

    Not a :class:`LiveError` (nor an engine error), on purpose (#38): a refusal
    says the thing is not there or not allowed, an outage says nothing of it --
    an ``except LiveError`` that drops a timer, releases a table or withdraws a
    player must never see one.  A fault is retried (or answered "unavailable"),
    never taken for "gone"."""

    code = "unavailable"

    def __init__(self, message: str = "the game store is unavailable") -> None:
        super().__init__(message)
        self.message = message
        self.info: dict[str, Any] = {}

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message}


class StaleVersion(LiveError):
    """The request was made against an older version (``info["current"]``)."""

    def __init__(self, expected: int, current: int) -> None:
        super().__init__(
            "stale_version",
            f"the table changed (version {current}, request made at {expected})",
            expected=expected,
            current=current,
        )


@dataclass(frozen=True)
class Seat:
    """``user`` is None for an AI seat; ``ai`` is the AI kind playing the seat now
    (an AI seat, or a human's seat taken over); ``left`` marks a human who left;
    ``bout_pass``: he chose "pass for the rest of this bout" -- the seat passes
    by itself whenever PASS is legal for it, until the bout ends (RULES §0
    Passing, Throw-in priority; cleared at the next bout); ``taken``: the AI took
    the human's seat at some point of this game (he left or timed out), even if
    he took it back since -- his reliability counts it (#25; cleared at the start);
    ``excused``: an operator handed his seat to the AI in this game, not his
    doing (#38): if the AI still plays it at the end his rating does not move
    (cleared at the start); ``rating``: his rating in the table's variant as the lobby and the table
    show it (``"1240"``, ``"1010?"`` while provisional), read when he joined and
    again at each game's start (#25); ``late``: the turn deadline (epoch ms)
    a late view of his cards moved his turn to (:func:`tables.fairplay.late_view_deadline`:
    once a turn; 0: never)."""

    user: int | None = None
    name: str = ""
    ai: str | None = None
    timeouts: int = 0
    left: bool = False
    bout_pass: bool = False
    taken: bool = False
    rating: str = ""
    excused: bool = False
    late: int = 0

    @property
    def human(self) -> bool:
        return self.user is not None

    @property
    def ai_controlled(self) -> bool:
        return self.ai is not None

    @property
    def away(self) -> bool:
        """He walked away: the AI still plays his seat (#25) -- whether he left it
        or not.  A seat left with no AI on it was out of the game when he left
        (nothing was left to play): his place stands (:meth:`Lobbies.leave`)."""
        return self.user is not None and self.ai is not None

    def to_json(self) -> list[Any]:
        out: list[Any] = [self.user, self.name, self.ai, self.timeouts, int(self.left)]
        extra: list[Any] = [
            int(self.bout_pass),
            int(self.taken),
            self.rating,
            int(self.excused),
            self.late,
        ]
        while extra and not extra[-1]:  # trailing defaults are left out
            extra.pop()
        return out + extra

    @classmethod
    def from_json(cls, d: list[Any]) -> Seat:
        return cls(
            d[0],
            d[1],
            d[2],
            int(d[3]),
            bool(d[4]),
            bool(d[5]) if len(d) > 5 else False,
            bool(d[6]) if len(d) > 6 else False,
            str(d[7]) if len(d) > 7 else "",
            bool(d[8]) if len(d) > 8 else False,
            int(d[9]) if len(d) > 9 else 0,
        )


@dataclass(frozen=True)
class RematchOffer:
    """A rematch offered on a finished table (#38), a ready check: ``until``
    (epoch ms) the offer stands; ``agreed``: the players of the last game who
    said yes, in the order they did.  The next game seats only them."""

    until: int
    agreed: tuple[int, ...] = ()

    def to_json(self) -> list[Any]:
        return [self.until, list(self.agreed)]

    @classmethod
    def from_json(cls, d: list[Any]) -> RematchOffer:
        return cls(int(d[0]), tuple(int(u) for u in d[1]))


@dataclass(frozen=True)
class Table:
    """A lobby and its match.  ``game_no`` counts the games started (0: none yet);
    ``previous_loser`` is the seat that lost the last game (C5/S5)."""

    id: str
    chat: int | None
    creator: int
    variant: str
    options: dict[str, Any]
    max_seats: int
    timer: int
    seats: tuple[Seat, ...]
    status: str = OPEN
    private: bool = False
    game_no: int = 0
    seed: int = 0
    previous_loser: int | None = None
    spectators: bool = True  # may people not seated watch it in private (issue #16)
    created: int = 0
    updated: int = 0
    ai_kind: str = DEFAULT_AI
    """The lobby's AI level: the kind of the AI seats it adds (``engine.ai.LEVELS``)."""
    rated: bool = True
    """The lobby's choice of rated games (#25); a game is rated only when, besides,
    every seat is human at its start (:attr:`rated_now`)."""
    arena: str = ""
    """The arena that seated this table (#27; '' = none): its game is scored
    there, and it has no rematch (the arena seats its players again)."""
    stopped: str = ""
    """Why a cancelled table ended without a result when it was not an
    operator's doing (#38): ``removed`` (the bot was removed from its group) or
    ``upgraded`` (its group became a supergroup); on a finished table
    (``removed``): its game ended as the forfeit of the player who removed
    the bot (:meth:`tables.games.Games.forfeit_plan`) -- no rematch; ''
    otherwise."""
    rematch: RematchOffer | None = None
    """The rematch offered on this finished table, while it stands (#38)."""
    thread: int | None = None
    """Where in ``chat`` the table lives, when that chat has threads of its own
    (a forum group's topic): an opaque number the service keeps beside
    ``chat`` for the adapter -- None: the chat as a whole."""
    fresh: tuple[int, ...] = ()
    """#38: the players whose account is new (docs/RATINGS.md), as read when
    they joined and again at the game's start: the game is casual for them."""
    capped: tuple[tuple[int, int], ...] = ()
    """#38: the pairs of players (lower user first) past the farming guard, as
    read at each join and at the start: their result against each other does
    not count."""
    narrow: tuple[tuple[int, int], ...] = ()
    """#38: the pairs of players (lower user first) that fail the
    opponent-diversity guard (one of the two played too few other people
    lately), read as ``capped`` is: their result against each other does not
    count either."""

    @property
    def rated_now(self) -> bool:
        """A game started now would be rated (#25, #38): the lobby wants it,
        every seat is a human's (no AI seat) and none is away -- left, or
        played by the AI --, and (with two players or more) the result of some
        two of them counts (neither is new, their pair is not past the farming
        guard nor short of other opponents).  Checked on the seats a game starts with
        (:meth:`tables.games.Games.start_plan`): a game with an AI seat, or a
        walked-away player, from its start is never rated."""
        if not all(s.user is not None and not s.away for s in self.seats):
            return False
        return self.rated_game

    @property
    def rated_game(self) -> bool:
        """The game on this table is rated as far as its seats go: the lobby
        wants it, every seat is a human's and (with two players or more) some
        two of them count against each other (#38).  A player who walks away
        mid-game keeps his seat, and the game stays rated (he ranks last, #25)."""
        if not (self.rated and all(s.user is not None for s in self.seats)):
            return False
        return len(self.seats) < 2 or bool(self.counting_pairs())

    def rated_for(self, user: int) -> bool:
        """The game is rated for ``user``: rated (:attr:`rated_game`) and he is
        in a pair whose result counts (#38: not new, not only in capped pairs)."""
        return self.rated_game and any(user in p for p in self.counting_pairs())

    def counting_pairs(self) -> list[tuple[int, int]]:
        """The pairs of players whose result against each other would count (#38)."""
        # every seat's user, one who left included: his seat is still his
        # (ranked last) until the game ends
        us = sorted({s.user for s in self.seats if s.user is not None} - set(self.fresh))
        off = set(self.capped) | set(self.narrow)
        return [(a, b) for i, a in enumerate(us) for b in us[i + 1 :] if (a, b) not in off]

    def player_seat(self, user: int) -> int | None:
        """His seat in the last game, even if he left it (a rematch asks every
        player of it, #38); :meth:`seat_of` is the seat he still sits at."""
        return next((i for i, s in enumerate(self.seats) if s.user == user), None)

    def present(self) -> list[int]:
        """The humans of the last game who did not walk away (left, or the AI
        played their seat at the end): a rematch waits for their answer (#38)."""
        return [s.user for s in self.seats if s.user is not None and not (s.away or s.left)]

    def seat_of(self, user: int) -> int | None:
        for i, s in enumerate(self.seats):
            if s.user == user and not s.left:
                return i
        return None

    def humans(self) -> list[int]:
        return [s.user for s in self.seats if s.user is not None and not s.left]

    def with_seat(self, index: int, seat: Seat) -> Table:
        seats = list(self.seats)
        seats[index] = seat
        return replace(self, seats=tuple(seats))

    def to_json(self) -> str:
        d: dict[str, Any] = {
            "id": self.id,
            "c": self.chat,
            "cr": self.creator,
            "va": self.variant,
            "o": self.options,
            "mx": self.max_seats,
            "ti": self.timer,
            "se": [s.to_json() for s in self.seats],
            "st": self.status,
            "p": int(self.private),
            "g": self.game_no,
            "sd": self.seed,
            "pl": self.previous_loser,
            "sv": int(self.spectators),
            "ct": self.created,
            "ut": self.updated,
            "ai": self.ai_kind,
        }
        if not self.rated:
            d["ra"] = 0
        if self.arena:
            d["ar"] = self.arena
        if self.stopped:
            d["sp"] = self.stopped
        if self.rematch is not None:
            d["rm"] = self.rematch.to_json()
        if self.thread is not None:
            d["th"] = self.thread
        if self.fresh:
            d["fr"] = list(self.fresh)
        if self.capped:
            d["cp"] = [list(p) for p in self.capped]
        if self.narrow:
            d["nw"] = [list(p) for p in self.narrow]
        return json.dumps(d, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str | bytes) -> Table:
        d = json.loads(raw)
        return cls(
            id=d["id"],
            chat=d["c"],
            creator=d["cr"],
            variant=d["va"],
            options=d["o"],
            max_seats=d["mx"],
            timer=d["ti"],
            seats=tuple(Seat.from_json(s) for s in d["se"]),
            status=d["st"],
            private=bool(d["p"]),
            game_no=d["g"],
            seed=d["sd"],
            previous_loser=d["pl"],
            spectators=bool(d.get("sv", 1)),
            created=d["ct"],
            updated=d["ut"],
            ai_kind=d.get("ai", DEFAULT_AI),  # a table stored before the AI levels
            rated=bool(d.get("ra", 1)),
            arena=str(d.get("ar", "")),
            stopped=str(d.get("sp", "")),
            rematch=RematchOffer.from_json(d["rm"]) if d.get("rm") else None,
            thread=d.get("th"),
            fresh=tuple(d.get("fr", ())),
            capped=tuple((int(a), int(b)) for a, b in d.get("cp", ())),
            narrow=tuple((int(a), int(b)) for a, b in d.get("nw", ())),
        )


MOVE_KINDS = ("act", "ai", "auto", "autopass")
"""The log kinds whose ``text`` is a move of the game (replaying them rebuilds it)."""


@dataclass(frozen=True)
class LiveEvent:
    """One entry of a table's event log: ``kind`` is ``act`` (a player's move),
    ``ai`` (an AI move), ``auto`` (the timeout move made for a player),
    ``autopass`` (a seat passed by itself: PASS was all it could do, or its
    player chose to pass for the rest of the bout; ``text`` = ``P``),
    ``timeout``, ``takeover`` (AI takes a seat; ``text`` = reason), ``back`` (a
    human took his seat back), ``left``, ``start`` (``text`` = game no), ``over``
    (``text`` = ``loser:<seat>`` or ``draw``), ``reset``/``abort``/``delete``
    (admin), ``rematch`` (a player of the finished game agreed to a rematch;
    ``text`` ``lapsed``, seat -1: the offer ended with nobody to seat; #38), or
    a lobby change (``join``, ``leave``, ``add_ai``, ``remove_ai``,
    ``settings``, ``create``, ``cancel``); ``extend`` (a deadline moved on, ``text``
    = by how many ms: after a restart or an outage, seat -1; a late view of a
    seat's cards, its seat).  ``text`` of a move is its action text
    (:meth:`engine.Action.text`)."""

    version: int
    kind: str
    seat: int = -1
    text: str = ""
    id: str = ""


@dataclass
class WriteResult:
    """What a write did.  ``events`` are the log entries it appended;
    ``engine_events`` everything the engine reported (draws, bout ends, ...);
    ``changed_seats`` the human seats whose view changed (re-render those);
    ``duplicate`` is True when the request id was seen before (applied once,
    ``version`` is the version that first application produced); ``state``
    the game state it wrote (#39: the writer draws the move from it, with
    :meth:`tables.Loaded.after`, instead of reading the table again)."""

    table_id: str
    version: int
    table: Table
    events: list[LiveEvent] = field(default_factory=list)
    engine_events: list[Event] = field(default_factory=list)
    changed_seats: list[int] = field(default_factory=list)
    duplicate: bool = False
    game_over: bool = False
    deadline: int | None = None  # the turn deadline now stored (epoch ms)
    state: GameState | None = field(default=None, repr=False, compare=False)
    log: str | None = field(default=None, repr=False, compare=False)
    """The event log's open chunk as the write left it (None: not changed)."""


OWNER_ONLY = {
    "start": "start the game",
    "add_ai": "add AI players",
    "remove_ai": "remove AI players",
    "settings": "change the settings",
    "cancel": "cancel the lobby",
}
"""What only the lobby's owner may do: ``info["action"]`` of a ``not_owner`` refusal."""


def require_owner(t: Table, user: int, action: str) -> None:
    """``not_seated`` for a stranger, ``not_owner`` (``info["action"]``, a key of
    :data:`OWNER_ONLY`) for a seated player who is not the lobby's owner (its
    creator; the next human once he left)."""
    if t.seat_of(user) is None:
        raise LiveError("not_seated", "only a seated player can do that")
    if t.creator != user:
        raise LiveError(
            "not_owner", f"only the lobby's creator can {OWNER_ONLY[action]}", action=action
        )
