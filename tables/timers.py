"""The timers part: turn timers.  The authoritative deadline of a game is the ``d`` field of its
table hash, written by the same compare-and-set as the state.  The global sorted
set ``timers`` holds a *hint* per table (``ZADD LT``: a hint may be early, never
late).  A scheduler tick claims the due hints in one atomic script that pushes
them ``timer_lease`` into the future, so of several processes only one handles
each; it reloads the table and, if the deadline really passed, applies the
timeout moves through the usual CAS (a player who moved meanwhile wins, and the
timeout is dropped).  Then it releases its claim: the new deadline, or nothing.
A crashed claimer's lease simply runs out and another process takes over, so
timers survive restarts.

Restart gaps (#28): a shard's lease remembers its last tick.  A process that
takes a shard from another owner learns when that owner last ticked it; if that
was more than ``timer_gap`` ago (the owner was killed, or the whole fleet was
down), the deadlines that fell inside the gap are extended -- by the gap, to at
least ``restart_grace`` from now -- not enforced: nobody enforced them, and the
presses made meanwhile may still be on their way (Telegram redelivers them).
A process stopped by SIGTERM hands its shards over (:meth:`Timers.hand_over`)
and says so on the wake channel, so the others take them at once, with no gap.
(A live holder's ``seen`` is its last round or look, at most ``shard_lease /
3`` old: a gap found after a crash begins at most that long before it -- the
deadlines the holder did enforce meanwhile are not in the shard any more.)

Shards (``LiveConfig.timer_shards`` = K): the hints are split over K sorted sets
by table id (:meth:`tables.keys.Keys.timers_of`).  Each *round* (:meth:`Timers.tick`)
a process marks itself alive (``timers:procs``), renews the leases of the shards
it holds and takes free ones up to its share ``ceil(K / live processes)``,
handing back any beyond it (the service clock, ``shard_lease``); it claims due
hints only from the shards it holds, in the same script that renews the
shard's lease (``SHARD_TICK_LUA``; the lease key sits in the shard's slot) --
so N processes split the timer work instead of all scanning one set, and a
round is one round trip per shard held plus one; a process that stops
renewing loses its shards to the others after ``shard_lease``.  The per-hint
claim above still guards each timer.

Idle traffic (#39): the loop (:meth:`Timers.run_timers`) runs a round every
``shard_lease / 3`` only; in between it looks at Redis only when a held shard's
earliest hint is due -- the script returns that earliest hint, and every hint
written since is told to the holder (:mod:`tables.wakes`: in memory when this
process holds the shard, else on the ``timers:wake`` channel).  So an idle
fleet sends a few commands a second whatever its number of tables, and each
more process adds one heartbeat a round; a shard handed back, or a process
started, is announced on the channel, so the others take their share at once
(no gap opens between the hand-back and the take).

Lost hints (#40): on Redis Cluster a write's hint goes to its shard's slot
before the compare-and-set goes to the table's.  A hint whose shard's master
does not answer (dead, failing over) is *owed*: the write goes on at once --
``d`` is the deadline -- and the process writes the hint in the background as
soon as the shard answers (:meth:`tables.store.Store.flush_hints`), so a move
never waits for another master's failover.  A hint can still be lost: its
master acknowledged it but had not replicated it when it died, or the process
that owed it died.  So a shard whose hints may be incomplete is repaired by
its holder (:mod:`tables.hint_repair`): asked for in the shard's slot when
the tick's script finds another master serving the shard than at its last
tick (a failover), when the holder's ticks of the shard failed and went
through again, or when a process wrote hints it owed; the holder re-hints
every table of the index that has a deadline, from ``d``, a few batches a
pass, twice (the second walk once the failover has settled).  The tick's own
script reads the mark: an idle fleet pays nothing for it.

Timeout move (PRODUCT; the moves of RULES §0): the defender takes, the leader plays his lowest legal
lead, a thrower passes.  Every seat the game waited for at the deadline gets
one.  After ``timeouts_to_ai`` consecutive timeouts the AI takes the seat until
the player takes it back (:meth:`take_seat_back`); a move of his own resets the
count.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from redis.asyncio.client import Pipeline

from engine.clock import Clock
from tables.arena_runner import ArenaRunner, Woken
from tables.fairplay import timed_out
from tables.games import Games, timeout_move
from tables.hint_repair import HintRepair
from tables.model import (
    OVER,
    PLAYING,
    LiveConfig,
    LiveError,
    ServiceUnavailable,
    StaleVersion,
    WriteResult,
)
from tables.store import unavailable
from tables.tables import Loaded, Plan, Tables
from tables.wakes import parse

PRUNE_EVERY_S = 60.0
ROUNDS_PER_LEASE = 3
"""A round (the leases renewed, the live processes counted) every
``shard_lease / ROUNDS_PER_LEASE`` (#39; the loop's looks between rounds cost
nothing unless a held shard's earliest hint is due)."""
CLEAN_PROCS_MS = 30_000
"""How often a round also drops the dead processes' heartbeats and renews the
``timers:procs`` key's TTL (#39: the live ones are counted by score meanwhile)."""
GAP_MEMORY_MS = 15 * 60 * 1000
"""How long a process remembers an outage of its own (#38): longer than any
turn (the longest turn timer, and the restart grace)."""
RETRY_MS = 1000
"""A timer whose table could not be read is due again this soon (#38)."""
SETTLE_RETRY_MS = 5000
"""A finished game whose follow-ups failed is looked at again this soon (#38)."""

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TimerHooks:
    """What the adapter asks of a timer tick, given with the call
    (:meth:`Timers.tick`, :meth:`Timers.run_timers`) -- never wired into the
    service after it is built (#39)."""

    before_write: Callable[[str, int], Awaitable[object]] | None = None
    """Awaited with (table, the version the write will make) just before a
    timer's write, and with (table, 0) before an arena table's game starts: an
    adapter marks the render it owes, so a process killed between the write and
    its render leaves it to another (#28)."""
    on_arena: Callable[[Woken], Awaitable[object]] | None = None
    """Given every arena wake (#27: the adapter's standings message)."""


NO_HOOKS = TimerHooks()


class Timers:
    """The timers part: the scheduler's tick over the timer hints."""

    def __init__(
        self, tables: Tables, games: Games, arenas: ArenaRunner, config: LiveConfig, clock: Clock
    ) -> None:
        self.tables = tables
        self.store = tables.store
        self.games = games
        self.config = config
        self.clock = clock
        self.owner = uuid.uuid4().hex  # this process's name on shard leases
        # the timer shards whose lease it holds, with their earliest hints (#39)
        self.wakes = self.store.wakes
        self._round_at: int | None = None  # the service ms of the last round
        self._round_now = True  # a message asked for a round (a shard freed)
        self._cleaned: int | None = None  # the last cleaning of ``timers:procs``
        # the live processes at the last tick (#40: each one's share of the flood
        # windows while the shared ones cannot be read); 1 until a tick counted
        self.processes = 1
        # arenas (#27): their hints ('@<id>') sit among the tables'; a wake's
        # started games are returned with the timers' writes, and the whole
        # wake is given to the hooks' ``on_arena`` (the adapter's standings message)
        self.arenas = arenas
        # #38: an outage (or a stalled loop) inside this process is a gap too.
        # ``_last_ok``: when its last tick went through; ``_stalled``: since
        # when every shard went unwatched (a tick failed, the loop stalled);
        # ``_shard_stalls``: a shard whose own tick failed, since its last
        # good one; ``_hint_stalls``: a table that could not be read at its
        # deadline (on a cluster, only its master failed), since then
        self.monotonic: Clock = time.monotonic  # real time, for a stalled loop (#38)
        self._last_ok: int | None = None
        self._stalled: int | None = None
        self._shard_stalls: dict[int, int] = {}
        self._hint_stalls: dict[str, int] = {}
        # #38: the gaps of the last minutes, per shard, (start, end) ms: a turn
        # that an outage ate into but that ended after it gets that time back
        # at its deadline (:meth:`_late_extension`), once per gap and table
        self._recent_gaps: dict[int, list[tuple[int, int]]] = {}
        self._given_back: dict[tuple[str, int], int] = {}
        # #40: the held shards whose hints may be incomplete, re-hinted from the
        # tables' deadlines a few batches a pass (:mod:`tables.hint_repair`)
        self.repair = HintRepair(self.store, tables.index, tables.now_ms)

    @property
    def held(self) -> set[int]:
        """The timer shards whose lease this process holds."""
        return self.wakes.held()

    async def _timeout_plan(self, loaded: Loaded) -> Plan:
        t = loaded.table
        state = loaded.state
        assert state is not None
        plan = Plan(t, state, notify="timeout")
        waiting = [s for s in state.to_act() if not t.seats[s].ai_controlled]
        # the defender first: the bout waits on his cover or take.  His take
        # (C11, S11) opens throw-ins after it: the throwers get a turn of
        # their own for them, not a timeout for his stall (review3)
        waiting.sort(key=lambda s: s != state.defender)
        for s in waiting:
            if state.over or s not in state.to_act():
                continue
            if s != state.defender and state.taking and state.defender in waiting:
                continue
            action = timeout_move(state, s)
            plan.engine_events += state.apply(action)
            c = self.config
            seat, takeover = timed_out(t.seats[s], c.timeouts_to_ai, c.ai_kind)  # #25
            plan.events += [("timeout", s, str(seat.timeouts)), ("auto", s, action.text())]
            if takeover:
                plan.events.append(("takeover", s, "timeouts"))
            t = t.with_seat(s, seat)
        plan.table = t
        await self.games.after_moves(plan)
        return plan

    async def tick(self, limit: int = 100, hooks: TimerHooks = NO_HOOKS) -> list[WriteResult]:
        """A round: handle every timer due now (at most ``limit`` per shard); return the
        writes made (``hooks``: the adapter's, :class:`TimerHooks`).  Renews this process's shard leases and takes free shards
        up to its share, ``ceil(K / live processes)``, handing back shards
        beyond it (a process joined); a shard's lease and the claim of its due
        hints are one round trip (:meth:`Store.tick_shard`), so an idle round
        costs one round trip per shard held, plus one (:meth:`_processes`)."""
        now = self.tables.now_ms()
        k = self.tables.keys
        shard_lease = int(self.config.shard_lease * 1000)
        first = self._round_at is None
        self._round_now = False
        try:
            self.processes = await self._processes(now, shard_lease)
            share = -(-k.timer_shards // self.processes)
            freed = False
            while len(self.held) > share:  # hand one back at once: its lease ends now
                shard = max(self.held)
                self.wakes.lost(shard)
                await self.store.tick_shard(shard, self.owner, now, 0, 0, 0)
                freed = True
        except ServiceUnavailable:
            self.stalled(self._last_ok if self._last_ok is not None else now)
            self._round_now = True
            raise
        self._round_at = now
        order = sorted(self.held) + [s for s in range(k.timer_shards) if s not in self.held]
        results = await self._shards(order, share, now, limit, hooks)
        if freed or (first and len(self.held) < share):
            # the others take the shard (or hand theirs back) at once: no gap (#39)
            await self.store.tell(None)
        return results

    async def tick_due(self, limit: int = 100, hooks: TimerHooks = NO_HOOKS) -> list[WriteResult]:
        """Between two rounds: the held shards whose earliest hint is due (or
        unknown), each looked at with the script of a round (its lease renewed
        too); nothing sent when none is (#39)."""
        now = self.tables.now_ms()
        due = self.wakes.due(now)
        if not due:
            await self.repair.step(self.held)  # nothing sent when none is owed
            return []
        return await self._shards(due, len(due), now, limit, hooks)

    async def _shards(
        self, order: list[int], share: int, now: int, limit: int, hooks: TimerHooks
    ) -> list[WriteResult]:
        """Tick the shards of ``order`` (held ones first), taking free ones while
        this process holds fewer than ``share``; the writes made."""
        lease = int(self.config.timer_lease * 1000)
        shard_lease = int(self.config.shard_lease * 1000)
        results = []
        arenas: list[tuple[int, str]] = []  # woken after every shard's turn timers (#38)
        for shard in order:
            if shard not in self.held and len(self.held) >= share:
                break
            self.wakes.looking(shard)
            try:
                got = await self.store.tick_shard(shard, self.owner, now, shard_lease, limit, lease)
            except ServiceUnavailable as e:  # its node failed: the other shards go on
                since = self._stalled or self._last_ok
                self._shard_stalls.setdefault(shard, now if since is None else since)
                self.wakes.unknown(shard)  # looked at again at the next pass
                log.warning("timer shard %d: unavailable: %s", shard, e)
                continue
            if got is None:  # another process holds it
                self.wakes.lost(shard)
                self.repair.dropped(shard)
                self._shard_stalls.pop(shard, None)
                continue
            self.wakes.looked(shard, got.earliest)
            await self._ask_repair(shard, got.repair, now)
            gap = self._gap(shard, now, got.since)
            for tid in got.due:
                if tid.startswith("@"):
                    arenas.append((shard, tid))
                    continue
                try:
                    stalled = self._hint_stalls.pop(tid, None)
                    result = await self._handle_timer(
                        shard, tid, now, now + lease, gap, stalled=stalled is not None, hooks=hooks
                    )
                except ServiceUnavailable as e:
                    # a fault, never "gone" (#38): due again in a moment (else
                    # when its claim ends); the others go on -- on a cluster one
                    # failed master fails only its own slots.  Its deadline is
                    # not enforced against the presses the outage refused.
                    self._hint_stalls.setdefault(tid, now)
                    log.warning("timer %s: unavailable, again in a moment: %s", tid, e)
                    with contextlib.suppress(ServiceUnavailable):
                        await self.store.release_timer(shard, tid, now + lease, now + RETRY_MS)
                    continue
                if result is not None:
                    results.append(result)
        # #38: the arenas' wakes (pairings, their tables made) come after the turn
        # timers of every shard -- a large arena's wake never makes a game's
        # timeout late -- and each is bounded (``ArenaConfig.tables_per_wake``)
        for shard, tid in arenas:
            try:
                results += await self._handle_arena(shard, tid, now + lease, hooks)
            except ServiceUnavailable as e:  # a fault, never "gone": again in a moment
                log.warning("timer %s: unavailable, again in a moment: %s", tid, e)
                with contextlib.suppress(ServiceUnavailable):
                    await self.store.release_timer(shard, tid, now + lease, now + RETRY_MS)
        if len(self._hint_stalls) > 10_000:  # tables never due again (gone meanwhile)
            self._hint_stalls.clear()
        self._stalled, self._last_ok = None, now
        await self.repair.step(self.held)
        return results

    async def _ask_repair(self, shard: int, token: str, now: int) -> None:
        """The held ``shard`` was ticked: repair its hints when its tick said
        one is owed (``token``: a failover, or asked for by another process),
        or when its ticks failed since the last good one here -- an outage of
        its master, meanwhile the writes owed their hints (#40)."""
        if not token and (shard in self._shard_stalls or self._stalled is not None):
            try:
                token = await self.store.ask_repair(shard, f"stall:{self.owner[:8]}:{now}")
            except ServiceUnavailable as e:  # asked again at its next good tick
                log.warning("timer shard %d: repair not asked for: %s", shard, e)
                return
        self.repair.asked(shard, token)

    def stalled(self, since: int) -> None:
        """Nothing was enforced since ``since`` (ms; a tick failed, or the loop
        that ticks stalled): the deadlines that passed meanwhile are a gap
        (:meth:`_extension`), as after a restart (#38)."""
        self._stalled = since if self._stalled is None else min(self._stalled, since)

    def _gap(self, shard: int, now: int, since: int) -> int | None:
        """When the gap the shard's deadlines fall in began (None: no gap): its
        previous owner's last tick (a restart, #28), or this process's last
        good tick before an outage or a stall (#38), whichever is earlier."""
        gap = None
        least = self.config.timer_gap * 1000
        if since and now - since > least:
            gap = since
            log.info("timer shard %d unwatched for %d ms: a restart gap", shard, now - gap)
        own = self._shard_stalls.pop(shard, None)
        if own is None:
            own = self._stalled
        if own is not None and now - own > least:
            self._remember_gap(shard, own, now)
            if gap is None or own < gap:
                gap = own
                log.info(
                    "timer shard %d unwatched for %d ms: an outage or a stall", shard, now - gap
                )
        return gap

    def _remember_gap(self, shard: int, start: int, end: int) -> None:
        """This process could not enforce the shard's deadlines from ``start``
        to ``end`` (ms): a turn still running at its end had that time taken
        from it (#38, :meth:`_late_extension`).  Kept :data:`GAP_MEMORY_MS`."""
        keep = [g for g in self._recent_gaps.get(shard, []) if g[1] > end - GAP_MEMORY_MS]
        keep.append((start, end))
        self._recent_gaps[shard] = keep
        if len(self._given_back) > 10_000:
            self._given_back = {
                k: v for k, v in self._given_back.items() if v > end - GAP_MEMORY_MS
            }

    def _late_extension(self, shard: int, tid: str, loaded: Loaded, now: int) -> Plan | None:
        """The deadline of a turn an outage (or a stall) ate into, though the
        turn outlived it: moved on by the time the gap took from the turn -- the
        presses meanwhile were answered "unavailable", never his timeout (#38)
        -- once per gap.  None: no gap of this process overlapped the turn."""
        assert loaded.deadline is not None
        assert loaded.state is not None
        begun = loaded.deadline - loaded.table.timer * 1000  # the turn's start
        lost = 0
        for start, end in self._recent_gaps.get(shard, []):
            taken = min(end, loaded.deadline) - max(start, begun)
            if taken > 0 and (tid, start) not in self._given_back:
                self._given_back[(tid, start)] = end
                lost += taken
        if lost <= 0:
            return None
        moved = max(loaded.deadline + lost, now + int(self.config.restart_grace * 1000))
        plan = Plan(loaded.table, loaded.state, notify="extend", deadline=moved)
        plan.events.append(("extend", -1, str(moved - loaded.deadline)))
        return plan

    async def _handle_arena(
        self, shard: int, member: str, lease: int, hooks: TimerHooks
    ) -> list[WriteResult]:
        """Wake the arena ``member`` names (``@<id>``, #27): its games started now."""
        try:
            woken = await self.arenas.wake(member[1:], before_start=hooks.before_write)
        except LiveError as e:  # the arena is gone
            log.info("arena %s: %s", member, e)
            await self.store.release_timer(shard, member, lease, None)
            return []
        await self.store.release_timer(shard, member, lease, woken.next)
        if hooks.on_arena is not None:
            await hooks.on_arena(woken)
        return woken.started

    async def hand_over(self) -> None:
        """Hand every shard this process holds back at once and leave the live
        processes (a SIGTERM: the others take the shards at their next tick
        instead of after ``shard_lease``, #28); the timer hints it owes
        written first if their shards answer (#40: else their repair)."""
        now = self.tables.now_ms()
        handed = bool(self.held)
        if self.store.owed:  # #40: the hints it owes, if their shards answer now
            with contextlib.suppress(ServiceUnavailable):
                await self.store.flush_hints()
        for shard in sorted(self.held):
            self.wakes.lost(shard)
            await self.store.tick_shard(shard, self.owner, now, 0, 0, 0)
        key = self.tables.keys.timer_procs
        await self.store.one(lambda p: p.zrem(key, self.owner))
        if handed:  # the others take them at once (#39)
            await self.store.tell(None)

    async def _processes(self, now: int, shard_lease: int) -> int:
        """Mark this process alive and count the live ones (one round trip, two
        commands; every :data:`CLEAN_PROCS_MS` also the dead ones dropped and
        the key's TTL renewed)."""
        key = self.tables.keys.timer_procs
        clean = self._cleaned is None or not 0 <= now - self._cleaned < CLEAN_PROCS_MS

        def build(p: Pipeline) -> None:
            p.zadd(key, {self.owner: now})
            if clean:
                p.zremrangebyscore(key, "-inf", now - shard_lease)
                p.pexpire(key, 2 * shard_lease + 60_000)
            p.zcount(key, now - shard_lease + 1, "+inf")

        count = max(1, int((await self.store.run(build))[-1]))
        if clean:
            self._cleaned = now
        return count

    async def _handle_timer(
        self,
        shard: int,
        tid: str,
        now: int,
        lease: int,
        gap: int | None = None,
        *,
        stalled: bool = False,
        hooks: TimerHooks = NO_HOOKS,
    ) -> WriteResult | None:
        """Apply the timeout moves of ``tid`` if its deadline passed -- unless it
        passed inside a restart gap (``gap``: when it began), then extend it;
        ``stalled``: the table could not be read at an earlier look (#38), so
        a deadline already passed is extended too."""
        try:
            loaded = await self.tables.load(tid)
        except LiveError:
            await self.store.release_timer(shard, tid, lease, None)
            return None
        again: int | None = None  # a leave's charge failed: look again this soon
        if loaded.owed and not await self.tables.fairplay.charge_owed(loaded):  # #38
            again = now + SETTLE_RETRY_MS

        async def release(at: int | None) -> None:
            if again is not None:
                at = again if at is None else min(at, again)
            await self.store.release_timer(shard, tid, lease, at)

        if loaded.unsettled:  # a finished game's follow-ups, again until done (#38)
            assert loaded.result is not None
            prev = loaded.result_previous_loser
            ended = loaded.finished_table or loaded.table  # the record checks its game
            if not await self.tables.follow_up(ended, loaded.result, prev):
                await release(now + SETTLE_RETRY_MS)
                return None
        if loaded.table.status == OVER and loaded.table.rematch is not None:
            return await self._handle_offer(shard, tid, loaded, now, lease, hooks)
        if loaded.table.status != PLAYING or loaded.deadline is None or loaded.state is None:
            await release(None)
            return None
        if loaded.deadline > now:
            await release(loaded.deadline)
            return None
        try:
            if stalled:  # the outage refused his presses: no timeout for them
                gap = loaded.deadline - 1 if gap is None else min(gap, loaded.deadline - 1)
            plan = await self._due_plan(shard, tid, loaded, now, gap)
            if hooks.before_write is not None:
                await hooks.before_write(tid, loaded.version + 1)
            result = await self.tables.write(loaded, plan, before=loaded.state)
        except StaleVersion:  # a player moved meanwhile: look again at the next tick
            await release(now)
            return None
        await release(result.deadline)
        return result

    async def _due_plan(
        self, shard: int, tid: str, loaded: Loaded, now: int, gap: int | None
    ) -> Plan:
        """What a passed deadline writes: its extension when it fell inside a
        gap (``gap``: when it began), or when a gap ate into the turn and ended
        before it (#38); else the timeout moves."""
        assert loaded.deadline is not None
        if gap is not None and loaded.deadline > gap:
            for start, end in self._recent_gaps.get(shard, []):  # given back in full
                self._given_back[(tid, start)] = end
            return self._extension(loaded, now, gap)
        late = self._late_extension(shard, tid, loaded, now)
        if late is not None:
            return late
        return await self._timeout_plan(loaded)  # the AI may think in a pool meanwhile

    async def _handle_offer(
        self, shard: int, tid: str, loaded: Loaded, now: int, lease: int, hooks: TimerHooks
    ) -> WriteResult | None:
        """A rematch offered on a finished table (#38): once its deadline passed,
        the next game starts with those who said yes (or the offer lapses),
        :meth:`Games.rematch_due` -- its render marked owed first, as a
        timeout's is.  The written result, None when nothing was written."""
        offer = loaded.table.rematch
        assert offer is not None
        if offer.until > now:
            await self.store.release_timer(shard, tid, lease, offer.until)
            return None
        try:
            result = await self.games.rematch_due(tid, before_write=hooks.before_write)
        except LiveError as e:  # busy (a claim in flight, a lost race): soon again
            log.info("rematch of %s: %s; again in a moment", tid, e)
            await self.store.release_timer(shard, tid, lease, now + RETRY_MS)
            return None
        t = result.table
        if not result.events:  # written meanwhile by another: looked at anew next tick
            after: int | None = now
        elif t.status == PLAYING:
            after = result.deadline
        else:
            after = t.rematch.until if t.status == OVER and t.rematch is not None else None
        await self.store.release_timer(shard, tid, lease, after)
        return result if result.events else None

    def _extension(self, loaded: Loaded, now: int, gap: int) -> Plan:
        """The deadline that fell inside a restart gap (which began at ``gap``),
        moved on by the gap's length -- the clock stood still while nobody could
        enforce it, and presses made meanwhile may still be on their way -- and
        to at least ``restart_grace`` from now (#28; lichess does the same on a
        deploy)."""
        assert loaded.deadline is not None
        assert loaded.state is not None
        moved = max(loaded.deadline + (now - gap), now + int(self.config.restart_grace * 1000))
        plan = Plan(loaded.table, loaded.state, notify="extend", deadline=moved)
        plan.events.append(("extend", -1, str(moved - loaded.deadline)))
        return plan

    async def prune(self) -> bool:
        """Prune the table index if this process holds (or takes) the pruner's
        lease, so of N processes one prunes it each minute, reading only the
        entries whose expiry is past (:meth:`.index.TableIndex.prune`); True if it did."""
        now = self.tables.now_ms()
        lease_ms = int(PRUNE_EVERY_S * 1000 * 2)  # a holder that stopped: another after 2 min
        if not await self.store.lease(self.tables.keys.prune_lease, self.owner, now, lease_ms):
            return False
        await self.tables.index.prune()
        await self.tables.settle_finished()  # #25: a game whose ratings were not settled
        return True

    async def next_deadline(self) -> int | None:
        """The earliest timer hint (epoch ms) of every shard, if any."""
        k = self.tables.keys
        shards = [k.timer_shard(i) for i in range(k.timer_shards)]

        def build(p: Pipeline) -> None:
            for key in shards:
                p.zrange(key, 0, 0, withscores=True)

        firsts = [int(f[0][1]) for f in await self.store.run(build) if f]
        return min(firsts) if firsts else None

    async def run_timers(
        self,
        stop: asyncio.Event,
        *,
        interval: float = 0.5,
        on_result: Callable[[WriteResult], Awaitable[None]] | None = None,
        hooks: TimerHooks = NO_HOOKS,
    ) -> None:
        """The scheduler loop until ``stop``: every ``interval`` seconds it looks
        -- in memory -- whether a held shard's earliest hint is due
        (:meth:`tick_due`), and runs a round (:meth:`tick`) every
        ``shard_lease / 3`` or when the wake channel announces a shard freed
        (#39: idle, it sends nothing between rounds); about once a minute it
        also prunes the table index of expired tables -- only the process
        holding the pruner's lease does (:meth:`prune`)."""
        pruned = 0.0
        last: tuple[float, int] | None = None  # the last pass's start: real s, service ms
        self._round_now = True
        wake: Any = None
        try:
            while not stop.is_set():
                start = (self.monotonic(), self.tables.now_ms())
                if last is not None and start[0] - last[0] > self.config.timer_gap:
                    # the loop itself stalled (a blocked event loop, #38) -- in real
                    # time: the service's clock may be a test's, moved on at will
                    self.stalled(last[1])
                last = start
                if self.clock() - pruned >= PRUNE_EVERY_S:
                    pruned = self.clock()
                    await self.prune()
                if wake is None and self._round_due(start[1]):
                    wake = await self._listen()
                results = await self.look(hooks)
                for result in results:
                    if on_result is not None:
                        await on_result(result)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), interval)
                if wake is not None and not await self._heard(wake):
                    await self._close(wake)
                    wake = None
        finally:
            await self._close(wake)

    async def look(self, hooks: TimerHooks = NO_HOOKS) -> list[WriteResult]:
        """One pass of the loop: a round (:meth:`tick`) when one is due, else
        the held shards whose earliest hint is due (:meth:`tick_due`); the
        writes made."""
        if self._round_due(self.tables.now_ms()):
            return await self.tick(hooks=hooks)
        return await self.tick_due(hooks=hooks)

    def _round_due(self, now: int) -> bool:
        """A round is due: none yet, ``shard_lease / 3`` since the last (the
        service clock; also when it went back), or a message asked for one."""
        at = self._round_at
        every = self.config.shard_lease * 1000 / ROUNDS_PER_LEASE
        return self._round_now or at is None or not 0 <= now - at < every

    async def _listen(self) -> Any:
        """Subscribe to the wake channel (:mod:`tables.wakes`); None when Redis
        does not answer (tried again at the next round).  Subscribed anew: a
        round at once, for what was said while nobody listened."""
        try:
            with unavailable():
                await self.store.ready()
                pubsub = self.store.r.pubsub()
                await pubsub.subscribe(self.tables.keys.timer_wake)
        except ServiceUnavailable as e:
            log.warning("timer wakes: not subscribed: %s", e)
            return None
        self._round_now = True
        return pubsub

    async def _heard(self, pubsub: Any) -> bool:
        """Apply the wake messages that came (none waited for); False when the
        subscription broke."""
        try:
            with unavailable():
                while True:
                    msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0)
                    if msg is None:
                        return True
                    if msg.get("type") != "message":
                        continue
                    wake = parse(msg["data"])
                    if wake is None:
                        continue
                    if wake.shard is None:
                        self._round_now = True
                    else:
                        self.wakes.hinted(wake.shard, wake.at)
        except ServiceUnavailable as e:
            log.warning("timer wakes: subscription lost: %s", e)
            return False

    async def _close(self, pubsub: Any) -> None:
        if pubsub is not None:
            with contextlib.suppress(ServiceUnavailable, OSError, RuntimeError), unavailable():
                await pubsub.aclose()
