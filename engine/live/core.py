"""The shared core of :class:`engine.live.TableService`: loading a table and the
one generic write (load -> plan -> compare-and-set).  Lobby, game, timer and
admin operations (the other modules) are plans written through :meth:`_write`."""

from __future__ import annotations

import json
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aredis

from engine import Event, GameState, view
from engine.live import eventlog
from engine.live.codec import decode_state, encode_state
from engine.live.keys import Keys
from engine.live.model import (
    CANCELLED,
    OPEN,
    OVER,
    PLAYING,
    LiveConfig,
    LiveError,
    LiveEvent,
    StaleVersion,
    Table,
    WriteResult,
)
from engine.live.store import Store

Clock = Callable[[], float]
"""Seconds since the epoch (``time.time``); tests inject their own."""

_REQUEST_ID = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


@dataclass
class Loaded:
    """A table as read in one round trip."""

    version: int
    table: Table
    state: GameState | None
    deadline: int | None
    result: dict[str, Any] | None
    recent: str = ""
    log: str = ""  # the open chunk of the event log (eventlog)


@dataclass
class Plan:
    """A write to make: the new table record, the new state (None: no game), the
    log entries ``(kind, seat, text)`` and what the engine reported."""

    table: Table
    state: GameState | None
    events: list[tuple[str, int, str]] = field(default_factory=list)
    engine_events: list[Event] = field(default_factory=list)
    result: dict[str, Any] | None = None
    notify: str = ""  # publish on the notify channel with this kind ("" = no)
    delete: bool = False  # remove the table's keys (admin delete)
    changed_seats: list[int] | None = None  # None: every human seat


class Core:
    """Construction, loading and the generic CAS write."""

    def __init__(
        self,
        client: aredis.Redis,
        config: LiveConfig | None = None,
        *,
        clock: Clock = time.time,
        owns_client: bool = False,
    ) -> None:
        self.config = config or LiveConfig()
        self.keys = Keys(self.config.prefix)
        self.redis = client
        self.store = Store(client, self.keys)
        self.clock = clock
        self._owns_client = owns_client
        self.new_seed: Callable[[], int] = lambda: secrets.randbits(62)
        """The shuffle seed of each new game (tests replace it)."""

    @classmethod
    def from_url(
        cls, url: str, config: LiveConfig | None = None, *, clock: Clock = time.time
    ) -> Any:
        """A service with its own client (closed by :meth:`aclose`)."""
        return cls(aredis.Redis.from_url(url), config, clock=clock, owns_client=True)

    async def aclose(self) -> None:
        if self._owns_client:
            await self.redis.aclose()

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    @property
    def round_trips(self) -> int:
        """Redis round trips made so far by this instance."""
        return self.store.round_trips

    def now_ms(self) -> int:
        return int(self.clock() * 1000)

    # ------------------------------------------------------------------ reading
    async def _load(self, table_id: str) -> Loaded:
        raw = await self.store.load(table_id)
        if not raw or b"t" not in raw:
            raise LiveError("no_table", f"there is no table {table_id!r} (finished or expired)")
        return self._parse(raw)

    @staticmethod
    def _parse(raw: dict[bytes, bytes]) -> Loaded:
        blob = raw.get(b"s")
        d = raw.get(b"d")
        res = raw.get(b"res")
        return Loaded(
            version=int(raw.get(b"v", b"0")),
            table=Table.from_json(raw[b"t"]),
            state=decode_state(blob) if blob else None,
            deadline=int(d) if d else None,
            result=json.loads(res) if res else None,
            recent=raw.get(b"r", b"").decode(),
            log=raw.get(b"e", b"").decode(),
        )

    async def get(self, table_id: str) -> tuple[Table, GameState | None, int]:
        """The table, its game state (None before the first game) and version."""
        loaded = await self._load(table_id)
        return loaded.table, loaded.state, loaded.version

    async def load(self, table_id: str) -> Loaded:
        """Everything :meth:`get` gives plus the turn deadline (ms), the result and
        the newest events, read in one round trip (what a renderer needs)."""
        return await self._load(table_id)

    # ------------------------------------------------------------------ writing
    def _ttl(self, status: str) -> float:
        c = self.config
        return {OPEN: c.lobby_ttl, PLAYING: c.game_ttl, OVER: c.finished_ttl}.get(
            status, c.finished_ttl
        )

    def _deadline(self, table: Table, state: GameState | None) -> int | None:
        """The next turn deadline: a timer is set, the game waits for a human."""
        if table.status != PLAYING or not table.timer or state is None or state.over:
            return None
        if any(not table.seats[s].ai_controlled for s in state.to_act()):
            return self.now_ms() + table.timer * 1000
        return None

    @staticmethod
    def _check_request_id(request_id: str) -> None:
        if request_id and not _REQUEST_ID.fullmatch(request_id):
            raise LiveError("bad_request_id", "a request id is 1-64 of A-Za-z0-9_.:-")

    async def _write(
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
        self._check_request_id(request_id)
        c = self.config
        now = self.now_ms()
        table = plan.table
        tid = table.id
        version = loaded.version if loaded else 0
        if expected is None:
            expected = version
        fields: dict[str, str | bytes | int] = {"t": table.to_json()}
        dels: list[str] = []
        state = plan.state
        deadline = self._deadline(table, state)
        if state is not None:
            fields["s"] = encode_state(state, c.keep_history)
        elif loaded is not None and loaded.state is not None:
            dels.append("s")
        if deadline is not None:
            fields["d"] = deadline
        elif loaded is not None and loaded.deadline is not None:
            dels.append("d")
        if plan.result is not None:
            fields["res"] = json.dumps(plan.result, separators=(",", ":"))
        flush = b""
        group = eventlog.encode_group(expected + 1, plan.events)
        if group:
            chunk = (loaded.log if loaded else "") + group
            if len(chunk) >= c.log_chunk:
                flush = eventlog.compress(chunk)
                chunk = ""
            fields["e"] = chunk
        notify = ""
        if plan.notify:
            notify = json.dumps({"table": tid, "kind": plan.notify}, separators=(",", ":"))[1:]
        ttl_ms = 0 if plan.delete else int(self._ttl(table.status) * 1000)
        outcome = await self.store.cas(
            tid,
            expected,
            set_fields=fields,
            del_fields=dels,
            flush=flush,
            ttl_ms=ttl_ms,
            maxlen=c.events_maxlen,
            request_id=request_id,
            recent=c.recent_requests,
            notify=notify,
            timer_hint=deadline,
        )
        if outcome.status == "stale":
            raise StaleVersion(expected, outcome.version)
        if outcome.status == "duplicate":
            return WriteResult(tid, outcome.version, table, duplicate=True)
        v = outcome.version
        if loaded is None or loaded.table.status != table.status or plan.delete:
            await self._index(tid, now, plan.delete)
        result = WriteResult(
            tid,
            v,
            table,
            events=[LiveEvent(v, k, s, x) for k, s, x in plan.events],
            engine_events=list(plan.engine_events),
            changed_seats=self._changed(table, before, state, plan.changed_seats),
            game_over=plan.result is not None,
            deadline=deadline,
        )
        if plan.result is not None:
            await self._record_result(table, plan.result)
        return result

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

    async def _claim_user(self, user: int, table_id: str) -> bool:
        """Point ``user`` at ``table_id``; True if the pointer was changed (so a
        failed join should release it).  Raises ``seated_elsewhere`` naming the
        table where he sits (RULES of the lobby: one active table per user)."""
        ttl = int(self.config.user_ttl * 1000)
        for _attempt in range(self.config.cas_retries):
            cur = await self.store.get_user(user)
            if cur == table_id:
                return False
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
                    )
            if await self.store.swap_user(user, cur, table_id, ttl):
                return True
        raise LiveError("busy", "try again")

    async def _release_user(self, user: int, table_id: str) -> None:
        await self.store.swap_user(user, table_id, "", 0)

    async def where(self, user: int) -> Table | None:
        """The open lobby or game in progress where ``user`` sits, if any."""
        cur = await self.store.get_user(user)
        return await self._active_table(cur, user) if cur else None

    async def _record_result(self, table: Table, result: dict[str, Any]) -> None:
        """Store stats for a finished game (:mod:`engine.live.results`)."""
        raise NotImplementedError

    async def _index(self, table_id: str, now: int, delete: bool) -> None:
        self.store.round_trips += 1
        if delete:
            await self.redis.zrem(self.keys.tables, table_id)
        else:
            await self.redis.zadd(self.keys.tables, {table_id: now})

    @staticmethod
    def _changed(
        table: Table,
        before: GameState | None,
        after: GameState | None,
        given: list[int] | None,
    ) -> list[int]:
        humans = [i for i, s in enumerate(table.seats) if s.human and not s.left]
        if given is not None:
            return given
        if before is None or after is None:
            return humans
        return [s for s in humans if _view_key(before, s) != _view_key(after, s)]

    async def _retry(
        self, table_id: str, make: Callable[[Loaded], Awaitable[Plan] | Plan]
    ) -> WriteResult:
        """Load, plan and write, again while another write got there first."""
        for _attempt in range(self.config.cas_retries):
            loaded = await self._load(table_id)
            planned = make(loaded)
            plan = planned if isinstance(planned, Plan) else await planned
            try:
                return await self._write(loaded, plan, before=loaded.state)
            except StaleVersion:
                continue
        raise LiveError("busy", "the table is too busy right now; try again")


def _view_key(state: GameState, seat: int) -> dict[str, Any]:
    v = view(state, seat, last_events=1)
    v.pop("ply")
    v.pop("events")
    return v


__all__ = ["CANCELLED", "OPEN", "OVER", "PLAYING", "Core", "Loaded", "Plan"]
