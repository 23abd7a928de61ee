"""The one store of the table service: a redis client with every round trip
counted (``round_trips``; the benchmark reads it) and every Redis failure
surfacing as :class:`tables.ServiceUnavailable` -- the boundary where
``redis`` errors stop.

Loading a table and its compare-and-set write are ONE round trip each
(:meth:`Store.load`, :meth:`Store.cas`, the script in :mod:`tables.scripts`);
the other parts queue their commands on one pipeline per round trip
(:meth:`Store.run`) or run a registered script (:meth:`Store.script`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

import redis.asyncio as aredis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import ClusterNode
from redis.exceptions import (
    ClusterDownError,
    NoScriptError,
    RedisClusterException,
    RedisError,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from tables.client import Client
from tables.keys import Keys
from tables.model import ServiceUnavailable
from tables.nodes import NodeHealth, command_keys
from tables.scripts import (
    CAS_LUA,
    LEASE_LUA,
    RELEASE_LUA,
    SETTLE_CLAIM_LUA,
    SHARD_TICK_LUA,
    SWAP_LUA,
)
from tables.wakes import FREE, TimerWakes, hint_message

# the failures after which a store is suspect (Store.ready probes first)
_OUTAGE = (
    RedisConnectionError,
    RedisTimeoutError,
    OSError,
    ClusterDownError,
    RedisClusterException,
)
# ... of a timer hint: owed, the write goes on without it (#40)
_HINT_OUTAGE = (*_OUTAGE, TryAgainError)
# ... and after which a cluster node is: CLUSTERDOWN is answered by a node that
# is up (the cluster's state is "fail"), asking it again is all there is to do
_NODE_DOWN = (RedisConnectionError, RedisTimeoutError, OSError)


@contextlib.contextmanager
def unavailable() -> Iterator[None]:
    """Turn a Redis or connection failure into :class:`ServiceUnavailable`."""
    try:
        yield
    # OSError: ConnectionError, TimeoutError; RedisClusterException (not a
    # RedisError): a cluster whose nodes cannot be reached or whose slots are
    # not covered
    except (RedisError, RedisClusterException, OSError) as e:
        raise ServiceUnavailable(f"Redis is unavailable: {e}") from e


OWED_RETRY_S = 0.25
"""How often a process writes again the timer hints it owes (#40: their
shard's master did not answer) until the shard answers."""

log = logging.getLogger(__name__)

SHARD_KEY_TTL_MS = 7 * 86_400_000
"""A timer shard's lease key outlives its lease by far: it remembers the shard's
last tick (``seen``) across a restart of the whole fleet (#28)."""


@dataclass
class ShardTick:
    """A timer shard ticked (:meth:`Store.tick_shard`): the hints claimed, and
    ``since`` -- when the shard came from another owner, the time (ms) of that
    owner's last tick (0: none known, or the shard was this owner's already);
    ``earliest``: the shard's earliest hint after the claims (ms; None: none,
    #39: the loop sleeps until then)."""

    due: list[str]
    since: int
    earliest: int | None = None
    repair: str = ""
    """A repair of the shard's hints is owed (#40): its token ('' none)."""


@dataclass
class CasOutcome:
    status: str  # "ok" | "stale" | "duplicate"
    version: int


class Script:
    """A Lua script registered on the store's client: ``await script(keys, args)``
    is one round trip (the client loads it once when Redis does not know it).

    On a Redis Cluster a script Redis does not know is loaded on the node that
    serves its keys only: redis-py loads it on every master, which fails while
    one of them is dead -- and a table on a healthy master answered "the game
    is unavailable" to its first use of a script there (#40)."""

    def __init__(self, store: Store, lua: str) -> None:
        self._store = store
        self._lua = lua
        self._script = store.r.register_script(lua)

    async def __call__(self, keys: Sequence[str], args: Sequence[str | bytes | int | float]) -> Any:
        nodes = await self._store.ready(keys)
        self._store.round_trips += 1
        with self._store.guard(nodes):
            if not nodes:  # one server (or no keys): redis-py's own way
                return await self._script(keys=list(keys), args=list(args))
            r, sha = self._store.r, self._script.sha
            try:
                return await r.evalsha(sha, len(keys), *keys, *args)
            except NoScriptError:
                await r.execute_command("SCRIPT LOAD", self._lua, target_nodes=nodes)
                self._store.round_trips += 1
                return await r.evalsha(sha, len(keys), *keys, *args)


class Store:
    """Round-trip-counted Redis operations on one client.

    After a connection error or a timeout the store is *suspect*: before each
    operation one short ``PING`` (``probe_timeout`` s) decides -- Redis answers: the operation goes on (so the first
    request after a restart succeeds) and the store is trusted again; it does
    not: :class:`ServiceUnavailable` at once, instead of every request of the
    outage waiting out its socket timeouts and retries (a SIGSTOPped Redis).
    On a Redis Cluster the suspects are nodes, not the store
    (:class:`tables.nodes.NodeHealth`, #28): only the operations whose keys
    live on a failed node wait or fail; a replica promoted in its place serves
    them as soon as the slot map names it."""

    def __init__(self, client: Client, keys: Keys, *, probe_timeout: float = 0.5) -> None:
        self.r = client
        self.cluster = isinstance(client, aredis.RedisCluster)
        self._uninitialised = self.cluster  # a RedisCluster learns its slot map first
        self.keys = keys
        self.round_trips = 0
        self.probe_timeout = probe_timeout
        self.suspect = False  # one server; a cluster's suspects are nodes (self.health)
        self.faults = 0  # operations that met a fault (tables.kv.KeyValueStore.faults)
        self.health = (
            NodeHealth(client, probe_timeout) if isinstance(client, aredis.RedisCluster) else None
        )
        self._shard_tick = self.script(SHARD_TICK_LUA)
        self._release = self.script(RELEASE_LUA)
        self._swap = self.script(SWAP_LUA)
        self._settle_claim = self.script(SETTLE_CLAIM_LUA)
        self._cas = self.script(CAS_LUA)
        self._lease = self.script(LEASE_LUA)
        self._cas_sha = hashlib.sha1(CAS_LUA.encode()).hexdigest()
        # #39: the timer shards this process holds and their earliest hints,
        # told of every hint this store writes (:mod:`tables.wakes`)
        self.wakes = TimerWakes()
        # #40: the timer hints this process owes (their shard's master did not
        # answer; the table's write went on): table -> hint, written again in
        # the background (:meth:`flush_hints`) until the shard answers
        self.owed: dict[str, int] = {}
        self._owing: asyncio.Task[None] | None = None

    def script(self, lua: str) -> Script:
        return Script(self, lua)

    # ------------------------------------------------------------------ health
    async def ready(self, keys: Sequence[Any] = ()) -> list[ClusterNode]:
        """Raise :class:`ServiceUnavailable` at once while Redis -- on a cluster:
        a node serving ``keys`` -- is suspect and does not answer a short PING
        (see the class docstring).  The cluster nodes serving ``keys``."""
        # each caller probes for itself: a PING sent before Redis came back must
        # not fail a request made after it
        if self.suspect and not await self._answers():
            raise ServiceUnavailable("Redis is unavailable: no answer to a PING")
        if self._uninitialised:
            await self._initialise()
        if self.health is None:
            return []
        await self.health.check(keys)
        return self.health.owners(keys)

    async def failed_over(self, within: float) -> bool:
        """On a cluster, after a request met a failed master: wait until a
        replica serves its slots (or it answers again) -- when a replica is
        known and it failed less than ``within`` s ago
        (:meth:`tables.nodes.NodeHealth.failed_over`, #40).  True: make the
        request again; False at once on one server, or when no failover is
        under way."""
        if self.health is None:
            return False
        return await self.health.failed_over(within)

    async def _initialise(self) -> None:
        # redis-py's RedisCluster.initialize() holds its own lock and is a no-op
        # once done: concurrent first requests wait for the one slot-map fetch
        assert isinstance(self.r, aredis.RedisCluster)
        with self.guard():
            await self.r.initialize()
        self._uninitialised = False

    async def _answers(self) -> bool:
        try:
            await asyncio.wait_for(self.r.ping(), self.probe_timeout)
        except (
            RedisError,
            RedisClusterException,
            OSError,
        ):  # OSError: ConnectionError, TimeoutError
            return False
        self.suspect = False
        return True

    @contextlib.contextmanager
    def guard(self, nodes: Sequence[ClusterNode] = ()) -> Iterator[None]:
        """:func:`unavailable`; a connection error or a timeout makes the store
        -- on a cluster: the ``nodes`` the operation went to -- suspect."""
        try:
            with unavailable():
                yield
        except ServiceUnavailable as e:
            self.faults += 1
            if self.health is not None:
                if isinstance(e.__cause__, _NODE_DOWN):
                    self.health.failed(nodes, e.__cause__)
            elif isinstance(e.__cause__, _OUTAGE):
                self.suspect = True
            raise

    async def run(
        self, build: Callable[[Pipeline], object], *, transaction: bool = False
    ) -> list[Any]:
        """One round trip: the commands ``build`` queues on a pipeline, their replies."""
        await self.ready()
        if self.health is not None:
            return await self._cluster_run(build, transaction)
        self.round_trips += 1
        with self.guard():
            async with self.r.pipeline(transaction=transaction) as pipe:
                build(cast("Pipeline", pipe))
                replies: list[Any] = await pipe.execute()
                return replies

    async def _cluster_run(
        self, build: Callable[[Pipeline], object], transaction: bool
    ) -> list[Any]:
        """:meth:`run` on a cluster: the keys ``build`` queues are known before the
        pipeline goes out, so that only a failed node's keys wait (#28)."""
        keys: list[Any] = []
        nodes: list[ClusterNode] = []
        with self.guard(nodes):
            async with self.r.pipeline(transaction=transaction) as pipe:
                queue = pipe.execute_command

                def record(*args: Any, **kwargs: Any) -> Any:
                    keys.extend(command_keys(args))
                    return queue(*args, **kwargs)

                pipe.execute_command = record  # type: ignore[method-assign]
                build(cast("Pipeline", pipe))  # a ClusterPipeline queues the same commands
                nodes += await self.ready(keys)
                self.round_trips += 1
                replies: list[Any] = await pipe.execute()
                return replies

    async def from_replica(
        self, key: str, commands: Sequence[Sequence[str | int | float]]
    ) -> list[Any]:
        """The replies of the read-only ``commands`` on ``key``'s hash slot, from
        a replica of that slot (:meth:`tables.nodes.NodeHealth.from_replica`,
        #40): one round trip.  :class:`ServiceUnavailable` when no replica
        answers, and on one Redis server (it has none)."""
        if self.health is None:
            raise ServiceUnavailable("Redis is unavailable: one server has no replica to read")
        await self.ready()
        self.round_trips += 1
        with unavailable():
            return await self.health.from_replica(key, commands)

    async def one(self, build: Callable[[Pipeline], object]) -> Any:
        """The reply of the single command ``build`` queues (one round trip)."""
        return (await self.run(build))[0]

    async def ping(self) -> bool:
        """True when Redis answers a PING; on a cluster: the slot map is known
        and a primary not suspect answers (a failed master alone does not make
        the whole store look down, #28).  :class:`ServiceUnavailable` otherwise."""
        self.round_trips += 1
        if self.health is not None:
            await self.ready()
            if await self.health.any_answers():
                return True
            raise ServiceUnavailable("Redis is unavailable: no primary answers a PING")
        with self.guard():
            answered = bool(await self.r.ping())
        self.suspect = False
        return answered

    async def aclose(self) -> None:
        if self._owing is not None:
            self._owing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._owing
        if self.owed:  # the shard's repair restores them (#40)
            log.warning("closing with %d timer hint(s) owed", len(self.owed))
        with unavailable():
            await self.r.aclose()

    # ------------------------------------------------------------------ tables
    async def load(self, table_id: str) -> dict[bytes, bytes]:
        """Every field of the table hash (empty if there is no such table)."""
        key = self.keys.table(table_id)
        nodes = await self.ready([key])
        self.round_trips += 1
        with self.guard(nodes):
            raw = await self.r.hgetall(key)
        return cast("dict[bytes, bytes]", raw)

    async def cas(
        self,
        table_id: str,
        expected: int,
        *,
        set_fields: dict[str, str | bytes | int],
        del_fields: Sequence[str] = (),
        flush: bytes = b"",
        ttl_ms: int,
        maxlen: int,
        request_id: str = "",
        recent: int = 16,
        notify: str = "",
        timer_hint: int | None = None,
    ) -> CasOutcome:
        """One round trip: the CAS script, pipelined with ``ZADD LT`` of the
        timer hint when there is one (a hint may be early, never late)."""
        k = self.keys
        args: list[str | bytes | int] = [
            expected,
            request_id,
            ttl_ms,
            maxlen,
            len(set_fields),
            len(del_fields),
            flush,
            k.notify if notify else "",
            notify,
            recent,
            k.live(table_id),  # #42: every write announced to the pages watching
            "S" if self.cluster else "P",
        ]
        for f, val in set_fields.items():
            args += [f, val]
        args += list(del_fields)
        tkeys = [k.table(table_id), k.events(table_id)]
        if self.cluster:
            return await self._cluster_cas(table_id, tkeys, args, timer_hint)
        await self.ready()
        for _attempt in range(2):
            self.round_trips += 1
            with self.guard():
                async with self.r.pipeline(transaction=False) as pipe:
                    pipe.evalsha(self._cas_sha, 2, *tkeys, *args)
                    if timer_hint is not None:
                        pipe.zadd(k.timers_of(table_id), {table_id: timer_hint}, lt=True)
                        shard = k.shard_of(table_id)
                        if not self.wakes.hinted(shard, timer_hint):  # its holder is told
                            pipe.publish(k.timer_wake, hint_message(shard, timer_hint))
                    res = await pipe.execute(raise_on_error=False)
                out = res[0]
                if isinstance(out, NoScriptError) or (
                    isinstance(out, ResponseError) and "NOSCRIPT" in str(out)
                ):
                    self.round_trips += 1
                    await self.r.script_load(CAS_LUA)
                    continue
                if isinstance(out, Exception):
                    raise out
            code, version = int(out[0]), int(out[1])
            status = {0: "stale", 1: "ok", 2: "duplicate"}[code]
            return CasOutcome(status, version)
        raise RuntimeError("CAS script could not be loaded")  # pragma: no cover

    async def _cluster_cas(
        self, table_id: str, tkeys: list[str], args: list[str | bytes | int], hint: int | None
    ) -> CasOutcome:
        """On Redis Cluster the timer hint lives in another slot than the table,
        and a cluster pipeline carries no script: the hint (``ZADD LT``) is one
        round trip, sent first -- a hint may be early, never late -- and the CAS
        script alone is the next (with the hint's ``PUBLISH`` beside it when
        another process holds its shard, #39).

        A hint whose shard's master does not answer (dead, failing over) is
        *owed* (#40): the write goes on at once -- the table's ``d`` is the
        deadline, the hint only wakes its holder -- and the hint is written in
        the background as soon as the shard answers (:meth:`flush_hints`); a
        process that dies owing it leaves it to the shard's repair
        (:mod:`tables.hint_repair`).  While this process owes hints of a
        shard, a new one joins them without asking the shard again."""
        tell = None
        if hint is not None:
            timers, shard = self.keys.timers_of(table_id), self.keys.shard_of(table_id)
            if self._owes(shard):
                self._owe(table_id, hint)
            else:
                try:
                    await self.one(lambda p: p.zadd(timers, {table_id: hint}, lt=True))
                except ServiceUnavailable as e:
                    if e.__cause__ is not None and not isinstance(e.__cause__, _HINT_OUTAGE):
                        raise
                    log.warning(
                        "timer shard %d: hint of %s owed, the write goes on: %s", shard, table_id, e
                    )
                    self._owe(table_id, hint)
                else:
                    if not self.wakes.hinted(shard, hint):  # its holder told beside the script
                        tell = self.tell(shard, hint)
        if tell is None:
            out = await self._cas(tkeys, args)
        else:
            out, _ = await asyncio.gather(self._cas(tkeys, args), tell)
        code, version = int(out[0]), int(out[1])
        return CasOutcome({0: "stale", 1: "ok", 2: "duplicate"}[code], version)

    def _owes(self, shard: int) -> bool:
        return any(self.keys.shard_of(tid) == shard for tid in self.owed)

    def _owe(self, table_id: str, hint: int) -> None:
        """Owe ``table_id``'s hint (the earlier of two: ``ZADD LT``) and make
        sure the background flush runs (#40)."""
        self.owed[table_id] = min(hint, self.owed.get(table_id, hint))
        if self._owing is None or self._owing.done():
            self._owing = asyncio.create_task(self._flush_until_done())
            self._owing.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def _flush_until_done(self) -> None:
        while self.owed:
            await asyncio.sleep(OWED_RETRY_S)
            await self.flush_hints()

    async def flush_hints(self) -> int:
        """Write the timer hints this process owes (#40), one round trip per
        shard -- each shard's hints (``ZADD LT``) and its repair asked for
        (``SET NX``: another process may have died owing hints of the same
        outage, :mod:`tables.hint_repair`) -- and tell their holders; a shard
        that still does not answer keeps its hints owed.  How many are left."""
        by_shard: dict[int, dict[str, int]] = {}
        for tid, at in list(self.owed.items()):
            by_shard.setdefault(self.keys.shard_of(tid), {})[tid] = at
        for shard, hints in sorted(by_shard.items()):
            try:
                await self._write_owed(shard, hints)
            except ServiceUnavailable:
                continue  # again in a moment
            for tid, at in hints.items():
                if self.owed.get(tid) == at:  # not owed anew, earlier, meanwhile
                    del self.owed[tid]
            log.info("timer shard %d: %d owed hint(s) written", shard, len(hints))
            first = min(hints.values())
            if not self.wakes.hinted(shard, first):
                await self.tell(shard, first)
        return len(self.owed)

    async def _write_owed(self, shard: int, hints: dict[str, int]) -> None:
        timers, repair = self.keys.timer_shard(shard), self.keys.timer_repair(shard)
        token = f"owed:{uuid.uuid4().hex[:12]}"

        def build(p: Pipeline) -> None:
            p.zadd(timers, hints, lt=True)
            p.set(repair, token, nx=True, px=SHARD_KEY_TTL_MS)

        await self.run(build)

    async def read_log(self, table_id: str, after_version: int) -> tuple[list[bytes], str]:
        """The flushed chunks that may hold versions above ``after_version`` and
        the open chunk (one round trip)."""

        def build(p: Pipeline) -> None:
            p.xrange(self.keys.events(table_id), f"{after_version + 1}-0", "+")
            p.hget(self.keys.table(table_id), "e")

        rows, open_chunk = await self.run(build)
        return [fields[b"z"] for _, fields in rows], text(open_chunk or b"")

    # ------------------------------------------------------------------ timers
    async def tick_shard(
        self, shard: int, owner: str, now_ms: int, lease_ms: int, limit: int, claim_ms: int
    ) -> ShardTick | None:
        """One round trip: take or renew timer shard ``shard``'s lease for ``owner``
        until ``now_ms + lease_ms`` and, if it holds it, claim up to ``limit`` of
        the shard's hints due by ``now_ms``, each pushed to ``now_ms + claim_ms``
        (``SHARD_TICK_LUA``).  None while another owner holds the shard; a
        ``lease_ms`` and ``limit`` of 0 hand it back."""
        k = self.keys
        keys = [k.timer_lease(shard), k.timer_shard(shard)]
        keys += [k.timer_served(shard), k.timer_repair(shard)]
        args: list[str | int] = [owner, now_ms, now_ms + lease_ms, SHARD_KEY_TTL_MS, limit]
        args += [now_ms + claim_ms, "1" if self.cluster else "0"]
        out = await self._shard_tick(keys, args)
        if not isinstance(out, list):
            return None
        first = int(float(text(out[1])))
        due = [text(m) for m in out[3:]]
        return ShardTick(due, int(out[0]), None if first < 0 else first, text(out[2]))

    async def rehint(self, shard: int, hints: dict[str, int]) -> None:
        """Hints of timer shard ``shard`` written again (``ZADD LT``, one round
        trip; #40, the shard's repair); its holder told."""
        if not hints:
            return
        key = self.keys.timer_shard(shard)
        await self.one(lambda p: p.zadd(key, hints, lt=True))
        first = min(hints.values())
        if not self.wakes.hinted(shard, first):
            await self.tell(shard, first)

    async def ask_repair(self, shard: int, token: str) -> str:
        """Ask for a repair of timer shard ``shard``'s hints (#40): ``token``
        unless one is owed already; the token owed (one round trip)."""
        key = self.keys.timer_repair(shard)

        def build(p: Pipeline) -> None:
            p.set(key, token, nx=True, px=SHARD_KEY_TTL_MS)
            p.get(key)

        return text((await self.run(build))[1] or token)

    async def repaired(self, shard: int, token: str) -> bool:
        """The repair ``token`` of timer shard ``shard`` is done: its mark goes,
        unless another repair was asked for meanwhile (#40).  True if it went."""
        return bool(await self._settle_claim([self.keys.timer_repair(shard)], [token]))

    async def release_timer(
        self, shard: int, table_id: str, lease_score: int, new_score: int | None
    ) -> bool:
        args: list[str | int] = [table_id, lease_score, "" if new_score is None else new_score]
        released = bool(await self._release([self.keys.timer_shard(shard)], args))
        if released and new_score is not None and not self.wakes.hinted(shard, new_score):
            await self.tell(shard, new_score)  # the shard went to another meanwhile
        return released

    async def add_hint(self, member: str, at: int) -> None:
        """A timer hint (``ZADD LT``: never later than one there) for a table or
        an arena (``@<id>``); its shard's holder is told (:mod:`tables.wakes`)."""
        key, shard = self.keys.timers_of(member), self.keys.shard_of(member)
        await self.one(lambda p: p.zadd(key, {member: at}, lt=True))
        if not self.wakes.hinted(shard, at):
            await self.tell(shard, at)

    async def tell(self, shard: int | None, at: int = 0) -> None:
        """Publish on the timers' wake channel (best effort: a loop that misses
        it looks at its next round): a hint at ``at`` in ``shard``, or (None) a
        shard freed or a scheduler started (:mod:`tables.wakes`)."""
        message = FREE if shard is None else hint_message(shard, at)
        with contextlib.suppress(ServiceUnavailable):
            await self.ready()
            self.round_trips += 1
            with self.guard():
                await self.r.publish(self.keys.timer_wake, message)

    async def lease(self, key: str, owner: str, now_ms: int, lease_ms: int) -> bool:
        """Take or renew the lease ``key`` (a timer shard's, the pruner's) for
        ``owner`` until ``now_ms + lease_ms``; False while another owner holds it."""
        return bool(await self._lease([key], _lease_args(owner, now_ms, lease_ms)))

    # ------------------------------------------------------------- user pointers
    async def swap_user(
        self, user: int, old: str, new: str, ttl_ms: int, claim_ms: int = 0
    ) -> bool:
        """Set the user's table pointer to ``new`` ('' deletes it and the claim
        marker) if it is ``old`` ('' = absent); ``claim_ms`` > 0 also marks the
        pointer as a fresh claim for that long (:meth:`Tables.claim_user`)."""
        keys = [self.keys.user(user), self.keys.user_claim(user)]
        return bool(await self._swap(keys, [old, new, ttl_ms, claim_ms]))

    async def settle_claim(self, user: int, table_id: str) -> bool:
        """Drop the user's claim marker if it names ``table_id`` (that attempt
        is over); True if it did."""
        return bool(await self._settle_claim([self.keys.user_claim(user)], [table_id]))

    async def get_user(self, user: int) -> str:
        raw = await self.one(lambda p: p.get(self.keys.user(user)))
        return text(raw) if raw else ""

    async def user_claim(self, user: int) -> tuple[str, bool]:
        """The table the user's pointer names ('' = none) and whether it is a
        fresh claim (its seat maybe not written yet)."""

        def build(p: Pipeline) -> None:
            p.get(self.keys.user(user))
            p.get(self.keys.user_claim(user))

        cur, claim = await self.run(build)
        table = text(cur) if cur else ""
        return table, bool(table) and claim is not None and text(claim) == table


def _lease_args(owner: str, now_ms: int, lease_ms: int) -> list[str | int]:
    """The lease scripts' owner, now, until and the key's ttl (the key of a
    lease nobody renews goes a minute after the lease ran out)."""
    return [owner, now_ms, now_ms + lease_ms, 2 * lease_ms + 60_000]


def text(b: Any) -> str:
    """A reply as text (the client answers bytes)."""
    return b.decode() if isinstance(b, bytes) else str(b)
