"""The replays part (issue #16): when a game ends, its full record -- the deal's
seed and commitment, the variant, options and seats, every move, the result --
is kept for ``replay_ttl`` (:data:`engine.verify.RECORD_FORMAT`, a scenario file
that ``python -m engine replay`` reads), and each human player's recent games
are listed for ``/replay``.

The moves come from the table's event log (every ``act``, ``ai`` and ``auto``
event since the game's ``start``), read once after the write that ended the
game.  Saving is idempotent (the same record again), like the stats."""

from __future__ import annotations

import json
import logging
from typing import Any, cast

from engine.verify import make_record
from tables import eventlog
from tables.model import MOVE_KINDS, LiveConfig, LiveError, Table
from tables.records import GameResult
from tables.store import Store

log = logging.getLogger(__name__)

MOVES = MOVE_KINDS  # the log entries that are moves (autopass too, issue #13)
"""Log kinds that are a move of the game (a player's, an AI's, a timeout's)."""
RECENT = 10
"""Games listed per player for ``/replay``."""


class Replays:
    def __init__(self, store: Store, config: LiveConfig) -> None:
        self.store = store
        self.keys = store.keys
        self.config = config

    async def moves(self, table_id: str, game: int) -> list[tuple[int, str]]:
        """The moves ``(seat, action text)`` of game ``game`` from the table's log."""
        chunks, open_chunk = await self.store.read_log(table_id, 0)
        events = []
        for blob in chunks:
            events += eventlog.decode_text(eventlog.decompress(blob))
        events += eventlog.decode_text(open_chunk)
        starts = [i for i, e in enumerate(events) if e.kind == "start" and e.text == str(game)]
        if not starts:
            raise LiveError("no_record", f"the log of {table_id} no longer holds game {game}")
        moves: list[tuple[int, str]] = []
        for e in events[starts[-1] + 1 :]:
            if e.kind in ("start", "over"):
                break
            if e.kind in MOVES:
                moves.append((e.seat, e.text))
        return moves

    async def save(self, table: Table, previous_loser: int | None, result: GameResult) -> None:
        """Keep the record of the game ``result`` ended (``previous_loser``: as at
        its start, C5/S5) and list it for its human players -- only from that
        game's own table: a later game's seed would deal the live game to anyone
        who checks this one's deal (review "leaks")."""
        if table.game_no != result.game:
            log.warning(
                "game %s:%d: no record from game %d's table", table.id, result.game, table.game_no
            )
            return
        moves = await self.moves(table.id, result.game)
        record = make_record(
            seed=table.seed,
            variant=table.variant,
            options=table.options,
            players=len(table.seats),
            previous_loser=previous_loser,
            actions=moves,
            extra={
                "table": table.id,
                "game": result.game,
                "seats": [[u, n] for u, n in result.seats],
                # each AI seat's kind at the end, for its level (#29; None: a human)
                "ai": [s.ai if s.user is None else None for s in table.seats],
                "result": result.to_json(),
            },
        )
        blob = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
        ttl = int(self.config.replay_ttl * 1000)
        member = f"{table.id}:{result.game}"
        humans = {u for u, _ in result.seats if u is not None}

        def build(p: Any) -> None:
            p.set(self.keys.record(table.id, result.game), blob, px=ttl)
            for user in humans:
                key = self.keys.recent_records(user)
                p.zadd(key, {member: result.at})
                p.zremrangebyrank(key, 0, -RECENT - 1)
                p.pexpire(key, ttl)

        await self.store.run(build)

    async def record(self, table_id: str, game: int) -> dict[str, Any]:
        """A kept record; ``no_record`` when there is none (expired, never played)."""
        raw = await self.store.one(lambda p: p.get(self.keys.record(table_id, game)))
        if raw is None:
            raise LiveError(
                "no_record", f"game {game} of {table_id} has no record (expired or never played)"
            )
        return cast("dict[str, Any]", json.loads(raw))

    async def recent(self, user: int) -> list[tuple[str, int]]:
        """The user's recent finished games ``(table, game)``, newest first (their
        records may have expired since)."""
        key = self.keys.recent_records(user)
        rows = await self.store.one(lambda p: p.zrevrange(key, 0, RECENT - 1))
        out: list[tuple[str, int]] = []
        for m in rows:
            tid, _, game = (m.decode() if isinstance(m, bytes) else m).rpartition(":")
            out.append((tid, int(game)))
        return out


__all__ = ["MOVES", "RECENT", "Replays"]
