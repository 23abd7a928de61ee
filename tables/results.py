"""The results part: stats of finished games.  When a write ends a game (exactly
one write can), the result is stored in the table (``res``) in that same
compare-and-set; then :meth:`Results.record` adds it to the per-user stats, the
chat's leaderboard and the finished-games index in one pipelined round trip --
once, even when a timeout makes the client send it again.
Stats keys expire after ``stats_ttl`` without games."""

from __future__ import annotations

from typing import Any, cast

from tables.model import LiveConfig
from tables.records import GameResult, LeaderboardEntry, UserStats
from tables.scripts import RECORD_LUA, RECORDED_GAMES
from tables.store import Store

FINISHED_WINDOW_MS = 7 * 86400 * 1000


class Results:
    def __init__(self, store: Store, config: LiveConfig) -> None:
        self.store = store
        self.keys = store.keys
        self.config = config

    async def record(self, result: GameResult) -> None:
        """Count a finished game for its human players and in its chat's board,
        once per hash even if the round trip is retried after a lost reply, or
        the follow-up retried after later games (:data:`tables.scripts.RECORD_LUA`
        remembers the last :data:`tables.scripts.RECORDED_GAMES` games counted)."""
        k = self.keys
        v = result.variant
        ttl = int(self.config.stats_ttl * 1000)
        now = result.at
        game = f"{result.table}:{result.game}"
        board: list[str | int] = []
        per_user: dict[str, list[str | int]] = {}
        for seat, (user, name) in enumerate(result.seats):
            if user is None:
                continue
            lost = result.loser == seat
            fields: list[str | int] = [f"{v}:games", 1, f"{v}:p{result.places[seat]}", 1]
            fields += [f"{v}:losses", 1] if lost else []
            fields += [f"{v}:draws", 1] if result.draw else []
            per_user[k.stats(user)] = fields
            board += [f"{user}:{v}:games", 1, f"={user}:name", name]
            board += [f"{user}:{v}:losses", 1] if lost else []
            board += [f"{user}:{v}:draws", 1] if result.draw else []

        def build(p: Any) -> None:
            for key, fields in per_user.items():
                p.eval(RECORD_LUA, 1, key, game, ttl, RECORDED_GAMES, *fields)
            if result.chat is not None and board:
                p.eval(RECORD_LUA, 1, k.top(result.chat), game, ttl, RECORDED_GAMES, *board)
            p.zadd(k.finished, {f"{game}:{v}": now})
            p.zremrangebyscore(k.finished, "-inf", now - FINISHED_WINDOW_MS)
            if len(per_user) >= 2:  # the games the ratings settle (#38: not a solo game)
                p.zadd(k.finished_multi, {f"{game}:{v}": now})
                p.zremrangebyscore(k.finished_multi, "-inf", now - FINISHED_WINDOW_MS)

        await self.store.run(build)

    async def user_stats(self, user: int) -> UserStats:
        """Per variant: ``games``, ``losses``, ``draws`` and ``p<place>`` counts."""
        raw = cast(
            "dict[bytes, bytes]", await self.store.one(lambda p: p.hgetall(self.keys.stats(user)))
        )
        out: dict[str, dict[str, int]] = {}
        for f, val in raw.items():
            if f.startswith(b"@"):  # the last game counted (RECORD_LUA)
                continue
            variant, what = f.decode().split(":", 1)
            out.setdefault(variant, {})[what] = int(val)
        return UserStats(out)

    async def leaderboard(
        self, chat: int, variant: str | None = None, limit: int = 10
    ) -> list[LeaderboardEntry]:
        """The chat's players, best first: most games not lost, then fewest losses."""
        raw = cast(
            "dict[bytes, bytes]", await self.store.one(lambda p: p.hgetall(self.keys.top(chat)))
        )
        rows: dict[int, dict[str, Any]] = {}
        for f, val in raw.items():
            if f.startswith(b"@"):  # the last game counted (RECORD_LUA)
                continue
            parts = f.decode().split(":")
            user = int(parts[0])
            row = rows.setdefault(user, {"name": "", "games": 0, "losses": 0, "draws": 0})
            if parts[1] == "name":
                row["name"] = val.decode()
            elif variant is None or parts[1] == variant:
                row[parts[2]] += int(val)
        board = [LeaderboardEntry(user=u, **r) for u, r in rows.items() if r["games"]]
        board.sort(key=lambda r: (-r.wins, r.losses, -r.games, r.user))
        return board[:limit]
