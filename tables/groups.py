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

    @property
    def anything(self) -> bool:
        return self.arena is not None or bool(self.stopped)

    def players(self) -> list[int]:
        """Whom to tell, once each: the arena's players and everybody seated at
        a stopped table, in that order."""
        seen: dict[int, None] = {}
        if self.arena is not None:
            for p in self.arena.players:
                seen.setdefault(p.user)
        for t in self.stopped:
            for user in t.humans():
                seen.setdefault(user)
        return list(seen)


class Groups:
    """Stops a lost group's arena and tables (see the module)."""

    def __init__(self, tables: Tables, arenas: Arenas, admin: Admin) -> None:
        self.tables = tables
        self.arenas = arenas
        self.admin = admin

    async def close(self, chat: int, reason: str) -> Closed:
        if reason not in REASONS:
            raise LiveError("bad_request", f"a group closes as one of {REASONS}")
        closed = Closed(chat, reason)
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

        def make(loaded: Loaded) -> Plan | None:
            before.clear()
            t = loaded.table
            if t.status not in (OPEN, PLAYING):
                return None
            before.append(t)
            now = self.tables.now_ms()
            t = replace(t, status=CANCELLED, updated=now, stopped=reason)
            return Plan(t, loaded.state, events=[("abort", -1, f"bot:{reason}")], notify="abort")

        try:
            await self.tables.retry(table_id, make)
        except LiveError as e:  # never made (its arena's maker stopped), or expired
            log.info("group %s: table %s not stopped: %s", closed.chat, table_id, e)
            return
        closed.stopped.extend(before)
