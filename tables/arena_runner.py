"""An arena's wake (#27): what happens when its timer hint is due.

:class:`tables.timers.Timers` handles an arena's hint (``@<id>`` in the timer
shards, :meth:`tables.arenas.Arenas.hint`) like a table's: one process claims
it and calls :meth:`ArenaRunner.wake`, which

1. checks the tables seated a while ago (:meth:`ArenaRunner.repair`): a table
   that never appeared (its maker stopped) frees its players; a game that
   ended without its score reaching the arena is scored from its result --
   at most once a ``repair_after``, all of them in one round trip (#38);
2. ticks the arena (one compare-and-set: the start, the pairing, the end) --
   at most ``tables_per_wake`` tables, the rest at the next timer tick (#38);
3. makes the tables that pairing seated, as ordinary games of the product: a
   lobby in the arena's group with the pairing's id, its players joined, the
   game started -- rated, with the arena's turn timer.  The tables of one
   wake are made side by side.

So a wake costs a few round trips plus those of the tables it makes, whatever
the arena's size (#38: it loaded every table seated a minute ago, one round
trip each, at every join and every scored game -- the square of the players).

A player who cannot be seated (he sits at another table, or has a cooldown
before rated games) is withdrawn from the arena -- he may join again -- and
the others of his table are free for the next pairing.  He is the player the
refusal names (``info["user"]``), whichever seat he holds (#38).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from tables.arena_rules import Arena
from tables.arenas import Arenas
from tables.games import Games
from tables.lobbies import Lobbies
from tables.model import CANCELLED, OPEN, OVER, LiveError, ServiceUnavailable, WriteResult
from tables.tables import Tables

log = logging.getLogger(__name__)


@dataclass
class Woken:
    """What one wake did: the arena as it stands after it, the games it started,
    the players it withdrew because they could not be seated (user, the error
    code), the tables repaired, whether the arena began or finished now, and
    when it wants to be woken next (ms; None: never)."""

    arena: Arena
    started: list[WriteResult] = field(default_factory=list)
    withdrawn: list[tuple[int, str]] = field(default_factory=list)
    repaired: int = 0
    began: bool = False
    finished: bool = False
    next: int | None = None


class ArenaRunner:
    """Wakes arenas: pairs, makes their tables, repairs (see the module)."""

    def __init__(self, tables: Tables, lobbies: Lobbies, games: Games) -> None:
        self.tables = tables
        self.arenas: Arenas = tables.arenas
        self.lobbies = lobbies
        self.games = games

    async def wake(
        self, arena_id: str, before_start: Callable[[str, int], Awaitable[object]] | None = None
    ) -> Woken:
        """Wake ``arena_id``: repair, pair, make the pairings' tables.
        ``before_start`` is awaited with (table, 0) just before a seated table's
        game starts: an adapter marks the start's render as owed, so a process
        that stops between the start and its messages leaves it to another (#28)."""
        arena, checked = await self.arenas.load_wake(arena_id)
        repaired = await self.repair(arena, checked)
        ticked = await self.arenas.tick(arena_id, self.arenas.config.tables_per_wake)
        woken = Woken(ticked.arena, repaired=repaired)
        woken.began, woken.finished = ticked.started, ticked.finished
        made = await asyncio.gather(
            *(
                self._make(ticked.arena, tid, users, woken, before_start)
                for tid, users in ticked.seated
            ),
            return_exceptions=True,
        )
        failed: BaseException | None = None
        for (tid, _users), got in zip(ticked.seated, made, strict=True):
            if isinstance(got, WriteResult):
                woken.started.append(got)
            elif isinstance(got, LiveError):
                log.info("arena %s: table %s not made: %s", arena_id, tid, got)
            else:
                failed = failed or got
        if failed is not None:  # an outage: the wake is due again (its timer)
            raise failed
        if len(woken.started) < len(ticked.seated):
            woken.arena = await self.arenas.get(arena_id)  # released, withdrawn meanwhile
        woken.next = self.arenas.next_wake(woken.arena)
        if ticked.more:  # players left free by the bound: at the next timer tick
            woken.next = self.arenas.now_ms()
        return woken

    async def _make(
        self,
        arena: Arena,
        tid: str,
        users: tuple[int, ...],
        woken: Woken,
        before_start: Callable[[str, int], Awaitable[object]] | None,
    ) -> WriteResult:
        """The table of one pairing, its game started.  A player who cannot sit
        is withdrawn -- the one the refusal names, none if it names nobody --
        and the table dropped (the others are free again)."""
        names = {p.user: p.name for p in arena.players}
        first = users[0]
        made = False
        try:
            await self.lobbies.create_lobby(
                first,
                names.get(first, str(first)),
                chat=arena.chat,
                variant=arena.variant,
                max_seats=len(users),
                timer=arena.timer,
                table_id=tid,
                arena=arena.id,
            )
            made = True
            for user in users[1:]:
                await self.lobbies.join(tid, user, names.get(user, str(user)))
            if before_start is not None:
                await before_start(tid, 0)
            return await self.games.start(tid, first)
        except LiveError as e:
            if made:
                try:
                    await self.lobbies.cancel(tid, first)
                except LiveError as gone:  # started or cancelled meanwhile
                    log.info("arena %s: table %s not cancelled: %s", arena.id, tid, gone)
            await self.arenas.release(arena.id, tid)
            refused = _refused(e, users)
            if refused is not None:
                await self.arenas.withdraw(arena.id, refused)
                woken.withdrawn.append((refused, e.code))
            raise

    async def repair(self, arena: Arena, checked: int = 0) -> int:
        """Check the tables seated ``repair_after`` ago or more: free the players
        of one that never started, score a game whose score never reached the
        arena.  How many it changed.

        #38: only when the last check is ``repair_after`` old (``checked``: until
        when it counts, :meth:`Arenas.load_wake`), and every table due in ONE
        round trip (:meth:`Tables.heads`, which marks the check in the same
        pipeline); only a table to change costs more.  An outage skips the
        check -- it comes again at a later wake, and a table it could not read
        is never taken for gone."""
        now = self.arenas.now_ms()
        every = int(self.arenas.config.repair_after * 1000)
        due = [p for p in arena.playing if p.at <= now - every]
        if not due or checked > now:
            return 0
        try:
            heads = await self.tables.heads(
                [p.table for p in due],
                lambda p: self.arenas.mark_checked(p, arena.id, now + every),
            )
        except ServiceUnavailable as e:
            log.warning("arena %s: its tables not checked now: %s", arena.id, e)
            return 0
        changed = 0
        for pairing in due:
            head = heads[pairing.table]
            if head is None:  # never made (its maker stopped), or long gone
                changed += await self.arenas.release(arena.id, pairing.table) is not None
                continue
            table, result = head
            if table.status == OPEN:  # made, never started: its maker stopped half-way
                try:
                    await self.lobbies.cancel(pairing.table, table.creator)
                except LiveError as e:
                    log.info("arena %s: table %s: %s", arena.id, pairing.table, e)
                    continue
                changed += await self.arenas.release(arena.id, pairing.table) is not None
            elif table.status == CANCELLED:
                changed += await self.arenas.release(arena.id, pairing.table) is not None
            elif table.status == OVER and result is not None:
                changed += await self.arenas.record(arena.id, result) is not None
        return changed


def _refused(e: LiveError, users: tuple[int, ...]) -> int | None:
    """The player of ``users`` who cannot sit, as the refusal ``e`` names him
    (he sits at another table, his claim on the seat is in flight elsewhere, or
    he has a cooldown before rated games); None when it is about nobody (the
    table itself was busy, say).  #38: never the seat whose step was running
    -- a start-time cooldown of the second seat withdrew the first."""
    if e.code not in ("seated_elsewhere", "cooldown", "busy"):
        return None
    user = e.info.get("user")
    return user if isinstance(user, int) and user in users else None
