"""A group the bot lost (#38): everything the table service keeps of it stops.

The chat adapter calls :meth:`Groups.close` when the bot was removed from a
group (``removed``) or when the group became a supergroup under a new chat id
(``upgraded``: the old group's messages -- a table's message, hands kept in the
group, an arena's message -- can no longer be edited, and the old id takes no
more messages).  In one call, each step its own compare-and-set, so a second
call (another process, the other of the two updates Telegram sends, a retry
after an outage) finds nothing left to do and reports nothing:

1. the group's arena, scheduled or running, is cancelled (``why``: the reason):
   nobody is seated any more and, cancelled, it scores nothing from now on;
2. its tables being played are stopped -- cancelled with ``stopped`` set to the
   reason, no result: no rating, no stats, no offence and no cooldown for
   anybody (a fault is never a user's act) -- and freed in the arena;
3. every other table of the group, a game or an open lobby, is stopped the
   same way: the bot can no longer show it in the group.

**Removing the bot is a user's act** (#38, ``by``: the user Telegram names as
the remover).  A player about to lose a rated game must not void it by
kicking the bot: when ``by`` plays a rated game of the group (seated, a seat
he left included, and not out of it already with his place fixed), that game
is not cancelled but ends at once, forfeited by him
(:meth:`tables.games.Games.forfeit_plan`): his seat marked as a leave marks
it, so he ranks last and its settlement charges him the walk-away offence (the
one rule, :func:`tables.fairplay.offenders`); the others keep the places of
those out already and share the next.  It is an ordinary finished game for the
ratings and stats; in the arena, cancelled just before, it scores nothing, and
its pairing is freed like the others'.  Anybody else's removal (an admin who
does not play, Telegram's anonymous admin), a casual game, an upgrade: as
above, nobody charged.  The forfeit is the table's own compare-and-set (a
table no longer in play is left alone), so the update delivered twice, or to
two processes, ends the game once and its result is settled once.

It names what it stopped (:class:`Closed`) so the adapter tells each player in
private.  Moving a group's state to a supergroup's new id is not attempted:
tables, lobbies, budgets, the leaderboard and the bot's message ids are all
keyed by the old id, and the old messages cannot be edited under the new one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from tables.admin import Admin
from tables.arena_rules import Arena
from tables.arenas import Arenas
from tables.model import CANCELLED, OPEN, PLAYING, LiveError, Table
from tables.tables import Loaded, Plan, Tables

log = logging.getLogger(__name__)

REMOVED = "removed"
"""The bot was removed (left, or kicked) from the group."""
UPGRADED = "upgraded"
"""The group became a supergroup (a new chat id)."""
REASONS = (REMOVED, UPGRADED)


@dataclass
class Closed:
    """What one :meth:`Groups.close` stopped: the arena it cancelled (None: none,
    or another call did) and the tables it stopped, as they were before."""

    chat: int
    reason: str
    arena: Arena | None = None
    stopped: list[Table] = field(default_factory=list)
    forfeited: list[Table] = field(default_factory=list)
    """The tables whose game the remover forfeited (#38), as they were before
    (among ``stopped`` too: they are no longer in play)."""
    by: int | None = None
    """Who removed the bot, as Telegram said (None: not known)."""

    @property
    def anything(self) -> bool:
        return self.arena is not None or bool(self.stopped)

    def players(self) -> list[int]:
        """Whom to tell, once each: the arena's players, everybody seated at
        a stopped table and every human of a forfeited game (one who left it
        too: it has a result for him), in that order."""
        seen: dict[int, None] = {}
        if self.arena is not None:
            for p in self.arena.players:
                seen.setdefault(p.user)
        for t in self.stopped:
            for user in t.humans():
                seen.setdefault(user)
        for t in self.forfeited:
            for s in t.seats:
                if s.user is not None:
                    seen.setdefault(s.user)
        return list(seen)

    def forfeits(self) -> dict[int, Table]:
        """Each human of a forfeited game -> its table as it was (#38)."""
        return {s.user: t for t in self.forfeited for s in t.seats if s.user is not None}


class Groups:
    """Stops a lost group's arena and tables (see the module)."""

    def __init__(self, tables: Tables, arenas: Arenas, admin: Admin) -> None:
        self.tables = tables
        self.arenas = arenas
        self.admin = admin

    async def close(self, chat: int, reason: str, by: int | None = None) -> Closed:
        """Stop what the group ``chat`` holds (see the module); ``by``: the user
        who removed the bot (``removed`` only: he forfeits a rated game he
        plays there)."""
        if reason not in REASONS:
            raise LiveError("bad_request", f"a group closes as one of {REASONS}")
        closed = Closed(chat, reason, by=by if reason == REMOVED else None)
        current = await self.arenas.current(chat)
        if current is not None and not current.over:
            closed.arena = await self.arenas.stop(current.id, f"group {reason}")
        if current is not None:  # its tables, whoever cancelled it (a retry finishes)
            arena = await self.arenas.get(current.id)
            for pairing in arena.playing if arena.over else ():
                await self._stop(pairing.table, reason, closed)
                await self.arenas.release(arena.id, pairing.table)
        for summary in await self.admin.list_tables(chat=chat, limit=10**9):
            if summary.status in (OPEN, PLAYING):
                await self._stop(summary.id, reason, closed)
        return closed

    async def _stop(self, table_id: str, reason: str, closed: Closed) -> None:
        """The table cancelled without a result (nothing when it is over, gone
        or stopped already)."""
        before: list[Table] = []
        forfeit: list[bool] = []

        def make(loaded: Loaded) -> Plan | None:
            before.clear()
            forfeit.clear()
            t = loaded.table
            if t.status not in (OPEN, PLAYING):
                return None
            before.append(t)
            seat = forfeiter(loaded, closed.by)
            if seat is not None:  # his own act (#38): he loses the game he plays
                forfeit.append(True)
                return self.admin.games.forfeit_plan(loaded, seat, reason)
            now = self.tables.now_ms()
            t = replace(t, status=CANCELLED, updated=now, stopped=reason)
            return Plan(t, loaded.state, events=[("abort", -1, f"bot:{reason}")], notify="abort")

        try:
            await self.tables.retry(table_id, make)
        except LiveError as e:  # never made (its arena's maker stopped), or expired
            log.info("group %s: table %s not stopped: %s", closed.chat, table_id, e)
            return
        closed.stopped.extend(before)
        if forfeit:
            closed.forfeited.extend(before)


def forfeiter(loaded: Loaded, by: int | None) -> int | None:
    """The seat of ``by`` when he forfeits the game of ``loaded`` by removing
    the bot (#38): a rated game in progress (:attr:`Table.rated_game`; a
    casual one is stopped as for a fault) where he holds a seat -- one he left
    too: a leave does not make his loss go away -- and is not out already (his
    place is fixed, he has nothing left to lose; the game is stopped as for
    anybody who does not play).  None otherwise."""
    t, state = loaded.table, loaded.state
    if by is None or t.status != PLAYING or state is None or not t.rated_game:
        return None
    seat = next((i for i, s in enumerate(t.seats) if s.user == by), None)
    if seat is None or seat in state.out:
        return None
    return seat
