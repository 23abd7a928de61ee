"""``python -m tables migrate-ratings`` (#38): the rating data of before the
per-player slots -- every key in the one hash tag ``{rt}`` -- moved to each
player's own slot (``{ru:<user>}``, :mod:`tables.ratings`).  Run it once on
upgrade, before the new bot and admin API serve (docs/RATINGS.md); running it
again is harmless: a player already in his own slot is not copied again.

What it moves, per player: his rating hash (with ``played`` and ``first``,
the rule of established accounts: his games kept for reliability or rated,
whichever is more; his oldest history entry), reliability, history, offences
cooldown and leaves charged but not settled yet (each with its TTL); the pairs of the farming guard, into the
lower player's slot.  What stays: the leaderboards (their keys did not move),
the settlements of the last 8 days (read where they are: a game settled before
is never settled again) and the old log (``recompute-ratings`` replays it
first).  The moved keys are deleted unless ``keep``."""

from __future__ import annotations

import json

from tables.service import TableService
from tables.store import text


async def migrate_ratings(svc: TableService, *, keep: bool = False) -> dict[str, int]:
    """Move the old ``{rt}`` per-player keys; what was moved (players, pairs)
    and left in place (settlements, log entries)."""
    ratings = svc.ratings
    store = svc.store
    old = ratings.base
    now = svc.tables.now_ms()
    users: set[int] = set()
    pairs: list[tuple[int, int]] = []
    games = 0
    async for raw in store.r.scan_iter(match=f"{old}:*", count=1000):
        rest = text(raw)[len(old) + 1 :]
        kind, _, tail = rest.partition(":")
        if kind == "r":
            users.add(int(tail))
        elif kind == "pair":
            lo, _, hi = tail.partition(":")
            pairs.append((int(lo), int(hi)))
        elif kind == "g":
            games += 1
    moved = 0
    for user in sorted(users):
        moved += await _move_user(svc, user, now, keep)
    for a, b in pairs:
        src = f"{old}:pair:{a}:{b}"
        await _copy(svc, src, ratings._pair_key(a, b))
        if not keep:
            await _drop(svc, src)
    entries = await store.one(lambda p: p.xlen(ratings.legacy_log_key))
    return {"players": moved, "pairs": len(pairs), "games": games, "log": int(entries)}


async def _drop(svc: TableService, *keys: str) -> None:
    await svc.store.one(lambda p: p.delete(*keys))


async def _copy(svc: TableService, src: str, dst: str) -> bool:
    """``src`` to ``dst`` with its TTL, unless ``dst`` exists (a slot to
    another: DUMP and RESTORE)."""
    dump, ttl = await svc.store.run(lambda p: [p.dump(src), p.pttl(src)])
    if dump is None:
        return False
    there = await svc.store.one(lambda p: p.exists(dst))
    if there:
        return False
    await svc.store.one(lambda p: p.restore(dst, max(0, int(ttl)), dump))
    return True


async def _move_user(svc: TableService, user: int, now: int, keep: bool) -> int:
    ratings = svc.ratings
    old = f"{ratings.base}"
    new_r, new_rel, new_off, new_cool, new_h, _done, _donez, new_pend = ratings._user_keys(user)
    src = {
        "r": f"{old}:r:{user}",
        "rel": f"{old}:rel:{user}",
        "off": f"{old}:off:{user}",
        "cool": f"{old}:cool:{user}",
        "h": f"{old}:h:{user}",
        "pend": f"{old}:pend:{user}",
    }
    done = bool(await svc.store.one(lambda p: p.exists(new_r)))
    if not done:
        moves = (("rel", new_rel), ("off", new_off), ("cool", new_cool), ("h", new_h),
                 ("pend", new_pend))  # fmt: skip
        for what, dst in moves:
            await _copy(svc, src[what], dst)
        fields, rel, oldest = await svc.store.run(
            lambda p: [p.hgetall(src["r"]), p.llen(src["rel"]), p.lindex(src["h"], -1)]
        )
        f = {text(k): text(v) for k, v in fields.items()}
        games = 0
        for k, v in f.items():
            if k in ("chuvash", "shchelkovsky"):
                games += int(json.loads(v)[2])
        first = now
        if oldest is not None:
            first = int(json.loads(oldest).get("at", now))
        mapping = {**f, "played": str(max(int(rel), games)), "first": str(first)}
        items = [x for kv in mapping.items() for x in kv]
        await svc.store.one(lambda p: p.hset(new_r, items=items))
    if not keep:
        await _drop(svc, *src.values())
    return 0 if done else 1
