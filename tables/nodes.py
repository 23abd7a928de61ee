"""Which nodes of a Redis Cluster are down, so that an outage of one master
stalls only the operations on its slots (#28).

On one server the store is *suspect* as a whole after a connection error
(:class:`tables.store.Store`).  On a cluster that would make every table wait
for the one failed master -- and redis-py's cluster client, sent on to a dead
node, disconnects every node and refreshes its slot map for every caller.  So
:class:`NodeHealth` remembers the *nodes* whose operations met a connection
error or a timeout; an operation whose keys live on such a node first asks it
a short ``PING`` on a connection of its own (``probe_timeout`` s): it answers
-- the operation goes on, the node is trusted again; it does not -- the slot
map is fetched again from the nodes that answer (at most one fetch at a time,
redis-py's ``NodesManager.initialize`` with the failed node asked last), and
if a replica was promoted meanwhile the operation goes on to it, otherwise it
fails at once with :class:`ServiceUnavailable`.  Operations whose keys live on
healthy nodes never wait.  Each caller probes for itself: a PING sent before a
node came back must not fail a request made after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterable, Sequence
from typing import Any

import redis.asyncio as aredis
from redis._parsers.commands import AsyncCommandsParser
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisClusterException, RedisError

from tables.model import ServiceUnavailable

log = logging.getLogger(__name__)

REFRESH_EVERY = 0.25  # s: the slot map is fetched again at most this often
REPLICA_SLACK = 3.0
"""Seconds a replica's link to its master may have gone down before this process
saw the master fail, and the replica still be read for it (:meth:`NodeHealth.from_replica`):
the replica counts them in whole seconds, and this process notices a death
with its next call to that master (the fleet benchmark: 1-2 s).  A replica cut
off that long before its master died could lack those seconds' writes."""
_EVAL = {"EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO", "FCALL", "FCALL_RO"}


class CommandTableOnce(AsyncCommandsParser):
    """redis-py's parser of the ``COMMAND`` table, fetched once: the cluster
    client asks its default node for it again at every slot-map refresh, and
    when that node is the one that failed the refresh fails -- and the client
    then drops the connections to every node (#28).  The table does not change
    with a failover; ``node`` (for ``COMMAND GETKEYS``) still follows the
    default node."""

    async def initialize(self, node: ClusterNode | None = None) -> None:
        if node:
            self.node = node
        if not self.commands:
            await super().initialize(node)


def command_keys(args: Sequence[Any]) -> list[Any]:
    """The keys of a command as queued (``GET k``: ``[k]``; ``EVALSHA sha 2 a
    b ...``: ``[a, b]``); the first argument for the others (a channel of
    ``PUBLISH``: its node is asked about too, which is harmless)."""
    if not args:
        return []
    name = str(args[0]).upper()
    if name in _EVAL and len(args) > 2:
        return list(args[3 : 3 + int(args[2])])
    return [args[1]] if len(args) > 1 else []


class NodeHealth:
    """The suspect nodes of one :class:`redis.asyncio.RedisCluster` (see the
    module docstring)."""

    def __init__(self, client: aredis.RedisCluster, probe_timeout: float) -> None:
        self.r = client
        self.probe_timeout = probe_timeout
        self.down: set[str] = set()  # "host:port" of the suspect nodes
        self.failed_at: dict[str, float] = {}  # suspect node -> when it failed (monotonic)
        self._replicas_of: dict[str, list[ClusterNode]] = {}  # primary -> its replicas
        self._refresh: asyncio.Task[None] | None = None
        self._refreshed = 0.0
        client.commands_parser = CommandTableOnce()

    def owners(self, keys: Iterable[Any]) -> list[ClusterNode]:
        """The primaries serving ``keys`` in the client's slot map."""
        nm = self.r.nodes_manager
        nodes = {}
        for key in keys:
            with contextlib.suppress(RedisClusterException, KeyError):  # a slot not covered
                node = nm.get_node_from_slot(self.r.keyslot(key))
                nodes[node.name] = node
        return list(nodes.values())

    def failed(self, nodes: Iterable[ClusterNode], error: BaseException) -> None:
        """``error`` (a connection error or a timeout) ended an operation on
        ``nodes``: suspect them, and the node redis-py names in ``error``."""
        names = {n.name for n in nodes}
        node = getattr(error, "connection", None)
        if isinstance(node, ClusterNode):
            names.add(node.name)
        fresh = names - self.down
        if fresh:
            log.warning("Redis Cluster node(s) %s failed: %s", ", ".join(sorted(fresh)), error)
        now = time.monotonic()
        for name in fresh:
            self.failed_at.setdefault(name, now)
        self.down |= names

    async def check(self, keys: Sequence[Any]) -> None:
        """Raise :class:`ServiceUnavailable` at once when a node serving ``keys``
        is suspect, does not answer a PING and still serves them after the slot
        map is fetched again."""
        if not self.down or not keys:
            return
        suspects = [n for n in self.owners(keys) if n.name in self.down]
        if not suspects:
            return
        answers = await asyncio.gather(*(self._answers(n) for n in suspects))
        if all(answers):
            return
        await self.refresh([n.name for n, ok in zip(suspects, answers, strict=True) if not ok])
        still = [n.name for n in self.owners(keys) if n.name in self.down]
        if still:
            raise ServiceUnavailable(f"Redis is unavailable: no answer from {', '.join(still)}")

    async def failing_over(self, within: float) -> list[str]:
        """The suspect primaries that still serve slots in the slot map, failed
        less than ``within`` s ago here, with a replica known that the cluster
        may promote in their place (#40): a failover may be under way."""
        now, replicas = time.monotonic(), self._known_replicas()
        found = []
        for p in self.r.get_primaries():
            if p.name not in self.down or now - self.failed_at.get(p.name, now) >= within:
                continue
            if await self._replicas(p, replicas.get(p.name, [])):
                found.append(p.name)
        return sorted(found)

    def _known_replicas(self) -> dict[str, list[ClusterNode]]:
        """Each primary's replicas as the slot map names them."""
        found: dict[str, list[ClusterNode]] = {}
        for holders in self.r.nodes_manager.slots_cache.values():
            if holders and holders[0].name not in found:
                found[holders[0].name] = list(holders[1:])
        return found

    async def failed_over(self, within: float) -> bool:
        """Wait for the failover of the primaries :meth:`failing_over` names (``within``
        s of their failure here, at most): the slot map fetched again every
        :data:`REFRESH_EVERY` s until a replica serves their slots or they answer
        a PING again.  True: none of them is left (a request that met them may
        be made again); False: none was failing over, or it did not end in
        time -- the outage is not a failover's moment."""
        waiting = await self.failing_over(within)
        if not waiting:
            return False
        until = min(self.failed_at.get(n, time.monotonic()) for n in waiting) + within
        while True:
            back = await asyncio.gather(*(self._answers(n) for n in self._named(waiting)))
            if not all(back):
                await self.refresh(waiting)
            serving = {p.name for p in self.r.get_primaries()}
            waiting = [n for n in waiting if n in self.down and n in serving]
            if not waiting:
                return True
            if time.monotonic() >= until:
                return False
            await asyncio.sleep(REFRESH_EVERY)

    def _named(self, names: Sequence[str]) -> list[ClusterNode]:
        nodes = self.r.nodes_manager.nodes_cache
        return [nodes[n] for n in names if n in nodes]

    async def any_answers(self) -> bool:
        """Whether a primary that is not suspect (else any) answers a PING."""
        primaries = self.r.get_primaries()
        trusted = [p for p in primaries if p.name not in self.down]
        for node in trusted or primaries:
            if await self._answers(node):
                return True
        return False

    async def _answers(self, node: ClusterNode) -> bool:
        """A PING to ``node`` on a connection of its own, answered in time."""
        conn = _connection(node)
        try:
            async with asyncio.timeout(self.probe_timeout):
                await conn.connect()  # type: ignore[no-untyped-call]
                await conn.send_command("PING")
                await conn.read_response()
        except (RedisError, RedisClusterException, OSError):  # OSError: TimeoutError
            return False
        finally:
            with contextlib.suppress(RedisError, OSError):
                await conn.disconnect()
        self.down.discard(node.name)
        self.failed_at.pop(node.name, None)
        return True

    async def refresh(self, failed: Sequence[str]) -> None:
        """Fetch the slot map again (one fetch at a time, at most every
        :data:`REFRESH_EVERY` s), the ``failed`` node asked last; the default
        node a healthy primary.  A fetch that fails leaves the map as it was."""
        if self._refresh is None or (
            self._refresh.done() and time.monotonic() - self._refreshed > REFRESH_EVERY
        ):
            self._refresh = asyncio.create_task(self._fetch(failed[0] if failed else None))
            self._refresh.add_done_callback(lambda t: t.cancelled() or t.exception())
        with contextlib.suppress(RedisError, RedisClusterException, OSError):
            await asyncio.shield(self._refresh)

    async def _fetch(self, failed: str | None) -> None:
        try:
            await self.r.nodes_manager.initialize(last_failed_node_name=failed)
        finally:
            self._refreshed = time.monotonic()
        healthy = [p for p in self.r.get_primaries() if p.name not in self.down]
        if healthy:
            self.r.set_default_node(healthy[0])
        known = set(self.r.nodes_manager.nodes_cache)
        self.down &= known  # a node gone from the cluster is nobody's owner
        self.failed_at = {n: at for n, at in self.failed_at.items() if n in self.down}
        self._replicas_of.clear()

    async def from_replica(
        self, key: Any, commands: Sequence[Sequence[str | int | float]]
    ) -> list[Any]:
        """The replies of the read-only ``commands`` on ``key``'s hash slot, read
        from a replica of that slot (``READONLY``, on a connection of its own,
        ``probe_timeout`` s) -- what its master held a moment ago, while the
        master is dead and before the replica is promoted (#40).  Only a
        replica that was in sync when its master died answers: its link to the
        master up, or down no longer than since this process saw the master
        fail and :data:`REPLICA_SLACK` s (else it may lack the master's last
        writes).  The first replica that answers; :class:`ServiceUnavailable`
        when none does."""
        slot = self.r.keyslot(key)
        holders = self.r.nodes_manager.slots_cache.get(slot) or []
        if not holders:
            raise ServiceUnavailable(f"Redis is unavailable: slot {slot} has no master known")
        primary = holders[0]
        failed = self.failed_at.get(primary.name)
        why = "no replica known"
        for replica in await self._replicas(primary, holders[1:]):
            try:
                async with asyncio.timeout(self.probe_timeout):
                    return await self._read(replica, commands, failed)
            except (RedisError, RedisClusterException, OSError) as e:  # OSError: TimeoutError
                why = f"{replica.name}: {e}"
        raise ServiceUnavailable(f"Redis is unavailable: no replica of slot {slot} ({why})")

    async def _replicas(
        self, primary: ClusterNode, known: Sequence[ClusterNode]
    ) -> list[ClusterNode]:
        """``primary``'s replicas: those the slot map
        names, else those a live primary's ``CLUSTER NODES`` names (the slot
        map leaves out a replica whose offset its nodes have not heard of yet),
        kept until the slot map is fetched again."""
        if known:
            return list(known)
        found = self._replicas_of.get(primary.name)
        if found is None:
            found = self._replicas_of[primary.name] = await self._ask_replicas(primary)
        return found

    async def _ask_replicas(self, primary: ClusterNode) -> list[ClusterNode]:
        for node in self.r.get_primaries():
            if node.name == primary.name or node.name in self.down:
                continue
            conn = _connection(node)
            try:
                async with asyncio.timeout(self.probe_timeout):
                    await conn.connect()  # type: ignore[no-untyped-call]
                    await conn.send_command("CLUSTER", "NODES")
                    raw = await conn.read_response()
            except (RedisError, RedisClusterException, OSError):  # OSError: TimeoutError
                continue
            finally:
                with contextlib.suppress(RedisError, OSError):
                    await conn.disconnect()
            settings = {
                k: v for k, v in primary.connection_kwargs.items() if k not in ("host", "port")
            }
            return [
                ClusterNode(
                    host or primary.host,
                    port,
                    "replica",
                    connection_class=primary.connection_class,
                    **settings,
                )
                for host, port in _replicas_in(raw, primary.name)
            ]
        return []

    async def _read(
        self,
        node: ClusterNode,
        commands: Sequence[Sequence[str | int | float]],
        failed: float | None,
    ) -> list[Any]:
        conn = _connection(node)
        try:
            await conn.connect()  # type: ignore[no-untyped-call]
            await conn.send_command("INFO", "replication")
            info = _info(await conn.read_response())
            if info.get("role") != "slave":
                raise RedisClusterException("not a replica")
            if info.get("master_link_status") != "up":
                down = int(info.get("master_link_down_since_seconds", "-1"))
                seen = None if failed is None else time.monotonic() - failed + REPLICA_SLACK
                if down < 0 or seen is None or down > seen:
                    raise RedisClusterException(
                        f"it lost its master {down} s ago, before the master failed here"
                    )
            await conn.send_command("READONLY")
            await conn.read_response()
            await conn.send_packed_command(conn.pack_commands(commands))
            replies = [await conn.read_response() for _ in commands]
        finally:
            with contextlib.suppress(RedisError, OSError):
                await conn.disconnect()
        return replies


def _connection(node: ClusterNode) -> Connection:
    """A connection of its own to ``node`` (no retry: it answers or it does not)."""
    return node.connection_class(**{**node.connection_kwargs, "retry": Retry(NoBackoff(), 0)})


def _replicas_in(raw: Any, primary: str) -> list[tuple[str, int]]:
    """The ``(host, port)`` of the replicas of node ``primary`` ("host:port")
    not failing, in a ``CLUSTER NODES`` reply."""
    lines = [line.split() for line in _text(raw).splitlines() if line.strip()]
    ids = {parts[1].split("@")[0]: parts[0] for parts in lines if len(parts) > 3}
    master = ids.get(primary)
    found = []
    for parts in lines:
        flags = parts[2].split(",") if len(parts) > 3 else []
        if "slave" in flags and parts[3] == master and not {"fail", "fail?"} & set(flags):
            host, _sep, port = parts[1].split("@")[0].rpartition(":")
            found.append((host, int(port)))
    return found


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def _info(raw: Any) -> dict[str, str]:
    """``INFO``'s reply as its fields."""
    return dict(line.split(":", 1) for line in _text(raw).splitlines() if ":" in line)
