"""The ratings log replayed (#25, #38): every counted rated game the logs
keep, and :meth:`RatingLog.recompute` -- the stored ratings compared with a
replay of the logs (``python -m tables recompute-ratings``).  The keys are
those of :class:`tables.ratings.Ratings` (see its module), which owns this."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, cast

from tables.rating_model import LOG_SHARDS, Rating, Recomputed, rate
from tables.rating_rules import moves, ranks
from tables.records import GameResult
from tables.store import Store, text


class RatingLog:
    """Reads and replays the ratings log: the log of before #38
    (``legacy_log_key``), the shards since (``log_key_of``), against the stored
    ratings (``rating_key``)."""

    def __init__(
        self,
        store: Store,
        legacy_log_key: str,
        log_key_of: Callable[[int], str],
        rating_key: Callable[[int], str],
    ) -> None:
        self.store = store
        self.legacy_log_key = legacy_log_key
        self.log_key_of = log_key_of
        self.rating_key = rating_key

    async def entries(self, batch: int = 500) -> list[dict[str, Any]]:
        """Every counted rated game the logs keep: the log of before #38 first
        (in settling order), then each shard's (each in its settling order)."""
        out: list[dict[str, Any]] = []
        keys = [self.legacy_log_key] + [self.log_key_of(k) for k in range(LOG_SHARDS)]
        for key in keys:
            start = "-"
            while True:
                rows = await self.page(key, start, batch)
                for _id, fields in rows:
                    f = {text(k): v for k, v in fields.items()}
                    out.append(cast("dict[str, Any]", json.loads(f["g"])))
                if len(rows) < batch:
                    break
                last = text(rows[-1][0])
                ms, _, seq = last.partition("-")
                start = f"{ms}-{int(seq) + 1}"
        return out

    async def page(self, key: str, start: str, count: int) -> list[Any]:
        return cast(
            "list[Any]",
            await self.store.one(lambda p: p.xrange(key, min=start, max="+", count=count)),
        )

    async def _trimmed(self) -> bool:
        """Whether a log shard dropped entries (``MAXLEN``): the oldest kept
        entry of a player is then where his replay starts."""
        keys = [self.log_key_of(k) for k in range(LOG_SHARDS)]

        def build(p: Any) -> None:
            for k in keys:
                p.exists(k)
            for k in keys:
                p.xlen(k)

        got = await self.store.run(build)
        for k, there, n in zip(keys, got[: len(keys)], got[len(keys) :], strict=True):
            if not there:
                continue
            info = await self._stream_info(k)
            added = info.get("entries-added", info.get(b"entries-added", n))
            if int(added) > int(n):
                return True
        return False

    async def _stream_info(self, key: str) -> dict[Any, Any]:
        return cast("dict[Any, Any]", await self.store.one(lambda p: p.xinfo_stream(key)))

    async def recompute(self) -> Recomputed:
        """Replay the logs and compare with the stored ratings: equal, to the
        last bit, when every rating moved through :meth:`settle`.

        The log of before #38 is replayed from the default ratings in its
        order.  Each entry since records the ratings (and revs) it was computed
        from; a player's entries are replayed in the order of his rev, each
        from the last one's result (the ratings it records must be those), the
        first from the default or the old log's result -- or, once a shard was
        trimmed, from the ratings the oldest kept entry records."""
        replayed: dict[tuple[int, str], Rating] = {}
        entries = await self.entries()
        bad: list[tuple[int, str, Rating, Rating]] = []
        chains: dict[tuple[int, str], list[tuple[int, Rating, Rating]]] = {}
        for e in entries:
            result = GameResult.from_json(e["result"])
            if "b" not in e:  # before #38: every human moved, in the log's order
                order = ranks(result)
                seats = sorted(order)
                users = [cast(int, result.seats[s][0]) for s in seats]
                before = [replayed.get((u, result.variant), Rating()) for u in users]
                for u, a in zip(users, rate(before, [order[s] for s in seats]), strict=True):
                    replayed[(u, result.variant)] = a
                continue
            held = {int(u): (Rating(float(m), float(s), int(g)), int(rev))
                    for u, (m, s, g, rev) in e["b"].items()}  # fmt: skip
            after = moves(result, {u: b for u, (b, _r) in held.items()}, e.get("capped", ()))
            for u, a in after.items():
                b, rev = held[u]
                chains.setdefault((u, result.variant), []).append((rev, b, a))
        trimmed = await self._trimmed() if chains else False
        for key, steps in chains.items():
            steps.sort(key=lambda x: x[0])
            cur = replayed.get(key, Rating())
            for i, (_rev, b, a) in enumerate(steps):
                if b != cur and not (i == 0 and trimmed):
                    bad.append((key[0], key[1], b, cur))  # recorded, replayed
                cur = a
            replayed[key] = cur
        keys = sorted(replayed)
        stored = await self.store.run(
            lambda p: [p.hget(self.rating_key(u), v) for u, v in keys]
        ) if keys else []  # fmt: skip
        for (u, v), raw in zip(keys, stored, strict=True):
            have = Rating.from_json(raw)
            want = replayed[(u, v)]
            if have != want or raw is None:
                bad.append((u, v, have, want))
        return Recomputed(len(entries), len({u for u, _ in keys}), tuple(bad))


__all__ = ["RatingLog"]
