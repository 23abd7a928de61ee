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
first).  The moved keys are deleted unless ``keep``.

Then (#38, the opponent-diversity guard) each player's recent opponents
(``{ru:<user>}:opp``, written by each settlement since the guard) are filled
from the games of the last ``diversity_days`` the service recorded before
(:func:`backfill_opponents`): else every player would stop counting against
everyone for up to that long after the upgrade."""

from __future__ import annotations

import json
from typing import Any, Protocol

from tables.rating_model import LOG_SHARDS
from tables.rating_rules import opponents_met
from tables.rating_scripts import OPPONENTS_LUA
from tables.ratings import Ratings
from tables.records import GameResult
from tables.store import Store, text
from tables.tables import Tables


class Upgradable(Protocol):
    """What the migration needs of :class:`tables.service.TableService` (which
    calls it at a bot's start: no import of it here, no cycle)."""

    ratings: Ratings
    store: Store
    tables: Tables


async def migrate_ratings(svc: Upgradable, *, keep: bool = False) -> dict[str, int]:
    """Move the old ``{rt}`` per-player keys; what was moved (players, pairs)
    and left in place (settlements, log entries)."""
    ratings = svc.ratings
    store = svc.store
    old = ratings.base
    keys = ratings.keys
    now = svc.tables.now_ms()
    users: set[int] = set()
    pairs: list[tuple[int, int]] = []
    games = 0
    async for raw in store.r.scan_iter(match=keys.legacy_pattern, count=1000):
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
        src = keys.legacy_pair(a, b)
        await _copy(svc, src, ratings._pair_key(a, b))
        if not keep:
            await _drop(svc, src)
    entries = await store.one(lambda p: p.xlen(ratings.legacy_log_key))
    filled = await backfill_opponents(svc)
    return {"players": moved, "pairs": len(pairs), "games": games, "log": int(entries), **filled}


async def backfill_opponents(svc: Upgradable, *, batch: int = 200) -> dict[str, int]:
    """#38: fill each player's opponents (``{ru:<user>}:opp``) from the games
    that finished in the last ``diversity_days`` (by the service's clock),
    as the settlements write them (:func:`tables.rating_rules.opponents_met`:
    every other human of the game, none for a player whose seat the AI
    played at the end), each at his latest game with him, the latest
    ``opponents_kept``, expiring when the newest leaves the window
    (:data:`tables.rating_scripts.OPPONENTS_LUA`, one player's key at a time:
    his own slot).  What a settlement wrote since stays; run again, it writes
    nothing.

    The games: each finished game's record (``P rec:<table>:<game>``, kept
    ``replay_ttl``: its result names the seats, who walked away and the time;
    casual games too), found through the finished-games index (``P
    finished``, 7 days); then the ratings logs (the one of before the
    per-player slots, and each shard's) for a counted rated game whose
    record is gone (its log no longer held its start).  A casual game without
    a record, or older than ``replay_ttl``, is not known; a record written
    before the ratings (#25) does not say who walked away: such a game
    counts for everyone in it.  What it filled:
    the games of two humans or more read (``opp_games``), the players whose
    opponents it added to (``opp_players``) and the opponents added or moved
    to a later game (``opponents``)."""
    ratings = svc.ratings
    rules = ratings.rules
    out = {"opp_games": 0, "opp_players": 0, "opponents": 0}
    window = rules.opponents_window
    if not window:  # RATED_DIVERSITY_DAYS=0: no opponents are kept
        return out
    now = svc.tables.now_ms()
    since = now - window
    games: dict[tuple[str, int], GameResult] = {}
    for res in await _recorded(svc, since, batch) + await _logged(svc, since, batch):
        games.setdefault((res.table, res.game), res)
    met: dict[int, dict[int, int]] = {}
    for res in games.values():
        them = opponents_met(res)
        if res.at <= since or len(them) < 2:  # out of the window; a solo game
            continue
        out["opp_games"] += 1
        for user, others in them.items():
            mine = met.setdefault(user, {})
            for other in others:
                mine[other] = max(mine.get(other, res.at), res.at)
    script = svc.store.script(OPPONENTS_LUA)
    most = rules.opponents_kept
    for user in sorted(met):
        latest = sorted(met[user].items(), key=lambda x: (-x[1], x[0]))[:most]
        if not latest:  # he walked away from every game of his
            continue
        args: list[str | int | float] = [now, window, most]
        args += [x for other, ms in latest for x in (other, ms)]
        kept = int(await script([ratings.opponents_key(user)], args))
        out["opp_players"] += bool(kept)
        out["opponents"] += kept
    return out


def _result_of(raw: Any) -> GameResult | None:
    """The result in a game's record or a log entry (None: none readable)."""
    try:
        return GameResult.from_json(json.loads(raw)["result"])
    except (ValueError, KeyError, TypeError):
        return None


async def _recorded(svc: Upgradable, since: int, batch: int) -> list[GameResult]:
    """The results of the finished games the index lists after ``since``
    whose record is kept (every game: solo, casual and rated)."""
    keys = svc.store.keys
    out: list[GameResult] = []
    start = 0
    while True:

        def page(p: Any, at: int = start) -> Any:
            return p.zrangebyscore(keys.finished, f"({since}", "+inf", start=at, num=batch)

        members = await svc.store.one(page)
        games = []
        for m in members:
            tid, game, _variant = text(m).rsplit(":", 2)
            games.append(keys.record(tid, int(game)))

        def build(p: Any, games: list[str] = games) -> None:
            for key in games:
                p.get(key)

        if games:
            for raw in await svc.store.run(build):
                res = _result_of(raw) if raw is not None else None
                if res is not None:
                    out.append(res)
        if len(members) < batch:
            return out
        start += batch


async def _logged(svc: Upgradable, since: int, batch: int) -> list[GameResult]:
    """The counted rated games the ratings logs keep from about ``since`` on
    (a day earlier: the entries' ids are Redis' clock)."""
    ratings = svc.ratings
    out: list[GameResult] = []
    keys = [ratings.legacy_log_key] + [ratings.log_key_of(k) for k in range(LOG_SHARDS)]
    for key in keys:
        start = str(max(0, since - 86_400_000))
        while True:
            rows = await ratings.log.page(key, start, batch)
            for _id, fields in rows:
                f = {text(k): v for k, v in fields.items()}
                res = _result_of(f["g"]) if "g" in f else None
                if res is not None:
                    out.append(res)
            if len(rows) < batch:
                break
            ms, _, seq = text(rows[-1][0]).partition("-")
            start = f"{ms}-{int(seq) + 1}"
    return out


async def _drop(svc: Upgradable, *keys: str) -> None:
    await svc.store.one(lambda p: p.delete(*keys))


async def _copy(svc: Upgradable, src: str, dst: str) -> bool:
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


async def _move_user(svc: Upgradable, user: int, now: int, keep: bool) -> int:
    ratings = svc.ratings
    new_r, new_rel, new_off, new_cool, new_h, _done, _donez, new_pend = ratings._user_keys(user)
    src = ratings.keys.legacy_user(user)
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
