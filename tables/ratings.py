"""The ratings' store (#25, #38): a rating per player and variant,
reliability, offences and cooldowns in Redis, each finished game settled
into them once.  What it stores is decided elsewhere, pure: the maths and
values in :mod:`tables.rating_model`, who counts against whom and each
player's part in :mod:`tables.rating_rules`, what is an offence in
:mod:`tables.fairplay`; the scripts are :mod:`tables.rating_scripts`, the
log's replay :mod:`tables.rating_log`.  ``docs/RATINGS.md`` explains it in
plain words.

**Exactly once, across slots (#38).**  Each player's data is in his own hash
tag ``{ru:<user>}`` (a cluster spreads them), so a game is settled in steps,
each exactly once and each retryable (:meth:`Ratings.settle`; the scripts are
in :mod:`tables.rating_scripts`):

1. ``begin`` (:data:`GAME_LUA`, the game's key, in its log shard's slot): one
   attempt at a time, leased (:attr:`RatingRules.lease`, Redis' own clock); a
   settled game answers its settlement, a committed one is completed.
2. ``hold`` each player whose rating may move, in user order
   (:data:`CLAIM_LUA`: his ``lock`` = ``<game>|<attempt>``; his rev, rating and
   pairs' counts read): nothing else moves his rating meanwhile.  A player
   held by another game: its committed plan is completed first; its attempt,
   once its lease ran out, is aborted (in its own slot, so it can no longer
   commit) and the player taken over (the lock compare-and-set on its value);
   else waited for.  In user order, two live settlements never wait in a ring.
3. ``commit`` the plan (every player's part, computed from what was held).
   From then on anyone completes it:
4. each player's part (:data:`APPLY_LUA`, his slot): once, remembered among
   his settled games (``done``); his rating only if his ``lock`` and ``rev``
   are still those of the plan; the leaderboards after (:data:`BOARD_LUA`:
   a late write of an older move never overwrites a newer one);
5. ``finish``: the log entry appended and the settlement written, once.

A fault between two steps leaves a state the next try (the table's own
follow-up, the sweep, or another game of one of its players) carries on from.

**The log** is :data:`LOG_SHARDS` streams by table, each ``MAXLEN ~``
:attr:`RatingRules.log_maxlen`.  An entry records the game's result, the
capped pairs and the rating and rev each player moved from; so
:meth:`Ratings.recompute` replays each player's entries in his rev order, each
from the previous one's result, and compares the end with his stored rating;
once a stream was trimmed, a player's oldest kept entry is where his replay
starts.  The one log of before #38 (``P{rt}:log``, no longer written) is
replayed first, from the defaults.

The keys (``P{ru:<user>}`` a player's, ``P{rl:<k>}`` a log shard's, ``P{rt}``
the leaderboards') are spelled and described in :class:`tables.keys.RatingKeys`.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any, cast

from engine.clock import Clock
from tables.keys import RatingKeys
from tables.model import ServiceUnavailable
from tables.rating_log import RatingLog
from tables.rating_model import (  # noqa: F401 (re-exported: the ratings part's names)
    _MODEL,
    DEFAULT_MU,
    DEFAULT_SIGMA,
    LOG_SHARDS,
    PROVISIONAL_SIGMA,
    VARIANTS,
    BoardRow,
    Change,
    Eligibility,
    PlayerRatings,
    Rating,
    Recomputed,
    Settlement,
    provisional,
    rate,
    shown,
)
from tables.rating_rules import (  # noqa: F401 (re-exported)
    RatingRules,
    candidates,
    moves,
    opponents_met,
    outcome,
    pair_of,
    ranks,
    settlement_plan,
)
from tables.rating_scripts import APPLY_LUA, BOARD_LUA, CHARGE_LUA, CLAIM_LUA, GAME_LUA
from tables.records import GameResult
from tables.store import Store, text


def _settlement(fields: Mapping[Any, Any]) -> Settlement:
    """A game's key as settled: ``s`` the settlement, and ``o:<user>`` the
    cooldown (ms) each offence set."""
    f = {text(k): text(v) for k, v in fields.items()}
    s = Settlement.from_json(json.loads(f["s"]))
    offences = {int(k[2:]): int(v) / 1000 for k, v in f.items() if k.startswith("o:")}
    return replace(s, offences=offences) if offences else s


_pair = pair_of


class Ratings:
    """Settles finished games into ratings and answers the reads (#25)."""

    def __init__(
        self,
        store: Store,
        prefix: str,
        rules: RatingRules | None = None,
        clock: Clock = time.time,
    ) -> None:
        self.store = store
        self.rules = rules or RatingRules()
        self.clock = clock
        """Now, for the reads that depend on it (the offences in the window)."""
        self.prefix = prefix
        self.keys = RatingKeys(prefix)
        self.base = self.keys.base
        """The one slot of the leaderboards (and of the data before #38)."""
        self._claim = store.script(CLAIM_LUA)
        self._game = store.script(GAME_LUA)
        self._apply = store.script(APPLY_LUA)
        self._board = store.script(BOARD_LUA)
        self._charge = store.script(CHARGE_LUA)
        self.log = RatingLog(store, self.legacy_log_key, self.log_key_of, self.rating_key)
        """The ratings log, replayed (``recompute-ratings``)."""
        self.pause = 0.02
        """Seconds between two looks at a player another game's settlement holds."""
        self.patience = 5.0
        """Seconds a settlement waits for another's live attempt before it
        gives its own up for now (its table's timer tries again): the move
        that ended the game is not held up for a whole lease."""

    # ---------------------------------------------------------------- keys
    # (spelled in :class:`tables.keys.RatingKeys`)
    def user_base(self, user: int) -> str:
        """The slot of one player's rating data (#38: one slot each)."""
        return self.keys.user_base(user)

    def rating_key(self, user: int) -> str:
        return self.keys.rating(user)

    def _user_keys(self, user: int) -> list[str]:
        return self.keys.user_keys(user)

    def log_shard(self, table: str) -> int:
        return zlib.crc32(table.encode()) % LOG_SHARDS

    def game_key(self, table: str, game: int) -> str:
        """A game's settlement, beside the log stream it is appended to."""
        return self.keys.game(self.log_shard(table), table, game)

    def legacy_game_key(self, table: str, game: int) -> str:
        """Where a game was settled before #38 (read, never written)."""
        return self.keys.legacy_game(table, game)

    def log_key_of(self, shard: int) -> str:
        return self.keys.log(shard)

    @property
    def log_key(self) -> str:
        """The log stream of shard 0."""
        return self.log_key_of(0)

    @property
    def legacy_log_key(self) -> str:
        """The one log before #38: kept, replayed first, never written."""
        return self.keys.legacy_log

    def board_key(self, variant: str, provisional: bool = False) -> str:
        return self.keys.board(variant, provisional)

    def _board_rev_key(self, variant: str) -> str:
        return self.keys.board_rev(variant)

    def opponents_key(self, user: int) -> str:
        """#38: the people he finished games with lately (zset user -> ms)."""
        return self.keys.opponents(user)

    async def opponents(self, user: int, now_ms: int) -> set[int]:
        """The people he finished games with in the diversity window before
        ``now_ms`` (#38; empty when no opponents are kept)."""
        window = self.rules.opponents_window
        if not window:
            return set()
        key = self.opponents_key(user)
        raw = await self.store.one(lambda p: p.zrangebyscore(key, f"({now_ms - window}", "+inf"))
        return {int(text(x)) for x in raw}

    def _pair_key(self, a: int, b: int) -> str:
        """The two's counted rated games in the window: in the lower one's slot."""
        return self.keys.pair(*_pair(a, b))

    # ---------------------------------------------------------- eligibility
    async def eligibility(self, users: Iterable[int], now_ms: int) -> Eligibility:
        """#38, at a rated game's start: the ``users`` whose account is not
        established (:meth:`RatingRules.established`); the pairs of the
        others (lower first) whose counted rated games of the last 24 h
        reached :attr:`RatingRules.pair_daily`; and, of the remaining pairs,
        those where one of the two finished games with fewer than
        :attr:`RatingRules.diversity_opponents` other people besides the
        other one in the diversity window (:meth:`RatingRules.diverse`)."""
        us = sorted(set(users))
        if not us:
            return Eligibility()
        pairs = [(a, b) for i, a in enumerate(us) for b in us[i + 1 :]]
        since = now_ms - 86_400_000
        rules = self.rules
        seen = now_ms - rules.opponents_window
        look = rules.diversity and bool(pairs)
        raw = await self.store.run(
            lambda p: (
                [p.hmget(self.rating_key(u), "first", "played") for u in us]
                + [p.zcount(self._pair_key(a, b), f"({since}", "+inf") for a, b in pairs]
                + (
                    [p.zrangebyscore(self.opponents_key(u), f"({seen}", "+inf") for u in us]
                    if look
                    else []
                )
            )
        )
        fresh = []
        for u, (first, played) in zip(us, raw[: len(us)], strict=True):
            f = int(text(first)) if first is not None else None
            if not rules.established(f, int(text(played)) if played else 0, now_ms):
                fresh.append(u)
        counts = raw[len(us) : len(us) + len(pairs)]
        capped = tuple(
            (a, b)
            for (a, b), n in zip(pairs, counts, strict=True)
            if int(n) >= rules.pair_daily and a not in fresh and b not in fresh
        )
        opp: dict[int, set[int]] = {}
        if look:
            for u, got in zip(us, raw[len(us) + len(pairs) :], strict=True):
                opp[u] = {int(text(x)) for x in got}
        narrow = tuple(
            (a, b)
            for a, b in pairs
            if look
            and a not in fresh
            and b not in fresh
            and (a, b) not in capped
            and not (rules.diverse(opp[a], b) and rules.diverse(opp[b], a))
        )
        return Eligibility(tuple(fresh), capped, narrow)

    # -------------------------------------------------------------- settle
    async def settle(self, result: GameResult, now_ms: int | None = None) -> Settlement | None:
        """Count ``result`` once: ratings (of those whose game was rated),
        reliability, offences.  None for a game of fewer than two humans (a
        solo game against the AI writes no rating data, #38).  A second call
        (another process, a retry) answers the first's settlement and changes
        nothing.

        #38: each player's data is in his own slot, so a game is settled in
        steps, each exactly once: the game's attempt is begun (its own slot,
        leased), each player whose rating may move is held (:data:`CLAIM_LUA`,
        in user order: two settlements never wait for each other in a ring),
        the plan is computed from what was read and committed; from then on
        anyone completes it -- each player's part once (:data:`APPLY_LUA`),
        then the log entry and the settlement once (``finish``).  A player
        held by another game's attempt is waited for, taken over when its
        lease ran out, or its committed plan completed first."""
        humans = [(s, u, name) for s, (u, name) in enumerate(result.seats) if u is not None]
        if len(humans) < 2:
            return None
        gid = f"{result.table}:{result.game}"
        gkey = self.game_key(result.table, result.game)
        shard_log = self.log_key_of(self.log_shard(result.table))
        for _ in range(int(self.patience / self.pause) + 10):
            new, old = await self.store.run(
                lambda p: [
                    p.hgetall(gkey),
                    p.hgetall(self.legacy_game_key(result.table, result.game)),
                ]
            )
            new = {text(k): v for k, v in cast("dict[Any, Any]", new).items()}
            if "s" in new:
                return _settlement(new)
            if old:
                return _settlement(old)
            token = secrets.token_hex(6)
            lease = int(self.rules.lease * 1000)
            ttl = int(self.rules.game_ttl * 1000)
            begun = await self._game([gkey, shard_log], ["begin", token, lease, ttl])
            what = text(begun[0])
            if what == "busy":  # another process settles it right now
                await asyncio.sleep(self.pause)
                continue
            if what == "committed":
                return await self._complete(json.loads(text(begun[1])))
            if what == "settled":
                continue
            plan = await self._plan(result, humans, gid, token, now_ms)
            if plan is None:  # a player stayed held by another game
                await self._game([gkey, shard_log], ["yield", token])
                raise ServiceUnavailable(f"ratings of {gid}: a player is held, try again")
            done = await self._game([gkey, shard_log], ["commit", token, json.dumps(plan)])
            if text(done[0]) != "ok":
                continue  # our attempt was taken over: look again
            return await self._complete(plan)
        raise ServiceUnavailable(f"ratings of {gid}: too many lost races")

    async def _plan(
        self,
        result: GameResult,
        humans: list[tuple[int, int, str]],
        gid: str,
        token: str,
        now_ms: int | None,
    ) -> dict[str, Any] | None:
        """Hold the players whose rating may move, read them, and compute every
        player's part (None: one stayed held by another game meanwhile).  The
        rules are :mod:`tables.rating_rules`; this only reads and holds."""
        now = result.at if now_ms is None else now_ms
        cand = candidates(result, humans)
        held: dict[int, tuple[str, Rating]] = {}
        capped = set(cand.start_capped)
        since = now - 86_400_000
        for u in cand.to_hold():
            his = [v for v in cand.partners[u] if v > u]
            keys = [self.rating_key(u), self._user_keys(u)[5]] + [self._pair_key(u, v) for v in his]
            got = await self._hold(u, keys, gid, token, result.variant, since)
            if got is None:
                return None
            rev, raw, counts = got
            held[u] = (rev, Rating.from_json(raw or None))
            for v, n in zip(his, counts, strict=True):
                if int(n) >= self.rules.pair_daily:  # the guard, strictly (#38)
                    capped.add((u, v))
        after = outcome(result, cand, {u: b for u, (_rev, b) in held.items()}, capped)
        rest = [u for _, u, _ in humans if u not in held]
        shown_only = await self.many(rest, result.variant) if after and rest else {}
        return settlement_plan(
            result, humans, cand, held, capped, after, shown_only, gid, token, now
        )

    async def _hold(
        self, user: int, keys: list[str], gid: str, token: str, variant: str, since: int
    ) -> tuple[str, str, list[Any]] | None:
        """:data:`CLAIM_LUA` for one player, waiting (up to the lease) while
        another game's live attempt holds him."""
        steal = ""
        for _ in range(int(self.patience / self.pause) + 1):
            got = await self._claim(keys, [gid, token, variant, since, steal])
            what = text(got[0])
            if what == "ok":
                return text(got[1]), text(got[2]), list(got[3:])
            if what == "done":
                raise ServiceUnavailable(f"ratings of {gid}: user {user} settled, plan not seen")
            lock = text(got[1])
            other, _, other_token = lock.rpartition("|")
            table, _, game = other.rpartition(":")
            okey = self.game_key(table, int(game))
            look = await self._game(
                [okey, self.log_key_of(self.log_shard(table))], ["abort", other_token]
            )
            seen = text(look[0])
            if seen == "committed":
                await self._complete(json.loads(text(look[1])))  # his part, and the rest
                steal = ""
            elif seen == "free":
                steal = lock  # its attempt was given up: take him over
            else:
                steal = ""
                await asyncio.sleep(self.pause)
        return None

    async def _complete(self, plan: Mapping[str, Any]) -> Settlement:
        """Apply every player's part of a committed plan (each once), move the
        leaderboards, append the log entry and write the settlement (once)."""
        r = self.rules
        offences: list[str | int] = []
        boards: list[tuple[int, int, int, int]] = []
        for part in plan["parts"]:
            u = int(part["u"])
            keys = [*self._user_keys(u), self.opponents_key(u)]
            keys += [self._pair_key(u, v) for v in part["p"]]
            args: list[str | int | float] = [
                plan["gid"], plan["at"], plan["t"], part["m"], part["rev"], plan["v"], part["r"],
                part["c"], part["h"], part["n"], part["o"], *r.cooldown_args(),
                r.reliability_games, r.history, int(r.game_ttl * 1000), 86_400_000,
                r.opponents_window, r.opponents_kept,
                *part.get("x", ()),  # a plan of before the diversity guard: none
            ]  # fmt: skip
            got = await self._apply(keys, args)
            if text(got[0]) not in ("ok", "dup"):
                raise RuntimeError(f"ratings of {plan['gid']}: user {u}: {text(got[0])}")
            ms, _, rev = text(got[1]).partition("|")
            if part["o"] and int(ms) >= 0:
                offences += [f"o:{u}", int(ms)]
            if part["m"]:
                boards.append((u, int(rev), int(part["sh"]), int(part["pv"])))
        v = plan["v"]
        bkeys = [self.board_key(v), self.board_key(v, True), self._board_rev_key(v)]
        for u, moved, sh, pv in boards:
            await self._board(bkeys, [u, moved, sh, pv])
        table = plan["table"]
        gkey = self.game_key(table, int(plan["game"]))
        log = self.log_key_of(self.log_shard(table))
        fields: list[str | int] = ["s", json.dumps(plan["s"]), *offences]
        args2: list[str | int | float] = [
            "finish",
            plan["t"],
            plan["log"],
            r.log_maxlen,
            int(r.game_ttl * 1000),
            *fields,
        ]
        await self._game([gkey, log], args2)
        raw = await self.store.one(lambda p: p.hgetall(gkey))
        return _settlement(raw)

    def queue_settled(self, p: Any, table: str, game: int) -> int:
        """Queue on ``p`` the reads that say whether a game is settled (for
        :meth:`settled_of`); how many."""
        p.hexists(self.game_key(table, game), "s")
        p.exists(self.legacy_game_key(table, game))
        return 2

    @staticmethod
    def settled_of(replies: Sequence[Any]) -> bool:
        return bool(replies[0]) or bool(replies[1])

    async def charge_leave(self, table: str, game: int, user: int, now_ms: int) -> float | None:
        """``user`` left game ``game`` of ``table``, a rated game, of his own
        will: the offence now (#38), pending until the game's settlement
        confirms it or undoes it, and the cooldown it sets at once -- so the
        checks before a rated game (:meth:`cooldowns`) see it while the AI
        still plays his seat.  Once, keyed by the game and him: a retry, a
        second process or a leave of the same game again charges nothing
        more, nor does a game whose part of him is settled already (None; its
        settlement decided).  The cooldown (seconds) it set, 0: a warning."""
        _r, _rel, offk, coolk, _h, donek, _dz, pendk = self._user_keys(user)
        r = self.rules
        args: list[str | int | float] = [f"{table}:{game}", now_ms, *r.cooldown_args()]
        reply = await self._charge([donek, offk, pendk, coolk], args)
        if text(reply[0]) == "settled":
            return None
        return int(reply[1]) / 1000

    # --------------------------------------------------------------- reads
    async def settlement(self, table: str, game: int) -> Settlement | None:
        """How game ``game`` of ``table`` was settled (None: not yet, or long ago)."""
        new, old = await self.store.run(
            lambda p: [
                p.hgetall(self.game_key(table, game)),
                p.hgetall(self.legacy_game_key(table, game)),
            ]
        )
        new = {text(k): v for k, v in cast("dict[Any, Any]", new).items()}
        if "s" in new:
            return _settlement(new)
        return _settlement(old) if old else None

    async def of(self, user: int) -> PlayerRatings:
        """His ratings, reliability, cooldown and the offences of the window
        (``/rating`` and the admin API): those older than
        :attr:`RatingRules.offence_window` by :attr:`clock` are not counted
        (#38) -- the key keeps them until a newer offence trims it."""
        rk, relk, offk, coolk, *_ = self._user_keys(user)
        since = int(self.clock() * 1000) - int(self.rules.offence_window * 1000)
        raw, rel, off, cool = await self.store.run(
            lambda p: [
                p.hgetall(rk),
                p.lrange(relk, 0, -1),
                p.zcount(offk, f"({since}", "+inf"),
                p.get(coolk),
            ]
        )
        fields = {text(k): v for k, v in cast("dict[Any, Any]", raw).items()}
        ratings = {v: Rating.from_json(fields[v]) for v in VARIANTS if v in fields}
        marks = [text(x) for x in rel]
        until = int(json.loads(cool)["until"]) if cool is not None else None
        return PlayerRatings(
            user=user,
            name=text(fields.get("name", b"")),
            ratings=ratings,
            reliability=(marks.count("1") / len(marks)) if marks else None,
            recent=len(marks),
            cooldown_until=until,
            offences=int(off),
        )

    async def many(self, users: Iterable[int], variant: str) -> dict[int, Rating]:
        """The ratings in ``variant`` of ``users`` (the default for a new one)."""
        us = list(dict.fromkeys(users))
        if not us:
            return {}
        raw = await self.store.run(lambda p: [p.hget(self.rating_key(u), variant) for u in us])
        return {u: Rating.from_json(r) for u, r in zip(us, raw, strict=True)}

    async def labels(self, users: Iterable[int], variant: str) -> dict[int, str]:
        """Each user's rating as a seat shows it: ``"1240"``, ``"1010?"`` (provisional)."""
        return {u: r.label for u, r in (await self.many(users, variant)).items()}

    def _cool_key(self, user: int) -> str:
        return self._user_keys(user)[3]

    async def cooldowns(self, users: Iterable[int]) -> dict[int, int]:
        """The users in a cooldown from rated games now: user -> its end (ms)."""
        us = list(dict.fromkeys(users))
        if not us:
            return {}
        raw = await self.store.run(lambda p: [p.get(self._cool_key(u)) for u in us])
        return {u: int(json.loads(r)["until"]) for u, r in zip(us, raw, strict=True) if r}

    async def top(self, variant: str, limit: int = 20, provisional: bool = False) -> list[BoardRow]:
        """The global leaderboard: established players (or the provisional ones) best first."""
        key = self.board_key(variant, provisional)
        rows = await self.store.one(lambda p: p.zrevrange(key, 0, max(0, limit - 1)))
        users = [int(text(u)) for u in rows]
        return await self._rows(users, variant)

    async def board(self, users: Iterable[int], variant: str) -> list[BoardRow]:
        """``users`` ranked by their rating in ``variant`` (only those who have
        one), best first; provisional players after the established ones."""
        rows = await self._rows(list(dict.fromkeys(users)), variant)
        rows = [r for r in rows if r.games]
        rows.sort(key=lambda r: (r.provisional, -r.rating, r.user))
        return rows

    async def _rows(self, users: list[int], variant: str) -> list[BoardRow]:
        if not users:
            return []
        raw = await self.store.run(
            lambda p: [
                (p.hget(self.rating_key(u), variant), p.hget(self.rating_key(u), "name"))
                for u in users
            ]
        )
        out = []
        for i, u in enumerate(users):
            r = Rating.from_json(raw[2 * i])
            name = text(raw[2 * i + 1]) if raw[2 * i + 1] is not None else ""
            out.append(BoardRow(u, name, r.shown, r.provisional, r.games))
        return out

    async def history(self, user: int, limit: int = 50) -> list[dict[str, Any]]:
        key = self._user_keys(user)[4]
        rows = await self.store.one(lambda p: p.lrange(key, 0, max(0, limit - 1)))
        return [cast("dict[str, Any]", json.loads(x)) for x in rows]

    async def settled_games(self, user: int) -> int:
        """How many games his part of was settled (the last 8 days, #38): each
        game once, whatever the retries."""
        done = self._user_keys(user)[5]
        return int(await self.store.one(lambda p: p.hlen(done)))

    async def cooldown(self, user: int) -> int | None:
        """When his cooldown from rated games ends (epoch ms), None: none."""
        raw = await self.store.one(lambda p: p.get(self._cool_key(user)))
        return int(json.loads(raw)["until"]) if raw is not None else None

    async def lift_cooldown(self, user: int) -> bool:
        """End his cooldown and forget his offences (an operator's act): whether
        there was either.  His pending leaves stay marked as charged (#38):
        their settlement confirms nothing new, and a retried charge of them
        charges nothing -- a lifted offence does not come back."""
        _r, _rel, offk, coolk, *_ = self._user_keys(user)
        cool, offences = await self.store.run(lambda p: [p.delete(coolk), p.delete(offk)])
        return bool(cool or offences)

    # ---------------------------------------------------------- recompute
    async def log_entries(self, batch: int = 500) -> list[dict[str, Any]]:
        """Every counted rated game the logs keep (:meth:`RatingLog.entries`)."""
        return await self.log.entries(batch)

    async def recompute(self) -> Recomputed:
        """Replay the logs and compare with the stored ratings
        (:meth:`RatingLog.recompute`)."""
        return await self.log.recompute()


__all__ = [
    "DEFAULT_MU",
    "DEFAULT_SIGMA",
    "LOG_SHARDS",
    "PROVISIONAL_SIGMA",
    "VARIANTS",
    "BoardRow",
    "Change",
    "Eligibility",
    "PlayerRatings",
    "Rating",
    "RatingRules",
    "Ratings",
    "Recomputed",
    "Settlement",
    "moves",
    "pair_of",
    "provisional",
    "ranks",
    "rate",
    "shown",
]
