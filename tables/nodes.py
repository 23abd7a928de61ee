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
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisClusterException, RedisError

from tables.model import ServiceUnavailable

log = logging.getLogger(__name__)

REFRESH_EVERY = 0.25  # s: the slot map is fetched again at most this often
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
        conn = node.connection_class(**{**node.connection_kwargs, "retry": Retry(NoBackoff(), 0)})
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
