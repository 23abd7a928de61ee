"""Fair play (#25, #38): what is an offence, what it costs (cooldowns), how
reliable a player is, and the one check before a rated game.
``docs/RATINGS.md`` says it in plain words.

**An offence** is walking away from a game rated *for him* (he was rated
against someone, :meth:`tables.model.Table.rated_for`):

* leaving a game in progress of his own will -- charged at once
  (:func:`owed_leaves`, :meth:`FairPlay.charge_leave`), pending until the
  game's settlement confirms it (no second offence) or undoes it (he took his
  seat back and played to the end, everyone walked away, the game was not
  rated for him);
* running out of time ``LiveConfig.timeouts_to_ai`` times in a row: the AI
  takes his seat (:func:`timed_out`, applied by :mod:`tables.timers`); if it
  still plays it at the end he walked away, and the settlement charges it
  (:func:`offenders`: the seats ``away`` and ``taken`` of the result);
* a turn the bot could not show him in time (his hand held back by the
  chat's flood limit) starts again, once a turn (:func:`late_view_deadline`);
* removing the bot from the group of a game he plays (#38): the game ends at
  once as his forfeit, his seat marked as a leave marks it
  (:func:`tables.games.walked_away`, :meth:`tables.games.Games.forfeit_plan`,
  decided by :func:`tables.groups.forfeiter`), so the settlement charges it
  as any walking away (:func:`offenders`);
* not an offence: an operator's takeover (``excused``), a seat a rematch kept
  for a player who did not agree, any casual game, a new player's game, a
  capped (or diversity-failing) pair's player with no other opponent.

**Cooldowns**: the offences of the last 72 hours set the cooldown before his
next rated game: none for the first (a warning), then 10 minutes, x3 for each
more, at most 3 days (:meth:`OffenceRules.cooldown`; in
Lua :data:`tables.rating_scripts.RECOOL_LUA`, the one rule whether an
offence came, was confirmed or was undone).  Casual games are never blocked.

**Reliability** is the share of his last 20 finished games with other people
(rated or not) in which the AI never took his seat
(:data:`tables.rating_scripts.APPLY_LUA` writes the marks,
:meth:`tables.ratings.Ratings.of` reads them).

**Who counts against whom** at a rated start -- new accounts, the farming
guard, the opponent-diversity guard -- is read by :func:`eligible` (the rules
are :mod:`tables.rating_rules`).

**The one check** before a rated game (:meth:`FairPlay.check`): joining a
rated lobby (:meth:`tables.lobbies.Lobbies.join`), starting a rated game
(:meth:`tables.games.Games.rated_seats`; a rematch turns casual instead) and
joining an arena (:meth:`tables.arenas.Arenas.join`).  Each calls it inside
the plan of the compare-and-set that writes the join or the start, so a lost
race checks it again on the newer record (the exactly-once standard: every
write checks its rules inside the same CAS as the write).

What the players see of it lives with the bot: the timeout nudge
(``Publisher.nudge``), the cooldown refusal (``views.texts.refusal``), the
walk-away marks of the board (``views.board``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from redis.exceptions import RedisError

from engine import GameState
from tables.keys import Keys
from tables.model import PLAYING, LiveError, Seat, ServiceUnavailable, Table
from tables.rating_model import Eligibility
from tables.records import GameResult
from tables.scripts import LEAVE_CHARGED_LUA
from tables.store import Store, text

log = logging.getLogger(__name__)


class LoadedTable(Protocol):
    """What fair play reads of a table as loaded (:class:`tables.tables.Loaded`)."""

    @property
    def table(self) -> Table: ...
    @property
    def result(self) -> GameResult | None: ...
    @property
    def result_previous_loser(self) -> int | None: ...
    @property
    def owed(self) -> list[int]: ...
    @property
    def unsettled(self) -> bool: ...
    @property
    def finished_table(self) -> Table | None: ...


class RatingsPart(Protocol):
    """What fair play asks of the ratings' store (:class:`tables.ratings.Ratings`)."""

    async def charge_leave(self, table: str, game: int, user: int, now_ms: int) -> float | None: ...
    async def cooldowns(self, users: Iterable[int]) -> dict[int, int]: ...
    async def eligibility(self, users: Iterable[int], now_ms: int) -> Eligibility: ...


class TablesPart(Protocol):
    """What fair play needs of the tables part (:class:`tables.tables.Tables`,
    which builds it: a protocol, so that no import cycle binds the two)."""

    @property
    def store(self) -> Store: ...
    @property
    def keys(self) -> Keys: ...
    @property
    def ratings(self) -> RatingsPart: ...
    def now_ms(self) -> int: ...
    async def load(self, table_id: str) -> LoadedTable: ...
    async def follow_up(
        self, table: Table, result: GameResult, previous_loser: int | None
    ) -> bool: ...


@dataclass(frozen=True)
class OffenceRules:
    """The numbers of reliability and cooldowns (#25, #38); the ratings' rules
    (:class:`tables.rating_rules.RatingRules`) are these and their own."""

    reliability_games: int = 20
    """A player's reliability is the share of his last this many games with
    other people in which the AI never took his seat (:func:`reliability_mark`)."""
    offence_window: float = 72 * 3600.0
    """The offences of this many seconds before an offence set its cooldown."""
    cooldown_first: float = 600.0
    """The cooldown of the second offence in the window (the first: a warning)."""
    cooldown_factor: float = 3.0
    cooldown_max: float = 3 * 86400.0

    def cooldown(self, offences: int) -> float:
        """Seconds of cooldown after the ``offences``-th offence in the window
        (in Lua: :data:`tables.rating_scripts.RECOOL_LUA`, the same rule)."""
        if offences < 2:
            return 0.0
        return min(self.cooldown_first * self.cooldown_factor ** (offences - 2), self.cooldown_max)

    def cooldown_args(self) -> list[int | float]:
        """The cooldown's numbers as the scripts take them (``RECOOL_LUA``'s
        ``window, first, factor, max``, in ms)."""
        return [
            int(self.offence_window * 1000),
            int(self.cooldown_first * 1000),
            self.cooldown_factor,
            int(self.cooldown_max * 1000),
        ]


def owed_leaves(table: Table, charged: str = "") -> list[int]:
    """The players whose voluntary leave of the game in progress is an offence
    to charge at once (#38): the game is rated for him (:meth:`Table.rated_for`
    -- a casual game's leave charges nothing, nor a new player's), he left
    (``left``) by his own doing (``taken``; an operator's takeover is none, a seat kept from the last game
    by a rematch neither), and ``charged`` (the table's ``lc``) does not say
    it was done.  Whether it stays an offence is the settlement's to say."""
    if table.status != PLAYING or not table.rated_game:
        return []
    head = f"{table.game_no}|"
    done = charged[len(head) :] if charged.startswith(head) else ""
    return [
        s.user
        for s in table.seats
        if s.user is not None and s.left and s.taken and f",{s.user}," not in done
        and table.rated_for(s.user)  # #38: not a new player's, whose game is casual
    ]  # fmt: skip


def timed_out(seat: Seat, limit: int, ai_kind: str) -> tuple[Seat, bool]:
    """His turn ran out once more (#25): the seat after it, and whether the AI
    takes it now -- after ``limit`` timeouts in a row
    (``LiveConfig.timeouts_to_ai``), by his own doing (``taken``): if the AI
    still plays it at the game's end, he walked away (:func:`offenders`)."""
    n = seat.timeouts + 1
    if n >= limit:
        return replace(seat, ai=ai_kind, timeouts=n, taken=True), True
    return replace(seat, timeouts=n), False


def late_view_deadline(
    table: Table, state: GameState | None, deadline: int | None, seat: int, now: int
) -> int | None:
    """His turn again from ``now``: the bot could not show him his cards in time
    (his hand in the group waited seconds for the chat's flood budget, #24) --
    the bot's own delivery trouble, never his act, must not cost him a move
    (DEVELOPERS "a fault is never a user's act").  Only while the game waits
    for him (his seat is to act and the AI does not play it) and once a turn: the
    deadline it sets is marked on his seat (``Seat.late``), so a turn is at most
    doubled and nobody can stall a game with it.  None: nothing to move."""
    if table.status != PLAYING or not table.timer or deadline is None:
        return None
    if state is None or state.over or not 0 <= seat < len(table.seats):
        return None
    s = table.seats[seat]
    if s.ai_controlled or s.late == deadline or seat not in state.to_act():
        return None
    moved = now + table.timer * 1000
    return moved if moved > deadline else None


def offenders(result: GameResult, rated_for: Iterable[int]) -> set[int]:
    """The players whose walking away from ``result`` is an offence (#25,
    #38), as its settlement charges it (:func:`tables.rating_rules.settlement_plan`):
    the AI played his seat at its end (``away``: he left, or ran out of time
    twice and never came back), by his own doing (``taken``: an operator's
    takeover is none), and the game was rated for him (``rated_for``: his
    rating moved -- a new player's, or a capped pair's player with no other
    opponent, is not).  A leave charged at once (:func:`owed_leaves`) is
    confirmed by it, or undone when he is not among them."""
    away, taken, rated = set(result.away), set(result.taken), set(rated_for)
    return {
        u
        for s, (u, _n) in enumerate(result.seats)
        if u is not None and s in away and s in taken and u in rated
    }


def reliability_mark(result: GameResult, seat: int) -> bool:
    """The mark a finished game with other people leaves on the reliability of
    the player of ``seat``: the AI never took his seat (by his timeouts or his
    leave; #25).  His reliability is the share of such marks in his last
    ``RatingRules.reliability_games`` (:data:`tables.rating_scripts.APPLY_LUA`)."""
    return seat not in result.taken


def cooldown_refusal(user: int, until: int, now: int, name: str = "") -> LiveError:
    """The ``cooldown`` refusal of a rated game (#25): whose (``name`` when it
    is another player's), when it ends (``until`` ms) and the seconds left."""
    left = max(1, (until - now + 999) // 1000)
    info: dict[str, Any] = {"user": user, "until": until, "left": left}
    if name:
        info["name"] = name
        return LiveError("cooldown", f"{name} may not play rated games until {until} (ms)", **info)
    return LiveError("cooldown", f"no rated games until {until} (ms)", **info)


async def eligible(ratings: RatingsPart, table: Table, now_ms: int) -> Table:
    """``table`` with its new players, capped pairs and pairs short of other
    opponents read anew (#38, :meth:`tables.ratings.Ratings.eligibility`); a
    casual lobby: none."""
    if not table.rated:
        return replace(table, fresh=(), capped=(), narrow=())
    # every seat's user, one who left included (a rematch keeps his seat)
    users = [s.user for s in table.seats if s.user is not None]
    e = await ratings.eligibility(users, now_ms)
    return replace(table, fresh=e.fresh, capped=e.capped, narrow=e.narrow)


class FairPlay:
    """Charges the leaves and answers the one check before a rated game."""

    def __init__(self, tables: TablesPart) -> None:
        self.tables = tables

    async def charge_leave(self, table: Table, user: int) -> None:
        """Charge ``user``'s voluntary leave of ``table``'s rated game in
        progress (:meth:`Ratings.charge_leave`, #38), then note it in the
        table (``lc``) so that its timer stops asking.  Once, however often
        it is asked (both steps are idempotent): by the leave, by the
        table's timer after a fault or a crash between the leave's write and
        this, by a check before a rated game (:meth:`cooldowns`)."""
        t = self.tables
        await t.ratings.charge_leave(table.id, table.game_no, user, t.now_ms())
        key = t.keys.table(table.id)
        await t.store.one(lambda p: p.eval(LEAVE_CHARGED_LUA, 1, key, table.game_no, user))

    async def charge_owed(self, loaded: LoadedTable) -> bool:
        """Charge every leave of ``loaded``'s game not known to be charged:
        True when all went through (a fault leaves the rest to the timer)."""
        try:
            for user in loaded.owed:
                await self.charge_leave(loaded.table, user)
        except (ServiceUnavailable, RedisError) as e:
            log.warning("table %s: a leave's offence not charged yet: %s", loaded.table.id, e)
            return False
        return True

    async def cooldowns(self, users: Iterable[int], *, at: str = "") -> dict[int, int]:
        """The users in a cooldown from rated games now: user -> its end (ms).
        What :meth:`check` reads.  A leave of a rated game whose offence is
        not charged yet (the process died between the leave's write and its
        charge) is charged first: his pointer still names the table he left
        (``at``: the table being checked, skipped), and a game his leave
        ended is settled first -- so no crash lets him dodge it.  A fault is
        :class:`ServiceUnavailable`, never "no cooldown"."""
        t = self.tables
        us = list(dict.fromkeys(users))
        if not us:
            return {}
        ptrs = await t.store.run(lambda p: [p.get(t.keys.user(u)) for u in us])
        for user, raw in zip(us, ptrs, strict=True):
            cur = text(raw) if raw else ""
            if cur and cur != at:
                await self._charge_left(cur, user)
        now = t.now_ms()
        return {u: end for u, end in (await t.ratings.cooldowns(us)).items() if end > now}

    async def _charge_left(self, table_id: str, user: int) -> None:
        t = self.tables
        try:
            loaded = await t.load(table_id)
        except LiveError:
            return  # gone: its game was settled long ago, or never played
        if user in loaded.owed:
            await self.charge_leave(loaded.table, user)
            return
        res = loaded.result
        if loaded.unsettled and res is not None:
            seat = next((i for i, (u, _n) in enumerate(res.seats) if u == user), None)
            if seat is not None and seat in res.away and seat in res.taken:
                prev = loaded.result_previous_loser
                ended = loaded.finished_table or loaded.table  # the record checks its game
                if not await t.follow_up(ended, res, prev):
                    raise ServiceUnavailable("the last game's settlement is not done yet")

    async def follow_up_last(self, loaded: LoadedTable, result: GameResult) -> None:
        """#38 exactly once: a write ending a game replaces the table's result,
        so the game before it, its follow-ups still not done (they failed and
        the table's timer has not redone them yet: a rematch starts at once),
        has them done first -- else it is lost from the table and left to the
        sweep, which never sees a game whose stats step failed (no finished
        index, no record).  Still failing: :class:`ServiceUnavailable`, the move
        is refused as the outage it is (never a user's act) and the last game
        stays the table's to settle."""
        last = loaded.result
        if last is None or not loaded.unsettled or last.game >= result.game:
            return
        ended = loaded.finished_table or loaded.table  # the record checks its game
        if not await self.tables.follow_up(ended, last, loaded.result_previous_loser):
            raise ServiceUnavailable(f"game {last.table}:{last.game}: follow-ups not done yet")

    async def refusal(
        self, users: Sequence[int], *, at: str = "", names: Mapping[int, str] | None = None
    ) -> LiveError | None:
        """:meth:`check`'s answer as a value: the ``cooldown`` refusal of the
        player of ``users`` whose cooldown ends first (named by ``names``),
        None when nobody is in one."""
        cooling = await self.cooldowns(users, at=at)
        if not cooling:
            return None
        user, until = min(cooling.items(), key=lambda kv: kv[1])
        return cooldown_refusal(user, until, self.tables.now_ms(), (names or {}).get(user, ""))

    async def check(
        self, users: Sequence[int], *, at: str = "", names: Mapping[int, str] | None = None
    ) -> None:
        """THE check before a rated game (#25, #38): refuses (``cooldown``,
        :func:`cooldown_refusal`) when one of ``users`` is in a cooldown from
        rated games -- a leave counts at once (:meth:`cooldowns`; ``at``: the
        table being started, whose own leaves are not charged twice).  Called
        inside the plan of the write it guards (see the module)."""
        refused = await self.refusal(users, at=at, names=names)
        if refused is not None:
            raise refused


__all__ = [
    "FairPlay",
    "LoadedTable",
    "OffenceRules",
    "RatingsPart",
    "TablesPart",
    "cooldown_refusal",
    "eligible",
    "offenders",
    "owed_leaves",
    "reliability_mark",
    "timed_out",
]
