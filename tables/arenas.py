"""Arenas (#27): a group's tournament, kept in Redis.  The rules -- scoring,
pairing, standings -- are :mod:`tables.arena_rules`; this part loads an arena,
applies one of them and writes it back with one compare-and-set, so two
processes pair a free player once and score a game once.

Its keys (one hash tag ``{ar:<id>}`` per arena, ``{ar}`` for the groups'
current arenas and the list) are spelled in :class:`tables.keys.ArenaKeys`.

A pairing is written first (the players' tables named, ``playing``) and the
tables are made after it by the caller, with those ids: a process that stops in
between leaves a pairing whose table never appears, which :meth:`Arenas.release`
frees (the caller's sweep).  The arena's own times (its start, its end, the
pairings while it runs) are driven by :meth:`Arenas.tick`.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from redis.asyncio.client import Pipeline

from engine.variants import VARIANTS
from tables.arena_rules import (
    CANCELLED,
    FINISHED,
    MINUTES_RANGE,
    RUNNING,
    SCHEDULED,
    SEATS_RANGE,
    Arena,
    ArenaPlayer,
    free_table,
    pair,
    score,
    seat,
)
from tables.keys import ArenaKeys
from tables.model import TIMER_CHOICES, LiveError
from tables.records import GameResult
from tables.scripts import ARENA_CAS_LUA, CHAT_SWAP_LUA
from tables.store import Store, text


@dataclass(frozen=True)
class ArenaConfig:
    """The arena part's numbers (times in seconds)."""

    patience: float = 30.0
    """A free player waits this long for a full table; then a smaller one."""
    keep: float = 7 * 86400.0
    """An arena is kept this long after its end (its standings, the admin API)."""
    max_ahead: float = 24 * 3600.0
    """The latest start an arena may be given."""
    repair_after: float = 60.0
    """A seated table is checked (was it made? did its result reach the arena?)
    this long after its pairing, and again each time as long."""
    cas_retries: int = 50
    max_players: int = 200
    """Players an arena takes (#38): a join beyond it is refused (``arena_full``);
    one who withdrew comes back all the same.  Bounds the arena's record, which
    every join, pairing and score reads and writes whole."""
    tables_per_wake: int = 16
    """Tables one wake seats and makes at most (#38); more free players wait for
    the next timer tick -- a wake never holds the timers for long."""


@dataclass(frozen=True)
class Ticked:
    """What :meth:`Arenas.tick` changed: the arena as written, the tables it
    seated now (id, players in seat order) for the caller to make, and whether
    it started or finished with this tick."""

    arena: Arena
    seated: list[tuple[str, tuple[int, ...]]]
    started: bool = False
    finished: bool = False
    more: bool = False  # more could be seated now than ``limit`` allowed (#38)


class Arenas:
    """Create, join, leave, pair, score and read arenas (see the module)."""

    def __init__(
        self,
        store: Store,
        prefix: str,
        clock: Callable[[], float],
        config: ArenaConfig | None = None,
        *,
        check: Callable[[Sequence[int]], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.config = config or ArenaConfig()
        self.check = check
        """#25, #38: the one check before a rated game
        (:meth:`tables.fairplay.FairPlay.check`), run by :meth:`join` inside its
        compare-and-set's plan; None: none (an arena of its own)."""
        self.clock = clock
        self.keys = ArenaKeys(prefix)
        self.prefix = prefix
        self._cas = store.script(ARENA_CAS_LUA)
        self._chat_swap = store.script(CHAT_SWAP_LUA)
        self.new_id: Callable[[], str] = lambda: secrets.token_urlsafe(6)
        """An arena's id (tests may replace it)."""
        self.new_table: Callable[[], str] = lambda: secrets.token_urlsafe(8)
        """A seated table's id (the lobbies' invite code format)."""

    # ---------------------------------------------------------------- keys
    # (spelled in :class:`tables.keys.ArenaKeys`)
    def key(self, arena_id: str) -> str:
        return self.keys.arena(arena_id)

    def games_key(self, arena_id: str) -> str:
        return self.keys.games(arena_id)

    def repair_key(self, arena_id: str) -> str:
        return self.keys.repair(arena_id)

    def chat_key(self, chat: int) -> str:
        return self.keys.chat(chat)

    @property
    def all_key(self) -> str:
        return self.keys.all

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    # ---------------------------------------------------------------- reads
    async def get(self, arena_id: str) -> Arena:
        arena, _v = await self._load(arena_id)
        return arena

    async def current(self, chat: int) -> Arena | None:
        """The group's arena: the one scheduled or running, else the last one
        (finished or cancelled, while it is kept); None if it never had one."""
        _pointer, arena = await self._current(chat)
        return arena

    async def _current(self, chat: int) -> tuple[str, Arena | None]:
        raw = await self.store.one(lambda p: p.get(self.chat_key(chat)))
        if not raw:
            return "", None
        try:
            return text(raw), await self.get(text(raw))
        except LiveError:  # the pointer outlived its arena
            return text(raw), None

    async def listing(self, limit: int = 50) -> list[Arena]:
        """The newest arenas first (the operators' list)."""
        ids = await self.store.one(lambda p: p.zrevrange(self.all_key, 0, max(0, limit - 1)))
        out: list[Arena] = []
        for raw in ids:
            try:
                out.append(await self.get(text(raw)))
            except LiveError:
                continue  # expired meanwhile
        return out

    async def _load(self, arena_id: str) -> tuple[Arena, int]:
        if not arena_id or len(arena_id) > 64:
            raise LiveError("no_arena", "there is no such arena")
        got = await self.store.one(lambda p: p.hmget(self.key(arena_id), ["v", "a"]))
        if not got or got[1] is None:
            raise LiveError("no_arena", "there is no such arena (or it ended long ago)")
        return Arena.from_json(got[1]), int(got[0])

    async def load_wake(self, arena_id: str) -> tuple[Arena, int]:
        """The arena and until when (ms) its seated tables count as checked (#38;
        0: never), one round trip (the two keys share its slot)."""
        if not arena_id or len(arena_id) > 64:
            raise LiveError("no_arena", "there is no such arena")

        def build(p: Pipeline) -> None:
            p.hmget(self.key(arena_id), ["v", "a"])
            p.get(self.repair_key(arena_id))

        got, until = await self.store.run(build)
        if not got or got[1] is None:
            raise LiveError("no_arena", "there is no such arena (or it ended long ago)")
        return Arena.from_json(got[1]), int(until or 0)

    def mark_checked(self, p: Pipeline, arena_id: str, until: int) -> None:
        """Queue on ``p``: the arena's tables count as checked until ``until``
        (ms).  Its key outlives that a while, whatever the clock (a test's)."""
        ttl = int(self.config.repair_after * 1000) * 2 + 3_600_000
        p.set(self.repair_key(arena_id), until, px=ttl)

    # ---------------------------------------------------------------- writes
    async def _write(self, arena: Arena, version: int, game: str = "") -> int | None:
        """CAS ``arena`` over ``version`` (``game``: the entry of a game it
        scores); its new version, None when stale."""
        ttl = max(arena.ends - self.now_ms(), 0) + int(self.config.keep * 1000)
        keys = [self.key(arena.id), self.games_key(arena.id)]
        ok, v = await self._cas(keys, [version, arena.to_json(), ttl, game])
        return int(v) if int(ok) else None

    async def mutate(
        self,
        arena_id: str,
        change: Callable[[Arena], Arena | None],
        game: Callable[[Arena], str] | None = None,
        *,
        before: Callable[[Arena], Awaitable[None]] | None = None,
    ) -> Arena:
        """Load, ``change`` (it checks its rules on the arena as loaded and raises
        :class:`LiveError` to refuse; None: nothing to write) and write, again
        while another write got there first.  The arena as written (or read).
        ``game``: the games-list entry the write appends (from the new arena);
        ``before``: the rules read elsewhere (a cooldown), checked at each try
        before ``change``."""
        for _ in range(self.config.cas_retries):
            arena, version = await self._load(arena_id)
            if before is not None:
                await before(arena)
            new = change(arena)
            if new is None or new == arena:
                return arena
            if await self._write(new, version, game(new) if game else "") is not None:
                return new
        raise LiveError("busy", "the arena is too busy right now; try again")

    async def games(self, arena_id: str, offset: int = 0, limit: int = 100) -> list[dict[str, Any]]:
        """The games it scored, oldest first (a page)."""
        await self.get(arena_id)  # no_arena
        key = self.games_key(arena_id)
        raw = await self.store.one(lambda p: p.lrange(key, offset, offset + limit - 1))
        return [json.loads(r) for r in raw]

    async def create(
        self,
        chat: int,
        creator: int,
        variant: str,
        *,
        seats: int = 2,
        minutes: int = 30,
        starts: int | None = None,
        timer: int = 60,
        thread: int | None = None,
    ) -> Arena:
        """A new arena in ``chat`` (one at a time), starting at ``starts`` (ms;
        None: now) and lasting ``minutes``; its games' turn timer ``timer``
        seconds (never off: a game nobody plays would hold its players);
        ``thread``: where in ``chat`` it lives, kept as given (``Table.thread``)."""
        if variant not in VARIANTS:
            raise LiveError("bad_variant", f"unknown game {variant!r}")
        lo, hi = SEATS_RANGE
        top = min(hi, VARIANTS[variant].max_players)
        if not lo <= seats <= top:
            raise LiveError("bad_seats", f"players per table: {lo} to {top}")
        if timer not in TIMER_CHOICES or not timer:
            raise LiveError("bad_timer", "the turn timer: 30, 60 or 120 seconds")
        lo, hi = MINUTES_RANGE
        if not lo <= minutes <= hi:
            raise LiveError("bad_minutes", f"an arena lasts {lo} to {hi} minutes")
        now = self.now_ms()
        start = now if starts is None else starts
        if start < now - 60_000 or start > now + int(self.config.max_ahead * 1000):
            raise LiveError("bad_start", "the start must be within the next 24 hours")
        arena = Arena(
            id=self.new_id(),
            chat=chat,
            creator=creator,
            variant=variant,
            seats=seats,
            starts=max(start, now),
            ends=max(start, now) + minutes * 60_000,
            status=SCHEDULED,
            timer=timer,
            created=now,
            thread=thread,
        )
        ttl = arena.ends - now + int(self.config.keep * 1000)
        chat_key = self.chat_key(chat)
        for _ in range(self.config.cas_retries):
            pointer, old = await self._current(chat)
            if old is not None and not old.over:
                raise LiveError(
                    "arena_running",
                    "this group already has an arena; it ends first",
                    arena=old.id,
                    status=old.status,
                )
            if await self._write(arena, 0) is None:  # pragma: no cover - 48 random bits
                raise LiveError("busy", "try again")
            if await self._chat_swap([chat_key], [pointer, arena.id, ttl]):
                break
            # a rival create won the chat: this arena never was
            await self.store.one(lambda p: p.delete(self.key(arena.id)))
        else:  # pragma: no cover - only under a storm of creates
            raise LiveError("busy", "try again")
        gone = (
            now - int((self.config.keep + self.config.max_ahead) * 1000) - MINUTES_RANGE[1] * 60_000
        )

        def index(p: Pipeline) -> None:
            p.zadd(self.all_key, {arena.id: now})
            p.zremrangebyscore(self.all_key, "-inf", gone)  # expired long ago

        await self.store.run(index)
        await self.hint(arena.id, arena.starts)
        return arena

    # ---------------------------------------------------------------- timers
    @staticmethod
    def timer_member(arena_id: str) -> str:
        """The arena's entry among the timer hints (a table id never has '@')."""
        return f"@{arena_id}"

    async def hint(self, arena_id: str, at: int) -> None:
        """Wake the arena at ``at`` (ms) at the latest: a hint in the table
        service's timer shards (``ZADD LT``: never later than one already there),
        handled by :class:`tables.timers.Timers` like a table's."""
        await self.store.add_hint(self.timer_member(arena_id), at)

    def next_wake(self, arena: Arena) -> int | None:
        """When the arena must be looked at next (ms; None: never again): its
        start; while it runs, its end and the moment a waiting player's
        patience runs out -- a game's end wakes it at once (:meth:`record`);
        after its end, a while later, to finish it should a result be lost."""
        if arena.over:
            return None
        if arena.status == SCHEDULED:
            return arena.starts
        now = self.now_ms()
        repair = now + int(self.config.repair_after * 1000)
        if now >= arena.ends:
            return repair
        waiting = [p.since for p in arena.players if p.waiting]
        wake = arena.ends
        if len(waiting) >= 2:
            wake = min(wake, max(waiting) + int(self.config.patience * 1000))
        if arena.playing:  # a table whose result or whose start may be lost
            wake = min(wake, repair)
        return max(wake, now + 1000)  # never a busy loop

    async def join(self, arena_id: str, user: int, name: str, rating: int = 0) -> Arena:
        """``user`` plays in the arena from its start (or now); a player who
        withdrew comes back with his points."""

        def change(a: Arena) -> Arena | None:
            if a.over:
                raise LiveError("arena_over", "this arena is over")
            now = self.now_ms()
            if a.status == RUNNING and now >= a.ends:
                raise LiveError("arena_over", "this arena has ended")
            p = a.player(user)
            if p is None:
                cap = self.config.max_players
                if len(a.players) >= cap:  # #38: checked on the record the CAS writes
                    raise LiveError("arena_full", f"this arena is full ({cap} players)", limit=cap)
                return a.with_player(ArenaPlayer(user, name[:64], rating=rating, since=now))
            if not p.withdrawn:
                return None  # a second tap
            return a.with_player(replace(p, withdrawn=False, since=now, name=name[:64]))

        check = self.check
        # a cooldown from rated games keeps him out, as it keeps him from a
        # rated lobby: the one check, again at each try of the CAS (#25, #38)
        before = None if check is None else (lambda _a: check([user]))
        arena = await self.mutate(arena_id, change, before=before)
        await self.hint(arena_id, max(self.now_ms(), arena.starts))  # a table for him now?
        return arena

    async def withdraw(self, arena_id: str, user: int) -> Arena:
        """``user`` is paired no more (his points stay; a game he plays now goes
        on).  He may join again."""

        def change(a: Arena) -> Arena | None:
            p = a.player(user)
            if p is None:
                raise LiveError("not_in_arena", "you do not play in this arena")
            if p.withdrawn or a.over:
                return None
            return a.with_player(replace(p, withdrawn=True))

        return await self.mutate(arena_id, change)

    async def cancel(self, arena_id: str, why: str = "") -> Arena:
        """Stop the arena now: no more pairings, its standings stay (the games
        running finish as ordinary games: they score nothing in it, #38)."""
        stopped = await self.stop(arena_id, why)
        return stopped if stopped is not None else await self.get(arena_id)

    async def stop(self, arena_id: str, why: str = "") -> Arena | None:
        """:meth:`cancel`, telling whether this call did it: the arena as it
        cancelled it, None when it was over already (finished, or cancelled by
        another call first -- one compare-and-set decides, #38)."""
        done = False

        def change(a: Arena) -> Arena | None:
            nonlocal done
            done = False
            if a.over:
                return None
            done = True
            return replace(a, status=CANCELLED, ended=self.now_ms(), why=why[:200])

        arena = await self.mutate(arena_id, change)
        await self.hint(arena_id, self.now_ms())  # a wake shows it (the group's message)
        return arena if done else None

    async def tick(self, arena_id: str, limit: int | None = None) -> Ticked:
        """Start the arena at its time, seat the free players -- at most ``limit``
        tables (None: all; ``Ticked.more`` says some could not be) -- finish it
        after its end once no game of it is being played.  Each in one write."""
        state: dict[str, object] = {}

        def change(a: Arena) -> Arena | None:
            state.clear()
            now = self.now_ms()
            if a.over:
                return None
            new = a
            if new.status == SCHEDULED and now >= new.starts:
                new = replace(new, status=RUNNING)
                state["started"] = True
            if new.status == RUNNING and now >= new.ends:
                if not new.playing:
                    state["finished"] = True
                    return replace(new, status=FINISHED, ended=now)
                return new
            plan = pair(new, now, int(self.config.patience * 1000), limit)
            state["more"] = plan.more
            if plan.tables:
                seated = [(self.new_table(), users) for users in plan.tables]
                state["seated"] = seated
                new = seat(new, seated, now)
            return new

        arena = await self.mutate(arena_id, change)
        seated = state.get("seated", [])
        assert isinstance(seated, list)
        return Ticked(
            arena,
            seated,
            started=bool(state.get("started")),
            finished=bool(state.get("finished")),
            more=bool(state.get("more")),
        )

    async def record(self, arena_id: str, result: GameResult) -> Arena | None:
        """Score the game ``result`` tells of, once (None: its table was not being
        played in the arena -- scored already, by this or another process -- or
        the arena is over: a cancelled one scores nothing after its cancel, #38)."""
        scored = False

        def change(a: Arena) -> Arena | None:
            nonlocal scored
            new = score(a, result.table, result, self.now_ms())
            scored = new is not None
            return new

        def entry(a: Arena) -> str:
            users = [u for u, _name in result.seats if u is not None]
            sheet = {p.user: p for p in a.players}
            return json.dumps(
                {
                    "table": result.table,
                    "game": result.game,
                    "at": result.at,
                    "users": users,
                    "points": [sheet[u].recent[-1] if u in sheet else 0 for u in users],
                    "doubled": [u in sheet and sheet[u].fire for u in users],
                    "loser": result.seats[result.loser][0] if result.loser is not None else None,
                    "draw": result.draw,
                },
                separators=(",", ":"),
            )

        arena = await self.mutate(arena_id, change, entry)
        if not scored:
            return None
        await self.hint(arena_id, self.now_ms())  # its players are free: pair them now
        return arena

    async def release(self, arena_id: str, table: str) -> Arena | None:
        """Free the players of a seated table that ends without a result (never
        made, cancelled); None if it was not being played."""
        freed = False

        def change(a: Arena) -> Arena | None:
            nonlocal freed
            new = free_table(a, table, self.now_ms())
            freed = new is not None
            return new

        arena = await self.mutate(arena_id, change)
        return arena if freed else None
