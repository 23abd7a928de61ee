"""Operator operations (the admin API calls these).  Reads never change
anything; every write goes through the same compare-and-set, is logged in the
table's event stream with who did it, and is published on the notify channel
(``keys.notify``) so the bot re-renders and tells the players."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, cast

from engine import state_to_json
from engine.live import eventlog
from engine.live.core import Loaded, Plan
from engine.live.model import (
    CANCELLED,
    OPEN,
    OVER,
    PLAYING,
    LiveError,
    LiveEvent,
    StaleVersion,
    Table,
    WriteResult,
)
from engine.live.timers import TimerOps

DAY_MS = 86400 * 1000


def summary(t: Table, version: int, deadline: int | None) -> dict[str, Any]:
    """A table as the admin list shows it."""
    return {
        "id": t.id,
        "status": t.status,
        "variant": t.variant,
        "options": t.options,
        "chat": t.chat,
        "creator": t.creator,
        "private": t.private,
        "max_seats": t.max_seats,
        "timer": t.timer,
        "game_no": t.game_no,
        "version": version,
        "deadline": deadline,
        "created": t.created,
        "updated": t.updated,
        "seats": [
            {"user": s.user, "name": s.name, "ai": s.ai, "timeouts": s.timeouts, "left": s.left}
            for s in t.seats
        ],
    }


class AdminOps(TimerOps):
    async def list_tables(
        self,
        *,
        status: str | None = None,
        variant: str | None = None,
        chat: int | None = None,
        user: int | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[dict[str, Any]]:
        """Tables, newest status change first, filtered; vanished tables are pruned
        from the index on the way."""
        k = self.keys
        self.store.round_trips += 1
        ids = [_text(i) for i in await self.redis.zrevrange(k.tables, 0, -1)]
        if not ids:
            return []
        self.store.round_trips += 1
        async with self.redis.pipeline(transaction=False) as p:
            for tid in ids:
                p.hmget(k.table(tid), "t", "v", "d")
            rows = await p.execute()
        out: list[dict[str, Any]] = []
        gone = []
        for tid, (t_raw, v_raw, d_raw) in zip(ids, rows, strict=True):
            if t_raw is None:
                gone.append(tid)
                continue
            t = Table.from_json(t_raw)
            if status is not None and t.status != status:
                continue
            if variant is not None and t.variant != variant:
                continue
            if chat is not None and t.chat != chat:
                continue
            if user is not None and all(s.user != user for s in t.seats):
                continue
            out.append(summary(t, int(v_raw), int(d_raw) if d_raw else None))
        if gone:
            self.store.round_trips += 1
            await self.redis.zrem(k.tables, *gone)
        return out[offset : offset + limit]

    async def table_info(self, table_id: str) -> dict[str, Any]:
        """Everything about one table: settings, seats, version, deadline, the full
        game state (hands included) and the last result."""
        loaded = await self._load(table_id)
        info = summary(loaded.table, loaded.version, loaded.deadline)
        info["state"] = state_to_json(loaded.state) if loaded.state is not None else None
        info["to_act"] = loaded.state.to_act() if loaded.state is not None else []
        info["result"] = loaded.result
        return info

    async def event_page(
        self, table_id: str, after_version: int = 0, count: int = 100
    ) -> list[LiveEvent]:
        """Up to ``count`` log entries with a version above ``after_version``,
        oldest first (all events of one version together, so a page may hold a
        few more); pass the last version seen to get the next page."""
        chunks, open_chunk = await self.store.read_log(table_id, after_version)
        events: list[LiveEvent] = []
        for blob in chunks:
            events += eventlog.decode_text(eventlog.decompress(blob))
        events += eventlog.decode_text(open_chunk)
        page = [e for e in events if e.version > after_version]
        if len(page) > count:
            last = page[count - 1].version
            page = [e for e in page if e.version <= last]
        return page

    async def _admin_write(
        self, table_id: str, make: Callable[[Loaded], Plan], expected: int | None
    ) -> WriteResult:
        """Write ``make``'s plan: retried on a race when ``expected`` is None,
        else only at that version (:class:`StaleVersion` otherwise)."""
        if expected is None:
            return await self._retry(table_id, make)
        loaded = await self._load(table_id)
        if loaded.version != expected:
            raise StaleVersion(expected, loaded.version)
        return await self._write(loaded, make(loaded), expected=expected, before=loaded.state)

    async def admin_reset(
        self,
        table_id: str,
        *,
        to: str = "lobby",
        by: str = "admin",
        expected: int | None = None,
    ) -> WriteResult:
        """``to="lobby"``: drop the game, reopen the lobby with the same seats
        (players who left are removed; AI takeovers end).  ``to="abort"``: end the
        table now (cancelled; kept ``finished_ttl`` for inspection).  With
        ``expected`` the write happens only at that version (else
        :class:`StaleVersion`); so for every admin write."""
        if to not in ("lobby", "abort"):
            raise LiveError("bad_request", "reset to 'lobby' or 'abort'")

        def make(loaded: Loaded) -> Plan:
            t = loaded.table
            now = self.now_ms()
            if to == "abort":
                if t.status == CANCELLED:
                    raise LiveError("not_allowed", "the table is already cancelled")
                t = replace(t, status=CANCELLED, updated=now)
                return Plan(t, loaded.state, events=[("abort", -1, by)], notify="abort")
            seats = tuple(
                replace(s, ai=None if s.user is not None else s.ai, timeouts=0)
                for s in t.seats
                if not s.left
            )
            t = replace(t, status=OPEN, seats=seats, updated=now)
            return Plan(t, None, events=[("reset", -1, by)], notify="reset")

        return await self._admin_write(table_id, make, expected)

    async def admin_cancel(
        self, table_id: str, *, by: str = "admin", expected: int | None = None
    ) -> WriteResult:
        """Cancel an open lobby (``not_open`` once its game started or it closed)."""

        def make(loaded: Loaded) -> Plan:
            t = loaded.table
            if t.status != OPEN:
                raise LiveError("not_open", f"the table is not an open lobby ({t.status})")
            t = replace(t, status=CANCELLED, updated=self.now_ms())
            return Plan(t, None, events=[("cancel", -1, f"admin:{by}")], notify="cancel")

        return await self._admin_write(table_id, make, expected)

    async def admin_delete(
        self, table_id: str, *, by: str = "admin", expected: int | None = None
    ) -> WriteResult:
        """Remove the table and its event log now (players are notified)."""

        def make(loaded: Loaded) -> Plan:
            t = replace(loaded.table, status=CANCELLED, updated=self.now_ms())
            return Plan(t, None, events=[("delete", -1, by)], notify="delete", delete=True)

        return await self._admin_write(table_id, make, expected)

    async def admin_hand_to_ai(
        self,
        table_id: str,
        seat: int,
        *,
        kind: str = "",
        by: str = "admin",
        expected: int | None = None,
    ) -> WriteResult:
        """Let the AI play ``seat`` (the player may take it back)."""

        def make(loaded: Loaded) -> Plan:
            t = loaded.table
            if t.status != PLAYING:
                raise LiveError("no_game", "no game is in progress at this table")
            if not 0 <= seat < len(t.seats):
                raise LiveError("bad_seat", f"there is no seat {seat}")
            if t.seats[seat].ai_controlled:
                raise LiveError("not_allowed", f"the AI already plays seat {seat}")
            plan = self._takeover_plan(loaded, seat, f"admin:{by}", kind=kind)
            plan.notify = "takeover"
            return plan

        return await self._admin_write(table_id, make, expected)

    async def player(self, user: int) -> dict[str, Any]:
        """Where the user sits now (or None) and his stats."""
        t = await self.where(user)
        return {
            "user": user,
            "table": summary(t, 0, None) if t is not None else None,
            "stats": await self.user_stats(user),
        }

    async def global_stats(self) -> dict[str, Any]:
        """Live games, open lobbies (also by variant), players seated at them,
        games finished in the last 24 hours by variant."""
        tables = await self.list_tables(limit=10**9)
        live = [t for t in tables if t["status"] == PLAYING]
        lobbies = [t for t in tables if t["status"] == OPEN]
        players = {
            s["user"]
            for t in live + lobbies
            for s in t["seats"]
            if s["user"] is not None and not s["left"]
        }
        now = self.now_ms()
        self.store.round_trips += 1
        done = await self.redis.zrangebyscore(self.keys.finished, now - DAY_MS, "+inf")
        by_variant: dict[str, int] = {}
        for m in done:
            v = _text(m).rsplit(":", 1)[1]
            by_variant[v] = by_variant.get(v, 0) + 1
        return {
            "live_games": len(live),
            "open_lobbies": len(lobbies),
            "live_by_variant": _count(t["variant"] for t in live),
            "lobbies_by_variant": _count(t["variant"] for t in lobbies),
            "finished_tables": sum(1 for t in tables if t["status"] in (OVER, CANCELLED)),
            "active_players": len(players),
            "finished_24h": by_variant,
        }

    async def prune_index(self) -> None:
        """Drop index entries of tables that expired (the scheduler calls this)."""
        await self.list_tables(limit=0)

    async def ping(self) -> bool:
        """True when Redis answers (raises ``redis.RedisError`` when it does not)."""
        self.store.round_trips += 1
        return bool(await self.redis.ping())

    async def audit(self, entry: Mapping[str, str | int]) -> str:
        """Append an operator action to the audit stream (``keys.audit``) with the
        time ``at`` (ms); returns the entry id.  Entries are flat string maps:
        the admin API writes ``actor``, ``role``, ``action``, ``target``,
        ``status``, ``result`` (never a token)."""
        fields: dict[str, str | int] = {"at": self.now_ms(), **entry}
        self.store.round_trips += 1
        entry_id = await self.redis.xadd(
            self.keys.audit,
            cast("dict[Any, Any]", fields),
            maxlen=self.config.audit_maxlen,
            approximate=True,
        )
        return _text(entry_id)

    async def audit_page(
        self, *, before: str | None = None, count: int = 50
    ) -> tuple[list[dict[str, str]], int]:
        """Audit entries, newest first, with ids below ``before`` (a previous
        page's last id; None: from the newest), and the stream's length.  Each
        entry has its ``id``."""
        if before is not None and before.strip("-0") == "":
            self.store.round_trips += 1
            return [], int(await self.redis.xlen(self.keys.audit))  # nothing below 0-0
        top = f"({before}" if before else "+"
        self.store.round_trips += 1
        async with self.redis.pipeline(transaction=False) as p:
            p.xrevrange(self.keys.audit, top, "-", count=count)
            p.xlen(self.keys.audit)
            rows, total = await p.execute()
        page = [
            {"id": _text(i), **{_text(k): _text(v) for k, v in fields.items()}}
            for i, fields in rows
        ]
        return page, int(total)


def _count(items: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out


def _text(b: Any) -> str:
    return b.decode() if isinstance(b, bytes) else str(b)
