"""Results and stats.  When a write ends a game (exactly one write can), the
result is stored in the table (``res``) in that same compare-and-set; the
per-user stats, the chat's leaderboard and the finished-games index follow in
one pipelined round trip.  Stats keys expire after ``stats_ttl`` without games."""

from __future__ import annotations

from typing import Any, cast

from engine.live.lobbies import LobbyOps
from engine.live.model import Table

FINISHED_WINDOW_MS = 7 * 86400 * 1000


class ResultOps(LobbyOps):
    async def _record_result(self, table: Table, result: dict[str, Any]) -> None:
        k = self.keys
        v = result["variant"]
        ttl = int(self.config.stats_ttl * 1000)
        now = int(result["at"])
        self.store.round_trips += 1
        async with self.redis.pipeline(transaction=False) as p:
            for seat, (user, name) in enumerate(result["seats"]):
                if user is None:
                    continue
                place = result["places"][seat]
                lost = result["loser"] == seat
                drew = bool(result["draw"])
                sk = k.stats(user)
                p.hincrby(sk, f"{v}:games", 1)
                p.hincrby(sk, f"{v}:p{place}", 1)
                if lost:
                    p.hincrby(sk, f"{v}:losses", 1)
                if drew:
                    p.hincrby(sk, f"{v}:draws", 1)
                p.pexpire(sk, ttl)
                if result["chat"] is not None:
                    tk = k.top(result["chat"])
                    p.hincrby(tk, f"{user}:{v}:games", 1)
                    if lost:
                        p.hincrby(tk, f"{user}:{v}:losses", 1)
                    if drew:
                        p.hincrby(tk, f"{user}:{v}:draws", 1)
                    p.hset(tk, f"{user}:name", name)
                    p.pexpire(tk, ttl)
            p.zadd(k.finished, {f"{table.id}:{result['game']}:{v}": now})
            p.zremrangebyscore(k.finished, "-inf", now - FINISHED_WINDOW_MS)
            await p.execute()

    async def user_stats(self, user: int) -> dict[str, dict[str, int]]:
        """Per variant: ``games``, ``losses``, ``draws`` and ``p<place>`` counts."""
        self.store.round_trips += 1
        raw: dict[bytes, bytes] = cast(
            "dict[bytes, bytes]", await self.redis.hgetall(self.keys.stats(user))
        )
        out: dict[str, dict[str, int]] = {}
        for f, val in raw.items():
            variant, what = f.decode().split(":", 1)
            out.setdefault(variant, {})[what] = int(val)
        return out

    async def leaderboard(
        self, chat: int, variant: str | None = None, limit: int = 10
    ) -> list[dict[str, Any]]:
        """The chat's players, best first: most games not lost, then fewest losses.
        Each row: ``user``, ``name``, ``games``, ``losses``, ``draws``, ``wins``."""
        self.store.round_trips += 1
        raw: dict[bytes, bytes] = cast(
            "dict[bytes, bytes]", await self.redis.hgetall(self.keys.top(chat))
        )
        rows: dict[int, dict[str, Any]] = {}
        for f, val in raw.items():
            parts = f.decode().split(":")
            user = int(parts[0])
            row = rows.setdefault(
                user, {"user": user, "name": "", "games": 0, "losses": 0, "draws": 0}
            )
            if parts[1] == "name":
                row["name"] = val.decode()
            elif variant is None or parts[1] == variant:
                row[parts[2]] += int(val)
        table = [r for r in rows.values() if r["games"]]
        for r in table:
            r["wins"] = r["games"] - r["losses"] - r["draws"]
        table.sort(key=lambda r: (-r["wins"], r["losses"], -r["games"], r["user"]))
        return table[:limit]
