"""The results part: stats of finished games.  When a write ends a game (exactly
one write can), the result is stored in the table (``res``) in that same
compare-and-set; then :meth:`Results.record` adds it to the per-user stats, the
chat's leaderboard and the finished-games index in one pipelined round trip.
Stats keys expire after ``stats_ttl`` without games."""

from __future__ import annotations

from typing import Any, cast

from engine.live.model import LiveConfig
from engine.live.records import GameResult, LeaderboardEntry, UserStats
from engine.live.store import Store

FINISHED_WINDOW_MS = 7 * 86400 * 1000


class Results:
    def __init__(self, store: Store, config: LiveConfig) -> None:
        self.store = store
        self.keys = store.keys
        self.config = config

    async def record(self, result: GameResult) -> None:
        """Count a finished game for its human players and in its chat's board."""
        k = self.keys
        v = result.variant
        ttl = int(self.config.stats_ttl * 1000)
        now = result.at

        def build(p: Any) -> None:
            for seat, (user, name) in enumerate(result.seats):
                if user is None:
                    continue
                place = result.places[seat]
                lost = result.loser == seat
                sk = k.stats(user)
                p.hincrby(sk, f"{v}:games", 1)
                p.hincrby(sk, f"{v}:p{place}", 1)
                if lost:
                    p.hincrby(sk, f"{v}:losses", 1)
                if result.draw:
                    p.hincrby(sk, f"{v}:draws", 1)
                p.pexpire(sk, ttl)
                if result.chat is not None:
                    tk = k.top(result.chat)
                    p.hincrby(tk, f"{user}:{v}:games", 1)
                    if lost:
                        p.hincrby(tk, f"{user}:{v}:losses", 1)
                    if result.draw:
                        p.hincrby(tk, f"{user}:{v}:draws", 1)
                    p.hset(tk, f"{user}:name", name)
                    p.pexpire(tk, ttl)
            p.zadd(k.finished, {f"{result.table}:{result.game}:{v}": now})
            p.zremrangebyscore(k.finished, "-inf", now - FINISHED_WINDOW_MS)

        await self.store.run(build)

    async def user_stats(self, user: int) -> UserStats:
        """Per variant: ``games``, ``losses``, ``draws`` and ``p<place>`` counts."""
        raw = cast(
            "dict[bytes, bytes]", await self.store.one(lambda p: p.hgetall(self.keys.stats(user)))
        )
        out: dict[str, dict[str, int]] = {}
        for f, val in raw.items():
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
