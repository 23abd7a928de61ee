"""The tables part of the service: loading a table (one round trip), the one
generic write (plan -> compare-and-set, one round trip), optimistic retries,
the user -> table pointers and the table index (:mod:`tables.index`).
Lobby, game, timer and admin operations (the other parts) are plans written
through :meth:`Tables.write`."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError

from engine import Event, GameState, view
from engine.clock import Clock
from tables import eventlog
from tables.arenas import ArenaConfig, Arenas
from tables.codec import decode_state, encode_state
from tables.fairplay import FairPlay, owed_leaves
from tables.index import TableIndex
from tables.model import (
    OPEN,
    OVER,
    PLAYING,
    LiveConfig,
    LiveError,
    LiveEvent,
    ServiceUnavailable,
    StaleVersion,
    Table,
    WriteResult,
)
from tables.rating_rules import rating_rules
from tables.ratings import Ratings
from tables.records import GameResult
from tables.replays import Replays
from tables.results import Results
from tables.scripts import FOLLOWED_UP_LUA
from tables.store import Store

log = logging.getLogger(__name__)
SETTLE_BATCH = 200
"""Finished games the sweep looks at each minute (:meth:`Tables.settle_finished`)."""
_REQUEST_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


@dataclass(frozen=True)
class Loaded:
    """A table as read in one round trip."""

    version: int
    table: Table
    state: GameState | None
    deadline: int | None
    result: GameResult | None
    recent: str = ""
    log: str = ""  # the open chunk of the event log (eventlog)
    # #38: the game whose follow-ups all went through (``fin``: 0 none), and
    # the seat that had lost the game before ``result``'s (its record's C5/S5)
    followed_up: int = 0
    result_previous_loser: int | None = None
    result_table: Table | None = None  # ``rt``: the table as ``result``'s game ended
    charged: str = ""  # ``lc``: the game's leaves already charged (#38, owed_leaves)

    @property
    def unsettled(self) -> bool:
        """The last game's follow-ups (:meth:`Tables.follow_up`) are not known
        to have all gone through."""
        return self.result is not None and self.followed_up < self.result.game

    @property
    def finished_table(self) -> Table | None:
        """The table as :attr:`result`'s game ended, its follow-ups' source: the
        table may be in the next game now, with a live seed (review "leaks")."""
        if self.result_table is not None or self.result is None:
            return self.result_table
        return self.table if self.table.game_no == self.result.game else None

    @property
    def owed(self) -> list[int]:
        """The players who left this rated game and whose offence is not known
        to be charged yet (:func:`owed_leaves`, #38)."""
        return owed_leaves(self.table, self.charged)

    def applied(self, request_id: str) -> int | None:
        """The version ``request_id`` produced, if it is among the table's recent
        request ids (a redelivered request: applied once); None otherwise."""
        if not request_id:
            return None
        marker = f";{request_id}="
        pos = self.recent.find(marker)
        if pos < 0:
            return None
        digits = self.recent[pos + len(marker) :].split(";", 1)[0]
        return int(digits) if digits.isdigit() else None

    def after(self, written: WriteResult, request_id: str = "") -> Loaded | None:
        """The table as ``written`` (a write made on this one, with
        ``request_id``) left it -- what a second read would give, without it
        (#39: the writer's render draws the move from this): the table, its
        state, deadline, version, request ids and the log's open chunk.  None
        where a read is needed after all: a duplicate, a game it ended (its
        result and settlement), a state it did not return."""
        if written.duplicate or written.game_over or written.state is None:
            return None
        if written.table.status != PLAYING or written.version <= self.version:
            return None
        if written.events and written.events[0].version != self.version + 1:
            return None  # not a write on this version
        log = self.log if written.log is None else written.log
        recent = f";{request_id}={written.version}{self.recent}" if request_id else self.recent
        return replace(
            self,
            version=written.version,
            table=written.table,
            state=written.state,
            deadline=written.deadline,
            recent=recent,
            log=log,
        )

    def moved_since(self, seat: int, version: int) -> bool | None:
        """Did ``seat`` make a move of its own (or pass by itself) in a write after
        ``version``?  (A keyboard drawn at ``version`` pressed again is then a
        double tap.)  ``None``: the open chunk of the log does not reach back to
        ``version`` -- a flush moved the writes since into the log's stream
        (:func:`moved_since` over its page answers then, #41)."""
        events = eventlog.decode_text(self.log)
        if self.version > version and (not events or events[0].version > version + 1):
            return None
        return moved_since(events, seat, version)


def moved_since(events: Sequence[LiveEvent], seat: int, version: int) -> bool:
    """:meth:`Loaded.moved_since` over ``events``."""
    return any(
        e.version > version and e.seat == seat and e.kind in ("act", "autopass") for e in events
    )


@dataclass
class Plan:
    """A write to make: the new table record, the new state (None: no game), the
    log entries ``(kind, seat, text)`` and what the engine reported."""

    table: Table
    state: GameState | None
    events: list[tuple[str, int, str]] = field(default_factory=list)
    engine_events: list[Event] = field(default_factory=list)
    result: GameResult | None = None
    notify: str = ""  # publish on the notify channel with this kind ("" = no)
    delete: bool = False  # remove the table's keys (admin delete)
    changed_seats: list[int] | None = None  # None: every human seat
    deadline: int | None = None  # the turn deadline to store (None: computed, the timer's)


RENDER_CLAIM_TTL_MS = 600_000
"""How long a render claim (#40) is kept: well past any failover."""

CLAIM_RENDER_LUA = r"""
local v = tonumber(ARGV[1])
if tonumber(redis.call('HGET', KEYS[1], 'v') or '-1') ~= v then return 0 end
local td, md = ARGV[3], ARGV[4]
local cur = redis.call('GET', KEYS[2])
if cur then
  local sv, st, sm = string.match(cur, '^(%d+):?([^:]*):?(.*)$')
  sv = tonumber(sv)
  if sv > v then return 0 end
  if sv == v then
    if md == '' or sm == '' then return 0 end
    if td == '*' then td = st end
    if td == st and md == sm then return 0 end
  end
end
local now, name, k = tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7] or '0')
local i, wait = 8, 0
for w = 1, k do
  local limit, seconds, n = tonumber(ARGV[i]), tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])
  i = i + 3
  local at = {}
  for j = 1, n do
    at[ARGV[i]] = tonumber(ARGV[i + 1])
    i = i + 2
  end
  local key = KEYS[2 + w]
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - seconds)
  local got = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
  for j = 1, #got, 2 do at[got[j]] = math.max(at[got[j]] or 0, tonumber(got[j + 1])) end
  local live = {}
  for _, t in pairs(at) do
    if t > now - seconds then live[#live + 1] = t end
  end
  table.sort(live)
  local over = #live + 1 - limit
  if over > 0 then wait = math.max(wait, live[over] + seconds - now, 1e-6) end
end
if wait > 0 then return string.format('%.6f', wait) end
redis.call('SET', KEYS[2], v .. ':' .. td .. ':' .. md, 'PX', ARGV[2])
for w = 1, k do
  redis.call('ZADD', KEYS[2 + w], now, name)
  redis.call('PEXPIRE', KEYS[2 + w], ARGV[2])
end
return 1
"""
"""KEYS the table, its render claim of one message, then the claimed renders'
window of each of the chat's windows; ARGV the version, ttl ms, the render's
text digest ('*': the text stays) and markup digest ('': not known), now (s),
the entry's name, the number of windows and for each its limit, seconds, the
number of entries known elsewhere and those (name, score).  0 when the version
is not the table's or not newer than the message's claim -- the same version
passes when it shows something else (a selection's redraw); then the seconds
until each window -- the entries known and the claimed renders' -- has room
(a string); else claimed as ``<version>:<text>:<markup>``, the entry counted
in each window: 1 (:meth:`Tables.claim_render`, #40)."""


@dataclass(frozen=True)
class RenderWindow:
    """One of a chat's flood windows as a render claim counts it (#40): its
    ``key`` (the chat's window's), ``limit`` in ``seconds``, and the entries
    ``(score, name)`` known without the chat's slot -- a replica's, the
    process's own."""

    key: str
    limit: int
    seconds: float
    known: Sequence[tuple[float, str]] = ()


@dataclass(frozen=True)
class RenderClaim:
    """What :meth:`Tables.claim_render` answered: ``claimed``, else ``wait``
    seconds until the chat's windows have room (0: not to be claimed)."""

    claimed: bool
    wait: float = 0.0


def parse(raw: dict[bytes, bytes]) -> Loaded:
    blob = raw.get(b"s")
    d = raw.get(b"d")
    res = raw.get(b"res")
    return Loaded(
        version=int(raw.get(b"v", b"0")),
        table=Table.from_json(raw[b"t"]),
        state=decode_state(blob) if blob else None,
        deadline=int(d) if d else None,
        result=GameResult.from_json(json.loads(res)) if res else None,
        recent=raw.get(b"r", b"").decode(),
        log=raw.get(b"e", b"").decode(),
        followed_up=int(raw.get(b"fin", b"0")),
        result_previous_loser=int(pl) if (pl := raw.get(b"rpl")) not in (None, b"") else None,
        result_table=Table.from_json(rt) if (rt := raw.get(b"rt")) else None,
        charged=raw.get(b"lc", b"").decode(),
    )


def check_request_id(request_id: str) -> None:
    if request_id and not _REQUEST_ID.fullmatch(request_id):
        raise LiveError("bad_request_id", "a request id is 1-64 of A-Za-z0-9_.:-")


class Tables:
    """Load, plan, compare-and-set; user pointers; the index of tables."""

    def __init__(
        self,
        store: Store,
        results: Results,
        config: LiveConfig,
        clock: Clock,
        ratings: Ratings | None = None,
    ) -> None:
        self.store = store
        self.keys = store.keys
        self.results = results
        self.ratings = ratings or Ratings(store, config.prefix, rating_rules(config), clock=clock)
        self.replays = Replays(store, config)
        # #27: a game of one is scored there; #38: its cap on players
        arena_config = ArenaConfig(max_players=config.arena_max_players)
        self.fairplay = FairPlay(self)
        """#25, #38: offences, cooldowns and the one check before a rated game."""
        self.arenas = Arenas(store, config.prefix, clock, arena_config, check=self.fairplay.check)
        self.config = config
        self.clock = clock
        self.index = TableIndex(store, config, self.now_ms)
        self._claim_render = store.script(CLAIM_RENDER_LUA)

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    async def claim_render(
        self,
        table_id: str,
        version: int,
        message: str,
        shows: tuple[str | None, str] | None = None,
        *,
        windows: Sequence[RenderWindow] = (),
        now: float = 0.0,
        name: str = "",
    ) -> RenderClaim:
        """May this process send its render of ``version`` to ``message`` (a
        ``<chat>:<id>`` key) while the bot's shared state of that chat cannot
        be read (#40: its master died, and the render waited for the replica's
        promotion)?  Yes, once, when ``version`` is the table's version now and
        no render of a newer one went to the message meanwhile: nothing newer
        can have been shown, and no other process sends it too -- one script
        in the table's own slot, alive whenever the table can be played.  A
        render of the claimed version itself goes too when it ``shows`` (its
        text digest, None: the text stays; and its markup digest) something
        else than the claimed one: a player's selection redrawn at the same
        version (#40: a card tap that only selects redraws his hand, and with
        the version's claim spent by the move's render the redraw -- and his
        next tap -- waited for the promotion); never the same content twice.

        ``windows``: the chat's flood windows, with the entries known of each
        (:class:`RenderWindow`).  The claimed renders to the chat are counted
        there fleet-wide, in the table's slot, as ``name`` at ``now``: a
        render is claimed only while the entries known and those claimed fit
        each window, else told how long until they do (#40: each process on its
        share of the chat's window alone held a player's next hand until the
        entries before the fault left it -- up to 4 s).  Raises
        :class:`tables.ServiceUnavailable` when that slot is down too."""
        keys = [self.keys.table(table_id), self.keys.render_claim(table_id, message)]
        text, markup = shows if shows is not None else ("", "")
        args: list[str | int | float] = [
            version,
            RENDER_CLAIM_TTL_MS,
            "*" if text is None else text,
            markup,
            repr(float(now)),
            name,
            len(windows),
        ]
        for w in windows:
            keys.append(self.keys.render_window(table_id, w.key))
            args += [w.limit, repr(float(w.seconds)), len(w.known)]
            for at, entry in w.known:
                args += [entry, repr(float(at))]
        got = await self._claim_render(keys, args)
        if isinstance(got, bytes | str):
            return RenderClaim(False, float(got))
        return RenderClaim(bool(got))

    async def claimed_windows(
        self, table_id: str, windows: Sequence[str]
    ) -> dict[str, list[tuple[float, str]]]:
        """The renders of the table claimed by :meth:`claim_render` counted in
        each of the chat windows ``windows`` (keys): ``(score, name)`` entries
        (one round trip; none: an empty list) -- to count in the chat's own
        windows once they answer again (#40)."""
        keys = [self.keys.render_window(table_id, w) for w in windows]

        def build(p: Pipeline) -> None:
            for key in keys:
                p.zrange(key, 0, -1, withscores=True)

        replies = await self.store.run(build) if keys else []
        return {
            w: [(float(at), bytes(name).decode()) for name, at in reply]
            for w, reply in zip(windows, replies, strict=True)
        }

    async def render_claimed(self, table_id: str, message: str) -> int:
        """The newest version of the table claimed for ``message`` by
        :meth:`claim_render` (-1: none): a render held through the fallback is
        refused when older, even once the chat's shared state answers again --
        which knows nothing of what was sent meanwhile."""
        raw = await self.store.run(lambda p: p.get(self.keys.render_claim(table_id, message)))
        if not raw or raw[0] is None:
            return -1
        return int(bytes(raw[0]).partition(b":")[0])

    async def load(self, table_id: str) -> Loaded:
        """The table, its state, deadline, result and newest log (one round trip);
        ``no_table`` when there is none."""
        raw = await self.store.load(table_id)
        if not raw or b"t" not in raw:
            raise LiveError("no_table", f"there is no table {table_id!r} (finished or expired)")
        return parse(raw)

    async def heads(
        self, table_ids: list[str], also: Callable[[Pipeline], object] | None = None
    ) -> dict[str, tuple[Table, GameResult | None] | None]:
        """Each table and its last result, without its game (None: no such table),
        in ONE round trip however many (#38: an arena's check of its tables; on
        a cluster the pipeline goes to each node at once); ``also`` queues more
        commands on the same pipeline (their replies are dropped)."""
        keys = [self.keys.table(t) for t in table_ids]

        def build(p: Pipeline) -> None:
            for key in keys:
                p.hmget(key, ["t", "res"])
            if also is not None:
                also(p)

        replies = await self.store.run(build)
        out: dict[str, tuple[Table, GameResult | None] | None] = {}
        for tid, (raw, res) in zip(table_ids, replies[: len(table_ids)], strict=True):
            result = GameResult.from_json(json.loads(res)) if res else None
            out[tid] = None if raw is None else (Table.from_json(raw), result)
        return out

    async def get(self, table_id: str) -> tuple[Table, GameState | None, int]:
        """The table, its game state (None before the first game) and version:
        :meth:`load` for callers that need no more."""
        loaded = await self.load(table_id)
        return loaded.table, loaded.state, loaded.version

    # ------------------------------------------------------------------ writing
    def _ttl(self, status: str) -> float:
        c = self.config
        return {OPEN: c.lobby_ttl, PLAYING: c.game_ttl, OVER: c.finished_ttl}.get(
            status, c.finished_ttl
        )

    def deadline(
        self,
        table: Table,
        state: GameState | None,
        before: Loaded | None = None,
        *,
        moved: bool = True,
    ) -> int | None:
        """The next turn deadline: a timer is set, the game waits for a human --
        the deadline ``before`` had when this write moves nothing (not
        ``moved``: the engine reported nothing) and waits for the same humans
        (a leave, a seat taken back, an operator's act: a seat that is not to
        act must not push the waiting player's turn on for ever, review3);
        else a whole turn from now."""
        if table.status != PLAYING or not table.timer or state is None or state.over:
            return None
        waited = {s for s in state.to_act() if not table.seats[s].ai_controlled}
        if not waited:
            return None
        if (
            not moved
            and before is not None
            and before.deadline is not None
            and before.table.status == PLAYING
            and before.table.game_no == table.game_no
            and before.state is not None
            and waited
            == {s for s in before.state.to_act() if not before.table.seats[s].ai_controlled}
        ):
            return before.deadline
        return self.now_ms() + table.timer * 1000

    def _fields(
        self, loaded: Loaded | None, plan: Plan, expected: int, deadline: int | None
    ) -> tuple[dict[str, str | bytes | int], list[str], bytes]:
        """The hash fields to set and delete and the log chunk to flush."""
        c = self.config
        fields: dict[str, str | bytes | int] = {"t": plan.table.to_json()}
        dels: list[str] = []
        if plan.state is not None:
            fields["s"] = encode_state(plan.state, c.keep_history)
        elif loaded is not None and loaded.state is not None:
            dels.append("s")
        if deadline is not None:
            fields["d"] = deadline
        elif loaded is not None and loaded.deadline is not None:
            dels.append("d")
        if plan.result is not None:
            fields["res"] = json.dumps(plan.result.to_json(), separators=(",", ":"))
            # the record's previous loser (C5/S5): the table's, as at the game's
            # start -- this write sets the table's to this game's loser (#38)
            prev = loaded.table.previous_loser if loaded is not None else None
            fields["rpl"] = "" if prev is None else prev
            fields["rt"] = plan.table.to_json()  # its follow-ups' table (review "leaks")
        flush = b""
        group = eventlog.encode_group(expected + 1, plan.events)
        if group:
            chunk = (loaded.log if loaded else "") + group
            if len(chunk) >= c.log_chunk:
                flush = eventlog.compress(chunk)
                chunk = ""
            fields["e"] = chunk
        return fields, dels, flush

    async def write(
        self,
        loaded: Loaded | None,
        plan: Plan,
        *,
        expected: int | None = None,
        request_id: str = "",
        before: GameState | None = None,
    ) -> WriteResult:
        """CAS ``plan`` over ``loaded`` (None: a new table).  Raises
        :class:`StaleVersion` when the table moved on meanwhile."""
        check_request_id(request_id)
        table = plan.table
        tid = table.id
        if expected is None:
            expected = loaded.version if loaded else 0
        if plan.result is not None and loaded is not None:  # the last game's first (#38)
            await self.fairplay.follow_up_last(loaded, plan.result)
        deadline = plan.deadline
        if deadline is None:
            deadline = self.deadline(table, plan.state, loaded, moved=bool(plan.engine_events))
        fields, dels, flush = self._fields(loaded, plan, expected, deadline)
        ttl_ms = int(self._ttl(table.status) * 1000)
        now = self.now_ms()  # before the write: the index's expiry is never late
        notify = ""
        if plan.notify:
            notify = json.dumps({"table": tid, "kind": plan.notify}, separators=(",", ":"))[1:]
        hint = deadline
        offer = table.rematch if table.status == OVER and not plan.delete else None
        if offer is not None:  # #38: the rematch offer's deadline, fired by the timers
            hint = offer.until if hint is None else min(hint, offer.until)
        if plan.result is not None and not plan.delete:
            # its follow-ups are looked at again until they all went through (#38)
            soon = now + int(self.config.settle_check * 1000)
            hint = soon if hint is None else min(hint, soon)
        if owed_leaves(table, loaded.charged if loaded is not None else ""):
            # a leave's offence is charged after this write (#38): if that
            # fails, or the process dies first, the timer charges it then
            soon = now + int(self.config.settle_check * 1000)
            hint = soon if hint is None else min(hint, soon)
        outcome = await self.store.cas(
            tid,
            expected,
            set_fields=fields,
            del_fields=dels,
            flush=flush,
            ttl_ms=0 if plan.delete else ttl_ms,
            maxlen=self.config.events_maxlen,
            request_id=request_id,
            recent=self.config.recent_requests,
            notify=notify,
            timer_hint=hint,
        )
        if outcome.status == "stale":
            raise StaleVersion(expected, outcome.version)
        if outcome.status == "duplicate":
            return WriteResult(tid, outcome.version, table, duplicate=True)
        v = outcome.version
        keep = self.config.keep_history
        if plan.state is not None and len(plan.state.history) > keep:
            # as stored (encode_state keeps the last events): the writer draws
            # from this state, which is what a read after the write gives (#39)
            plan.state.history = plan.state.history[-keep:] if keep > 0 else []
        if plan.delete:
            await self.index.drop(tid)
        elif loaded is None or loaded.table.status != table.status:
            await self.index.note(tid, now, ttl_ms)
        if plan.result is not None:
            prev = loaded.table.previous_loser if loaded is not None else None  # as at its start
            await self.follow_up(table, plan.result, prev)
        return WriteResult(
            tid,
            v,
            table,
            events=[LiveEvent(v, k, s, x) for k, s, x in plan.events],
            engine_events=list(plan.engine_events),
            changed_seats=_changed(table, before, plan.state, plan.changed_seats),
            game_over=plan.result is not None,
            deadline=deadline,
            state=plan.state,
            log=str(fields["e"]) if "e" in fields else None,
        )

    async def follow_up(self, table: Table, result: GameResult, previous_loser: int | None) -> bool:
        """What the write that ended a game leaves to do (#38): the players'
        stats and the finished index, the game's record, its ratings,
        reliability and offences (#25), its arena score (#27) -- each once
        however often it is asked (they are idempotent).  True when all went
        through; then the table says so (``fin``, :data:`FOLLOWED_UP_LUA`).  A
        fault leaves the rest to the table's timer hint, set in the same write
        as the result (:meth:`tables.timers.Timers._handle_timer` calls this
        again until it is True) -- a failure never undoes the move that ended
        the game, nor loses its settlement.  A step refused for good (a
        :class:`LiveError`: the arena is gone, the record's log is) is done."""
        where = f"{result.table}:{result.game}"
        try:
            await self.results.record(result)
            await self._save_replay(previous_loser, table, result)
            await self._step(where, "ratings", self.ratings.settle(result))
            if table.arena:
                await self._step(where, "arena", self.arenas.record(table.arena, result))
            key = self.keys.table(table.id)
            await self.store.one(lambda p: p.eval(FOLLOWED_UP_LUA, 1, key, result.game))
        except (ServiceUnavailable, RedisError) as e:
            log.warning("game %s: follow-ups not all done yet: %s", where, e)
            return False
        return True

    @staticmethod
    async def _step(where: str, what: str, step: Awaitable[object]) -> None:
        try:
            await step
        except LiveError as e:  # refused for good: nothing to do again
            log.warning("game %s: %s not done: %s", where, what, e)

    async def settle_finished(self, *, older: float = 30.0, within: float = 3600.0) -> int:
        """Settle the games that finished between ``within`` and ``older`` seconds
        ago and are not settled yet -- a net under the table's own retry
        (:meth:`follow_up`; its timer hint is written beside the write, not in
        it, on a cluster): from the table's result while it holds the game,
        else from the game's record; how many.  The first ``SETTLE_BATCH``
        games NOT settled are taken, however many settled ones precede them
        (#38: the oldest 200 of the hour, settled or not, were taken)."""
        now = self.now_ms()
        members = await self.store.one(
            lambda p: p.zrangebyscore(
                self.keys.finished_multi, now - int(within * 1000), now - int(older * 1000)
            )
        )
        games: list[tuple[str, int]] = []
        for m in members:
            tid, game, _variant = (m.decode() if isinstance(m, bytes) else m).rsplit(":", 2)
            games.append((tid, int(game)))
        pending: list[tuple[str, int]] = []
        for at in range(0, len(games), 500):
            page = games[at : at + 500]

            def build(p: Any, page: list[tuple[str, int]] = page) -> None:
                for t, g in page:
                    self.ratings.queue_settled(p, t, g)

            got = await self.store.run(build)
            for i, (t, g) in enumerate(page):
                if not self.ratings.settled_of(got[2 * i : 2 * i + 2]):
                    pending.append((t, g))
            if len(pending) >= SETTLE_BATCH:
                break
        settled = 0
        for tid, game in pending[:SETTLE_BATCH]:
            try:
                loaded = await self.load(tid)
            except LiveError:
                loaded = None  # expired: its record may still be kept
            if loaded is not None and loaded.result is not None and loaded.result.game == game:
                prev = loaded.result_previous_loser
                ended = loaded.finished_table
                if ended is not None:
                    settled += await self.follow_up(ended, loaded.result, prev)
                    continue
            try:
                record = await self.replays.record(tid, game)
            except LiveError:
                continue  # no record (its log was gone): nothing to settle it from
            try:
                done = await self.ratings.settle(GameResult.from_json(record["result"]))
            except ServiceUnavailable as e:  # a player held by another game: next sweep
                log.warning("game %s:%s: not settled yet: %s", tid, game, e)
                continue
            settled += done is not None
        return settled

    async def _save_replay(self, prev: int | None, table: Table, result: GameResult) -> None:
        """Keep the game's record (issue #16); a log that no longer holds the game's
        start (an operator's write, a capped stream) leaves it without one."""
        try:
            await self.replays.save(table, prev, result)
        except LiveError as e:
            if e.code != "no_record":
                raise

    async def retry(
        self,
        table_id: str,
        make: Callable[[Loaded], Awaitable[Plan | None] | Plan | None],
        request_id: str = "",
        *,
        before_write: Callable[[str, int], Awaitable[object]] | None = None,
    ) -> WriteResult:
        """Load, plan and write, again while another write got there first.

        ``make`` checks every rule of the write on the table as loaded (so a lost
        race re-checks them on the newer state) and raises :class:`LiveError` to
        refuse; it returns None when there is nothing to write (the table as
        loaded is the answer).  A ``request_id`` seen before is answered as the
        duplicate it is *before* ``make`` runs (its rules may no longer hold on the
        state the first one made: a second *Start* must not say "not open"); the
        compare-and-set checks it again, so two processes apply it once.
        ``before_write`` is awaited with (table, the version the write will
        make) just before each write (a timer's: its render is marked owed)."""
        check_request_id(request_id)
        for _attempt in range(self.config.cas_retries):
            loaded = await self.load(table_id)
            seen = loaded.applied(request_id)
            if seen is not None:
                return WriteResult(table_id, seen, loaded.table, duplicate=True)
            planned = make(loaded)
            plan = planned if planned is None or isinstance(planned, Plan) else await planned
            if plan is None:
                return WriteResult(table_id, loaded.version, loaded.table)
            if before_write is not None:
                await before_write(table_id, loaded.version + 1)
            try:
                return await self.write(loaded, plan, request_id=request_id, before=loaded.state)
            except StaleVersion:
                continue
        raise LiveError("busy", "the table is too busy right now; try again")

    # ------------------------------------------------------------ user pointers
    async def _active_table(self, table_id: str, user: int) -> Table | None:
        """The table if ``user`` sits there in an open lobby or a game in progress."""
        raw = await self.store.load(table_id)
        if not raw or b"t" not in raw:
            return None
        t = Table.from_json(raw[b"t"])
        if t.status in (OPEN, PLAYING) and t.seat_of(user) is not None:
            return t
        return None

    async def claim_user(self, user: int, table_id: str) -> bool:
        """Point ``user`` at ``table_id``; True if the pointer was changed (so a
        failed join should release it).  Raises ``seated_elsewhere`` naming the
        table where he sits (one active table per user, :mod:`tables.lobbies`).
        Its refusals name him (``info["user"]``, #38)."""
        ttl = int(self.config.user_ttl * 1000)
        # a claim older than a lobby's lifetime names a lobby that is gone
        window = int(min(self.config.claim_window, self.config.lobby_ttl) * 1000)
        loop = asyncio.get_running_loop()
        patience = loop.time() + CLAIM_WAIT
        attempts = 0
        while attempts < self.config.cas_retries:
            attempts += 1
            cur, fresh = await self.store.user_claim(user)
            if cur == table_id:  # renew the claim: the seat may be written again
                if await self.store.swap_user(user, cur, table_id, ttl, window):
                    return False
                continue
            if cur:
                other = await self._active_table(cur, user)
                if other is not None:
                    raise LiveError(
                        "seated_elsewhere",
                        f"you already sit at table {cur} ({other.status}, "
                        f"{other.variant}); leave it first",
                        table=cur,
                        status=other.status,
                        chat=other.chat,
                        variant=other.variant,
                        user=user,  # whose refusal it is (#38: an arena withdraws him)
                    )
                if fresh:
                    # claimed for another table whose seat is not written yet (a
                    # join or create in flight, maybe in another process): that
                    # write may still land, so this one may not (issue 17, defect 1).
                    # It usually lands within milliseconds: wait a moment, then say
                    # where he sits -- "busy" only if it is still in flight
                    if loop.time() < patience:
                        attempts -= 1  # waiting is no lost race
                        await asyncio.sleep(CLAIM_POLL)
                        continue
                    raise LiveError("busy", "you are joining another table right now", user=user)
            if await self.store.swap_user(user, cur, table_id, ttl, window):
                return True
        raise LiveError("busy", "try again", user=user)

    async def release_user(self, user: int, table_id: str) -> None:
        await self.store.swap_user(user, table_id, "", 0)

    async def settle_users(self, table_id: str, *users: int) -> None:
        """The attempts of ``users`` on ``table_id`` are over (their seats written,
        or the attempt failed): their claims on it stop being fresh
        (:meth:`claim_user`).  A claim on another table stays: it is a rival
        attempt still in flight, and dropping it would let a third one seat the
        same user twice."""
        for user in users:
            await self.store.settle_claim(user, table_id)

    async def where(self, user: int) -> Table | None:
        """The open lobby or game in progress where ``user`` sits, if any."""
        cur = await self.store.get_user(user)
        return await self._active_table(cur, user) if cur else None


CLAIM_WAIT = 1.5
"""Seconds a join waits for the same user's join in flight elsewhere to land."""
CLAIM_POLL = 0.02


def _changed(
    table: Table, before: GameState | None, after: GameState | None, given: list[int] | None
) -> list[int]:
    humans = [i for i, s in enumerate(table.seats) if s.human and not s.left]
    if given is not None:
        return given
    if before is None or after is None:
        return humans
    return [s for s in humans if _view_key(before, s) != _view_key(after, s)]


def _view_key(state: GameState, seat: int) -> dict[str, Any]:
    v = view(state, seat, last_events=1)
    v.pop("ply")
    v.pop("events")
    return v
