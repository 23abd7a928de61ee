"""The admin part: operator operations (the admin API calls these).  Reads never
change anything; every write goes through the same compare-and-set, is logged in
the table's event stream with who did it, and is published on the notify
channel (``keys.notify``) so the bot re-renders and tells the players."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace

from engine import state_to_json
from tables import eventlog, paging
from tables.games import Games
from tables.index import Indexed
from tables.model import (
    CANCELLED,
    OPEN,
    OVER,
    PLAYING,
    LiveError,
    LiveEvent,
    StaleVersion,
    WriteResult,
)
from tables.records import GlobalStats, PlayerInfo, TableInfo, TableSummary
from tables.results import Results
from tables.store import text
from tables.tables import Loaded, Plan, Tables

DAY_MS = 86400 * 1000


class Admin:
    def __init__(self, tables: Tables, games: Games, results: Results) -> None:
        self.tables = tables
        self.store = tables.store
        self.games = games
        self.results = results

    async def list_tables(
        self,
        *,
        status: str | None = None,
        variant: str | None = None,
        chat: int | None = None,
        user: int | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[TableSummary]:
        """Tables, newest status change first, filtered; vanished tables are pruned
        from the index on the way."""
        out = [
            TableSummary.of(i.table, i.version, i.deadline)
            for i in await self.tables.index.all()
            if (status is None or i.table.status == status)
            and (variant is None or i.table.variant == variant)
            and (chat is None or i.table.chat == chat)
            and (user is None or any(s.user == user for s in i.table.seats))
        ]
        return out[offset : offset + limit]

    async def table_page(
        self,
        *,
        cursor: str = "",
        limit: int = 50,
        status: str | None = None,
        variant: str | None = None,
        chat: int | None = None,
        user: int | None = None,
        started: bool = False,
    ) -> tuple[list[TableSummary], str]:
        """One page of :meth:`list_tables` by cursor (:mod:`tables.paging`):
        the tables after ``cursor`` ('' = the newest), filtered (``started``:
        only tables that started a game), and the next page's cursor ('' = no
        more).  Reads the index from the cursor on, not the whole index."""

        def keep(i: Indexed) -> bool:
            t = i.table
            return (
                (status is None or t.status == status)
                and (variant is None or t.variant == variant)
                and (chat is None or t.chat == chat)
                and (user is None or any(s.user == user for s in t.seats))
                and (not started or t.game_no > 0)
            )

        return await paging.table_page(self.tables, cursor, limit, keep)

    async def table_info(self, table_id: str) -> TableInfo:
        """Everything about one table: settings, seats, version, deadline, the full
        game state (hands included) and the last result."""
        loaded = await self.tables.load(table_id)
        state = loaded.state
        return TableInfo(
            summary=TableSummary.of(loaded.table, loaded.version, loaded.deadline),
            state=state_to_json(state) if state is not None else None,
            to_act=tuple(state.to_act()) if state is not None else (),
            result=loaded.result,
        )

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

    async def _write(
        self,
        table_id: str,
        make: Callable[[Loaded], Awaitable[Plan] | Plan],
        expected: int | None,
    ) -> WriteResult:
        """Write ``make``'s plan: retried on a race when ``expected`` is None,
        else only at that version (:class:`StaleVersion` otherwise)."""
        if expected is None:
            return await self.tables.retry(table_id, make)
        loaded = await self.tables.load(table_id)
        if loaded.version != expected:
            raise StaleVersion(expected, loaded.version)
        planned = make(loaded)
        plan = planned if isinstance(planned, Plan) else await planned
        return await self.tables.write(loaded, plan, expected=expected, before=loaded.state)

    async def admin_reset(
        self,
        table_id: str,
        *,
        to: str = "lobby",
        by: str = "admin",
        expected: int | None = None,
    ) -> WriteResult:
        """``to="lobby"``: drop the game in progress, reopen the lobby with the
        same seats (players who left are removed; AI takeovers end).  ``to="abort"``: end the
        table now (cancelled; kept ``finished_ttl`` for inspection).  With
        ``expected`` the write happens only at that version (else
        :class:`StaleVersion`); so for every admin write."""
        if to not in ("lobby", "abort"):
            raise LiveError("bad_request", "reset to 'lobby' or 'abort'")

        def make(loaded: Loaded) -> Plan:
            t = loaded.table
            now = self.tables.now_ms()
            if to == "abort":
                if t.status == CANCELLED:
                    raise LiveError("not_allowed", "the table is already cancelled")
                t = replace(t, status=CANCELLED, updated=now)
                return Plan(t, loaded.state, events=[("abort", -1, by)], notify="abort")
            if t.status != PLAYING:
                # an ended table's players are free and may sit elsewhere now:
                # reopened, it would seat one at two live tables (review2)
                raise LiveError("not_allowed", "only a game in progress goes back to its lobby")
            seats = tuple(
                replace(s, ai=None if s.user is not None else s.ai, timeouts=0)
                for s in t.seats
                if not s.left
            )
            t = replace(t, status=OPEN, seats=seats, updated=now)
            return Plan(t, None, events=[("reset", -1, by)], notify="reset")

        return await self._write(table_id, make, expected)

    async def admin_cancel(
        self, table_id: str, *, by: str = "admin", expected: int | None = None
    ) -> WriteResult:
        """Cancel an open lobby (``not_open`` once its game started or it closed)."""

        def make(loaded: Loaded) -> Plan:
            t = loaded.table
            if t.status != OPEN:
                raise LiveError("not_open", f"the table is not an open lobby ({t.status})")
            t = replace(t, status=CANCELLED, updated=self.tables.now_ms())
            return Plan(t, None, events=[("cancel", -1, f"admin:{by}")], notify="cancel")

        return await self._write(table_id, make, expected)

    async def admin_delete(
        self, table_id: str, *, by: str = "admin", expected: int | None = None
    ) -> WriteResult:
        """Remove the table and its event log now (players are notified)."""

        def make(loaded: Loaded) -> Plan:
            t = replace(loaded.table, status=CANCELLED, updated=self.tables.now_ms())
            return Plan(t, None, events=[("delete", -1, by)], notify="delete", delete=True)

        return await self._write(table_id, make, expected)

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

        async def make(loaded: Loaded) -> Plan:
            t = loaded.table
            if t.status != PLAYING:
                raise LiveError("no_game", "no game is in progress at this table")
            if not 0 <= seat < len(t.seats):
                raise LiveError("bad_seat", f"there is no seat {seat}")
            if t.seats[seat].ai_controlled:
                raise LiveError("not_allowed", f"the AI already plays seat {seat}")
            if loaded.state is not None and seat in loaded.state.out:
                # nothing left to play: an AI there would only cost him his place
                raise LiveError("not_allowed", f"seat {seat} is out of this game already")
            # an operator's act is excused (#38: his rating does not move); the
            # bot's own takeover after a block ("bot:forbidden:...") is his act
            plan = await self.games.takeover_plan(
                loaded,
                seat,
                f"admin:{by}",
                kind=kind,
                operator=True,
                excuse=not by.startswith("bot:"),
            )
            plan.notify = "takeover"
            return plan

        return await self._write(table_id, make, expected)

    async def player(self, user: int) -> PlayerInfo:
        """Where the user sits now (or None) and his stats."""
        t = await self.tables.where(user)
        return PlayerInfo(
            user=user,
            table=TableSummary.of(t, 0, None) if t is not None else None,
            stats=await self.results.user_stats(user),
        )

    async def global_stats(self) -> GlobalStats:
        """Live games, open lobbies (also by variant), players seated at them,
        games finished in the last 24 hours by variant."""
        tables = await self.list_tables(limit=10**9)
        live = [t for t in tables if t.status == PLAYING]
        lobbies = [t for t in tables if t.status == OPEN]
        players = {
            s.user for t in live + lobbies for s in t.seats if s.user is not None and not s.left
        }
        now = self.tables.now_ms()
        finished = self.tables.keys.finished
        done = await self.store.one(lambda p: p.zrangebyscore(finished, now - DAY_MS, "+inf"))
        return GlobalStats(
            live_games=len(live),
            open_lobbies=len(lobbies),
            live_by_variant=_count(t.variant for t in live),
            lobbies_by_variant=_count(t.variant for t in lobbies),
            finished_tables=sum(1 for t in tables if t.status in (OVER, CANCELLED)),
            active_players=len(players),
            finished_24h=_count(text(m).rsplit(":", 1)[1] for m in done),
        )

    async def ping(self) -> bool:
        """True when Redis answers (raises :class:`ServiceUnavailable` when not)."""
        return await self.store.ping()


def _count(items: Iterable[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return out
