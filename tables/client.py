"""Building the service's Redis client: one server or a Redis Cluster.

Cluster mode is chosen by the URL scheme: ``redis+cluster://host:port/0`` (or
``rediss+cluster://``) names a startup node of a cluster --
``redis+cluster://h1:p1,h2:p2,h3:p3/0`` several (#28: the client starts when
any of them answers) -- and the client is redis-py's
:class:`redis.asyncio.RedisCluster`, which learns the slot map from them and
routes every command to the node that owns its key's slot.  Every key
the service's scripts touch together shares one hash tag (:mod:`.keys`), so
each script runs on one node."""

from __future__ import annotations

from typing import Any, TypeAlias

import redis.asyncio as aredis
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.crc import key_slot
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from tables.model import LiveConfig

Client: TypeAlias = "aredis.Redis | aredis.RedisCluster"

CLUSTER_SCHEMES = ("redis+cluster://", "rediss+cluster://")


def is_cluster_url(url: str) -> bool:
    """True for a ``redis+cluster://`` or ``rediss+cluster://`` URL."""
    return url.startswith(CLUSTER_SCHEMES)


def split_cluster_url(url: str) -> tuple[str, list[tuple[str, int]]]:
    """A cluster URL as redis-py's URL of its first startup node (``redis://`` or
    ``rediss://``, credentials, path and query kept) and the ``(host, port)`` of
    every startup node: ``redis+cluster://u:p@h1:7000,h2:7001/0`` ->
    ``("redis://u:p@h1:7000/0", [("h1", 7000), ("h2", 7001)])`` (port 6379 when
    a node names none)."""
    scheme, rest = url.replace("+cluster", "", 1).split("://", 1)
    netloc, sep, tail = rest.partition("/")
    creds, at, hosts = netloc.rpartition("@")
    nodes: list[tuple[str, int]] = []
    for hostport in (h.strip() for h in hosts.split(",")):
        if hostport.startswith("["):  # [::1]:7000
            host, _, port = hostport[1:].partition("]")
            port = port.lstrip(":")
        else:
            host, _, port = hostport.partition(":")
        nodes.append((host, int(port or 6379)))
    first = hosts.split(",")[0].strip()
    return f"{scheme}://{creds}{at}{first}{sep}{tail}", nodes


def slot_of(key: str) -> int:
    """The Redis Cluster hash slot of ``key`` (its hash tag's, if it has one):
    for tools that ask which node serves a key (the sandbox's failover runs)."""
    return int(key_slot(key.encode()))


def make_client(url: str, config: LiveConfig, max_connections: int | None = None) -> Client:
    """The one way the service builds a Redis client (bot, admin API, pub/sub).

    redis-py's ``Retry(ExponentialBackoff(cap, base), retries)`` on connection
    errors and timeouts: a pooled connection gone stale by a Redis restart fails
    its first command, which is then retried on a new connection -- so the first
    request after a restart succeeds.  ``health_check_interval`` PINGs a
    connection idle that long before using it; socket timeouts bound how long a
    request waits on a Redis that is down or stopped (SIGSTOP).  Without a pool
    built here a ``from_url`` client retries nothing.  With ``max_connections``
    the pool is a blocking one of that size: a request waits (up to 20 s) for a
    free connection instead of failing.

    A cluster URL (:func:`is_cluster_url`) builds a :class:`RedisCluster` with
    the same retry, timeouts and health checks (it also retries on
    ``MOVED``/``ASK``/``CLUSTERDOWN``, refreshing its slot map);
    ``max_connections`` is then the limit per node, and redis-py's cluster pool
    does not wait: a request beyond it fails (``ServiceUnavailable``).  The client learns the slot
    map on first use (:meth:`tables.store.Store.ready` awaits
    ``initialize()`` before the first command)."""
    c = config
    options: dict[str, Any] = {
        "retry": Retry(
            ExponentialBackoff(c.redis_backoff_cap, c.redis_backoff_base), c.redis_retries
        ),
        "retry_on_error": [RedisConnectionError, RedisTimeoutError],
        "health_check_interval": c.redis_health_check,
        "socket_timeout": c.redis_socket_timeout,
        "socket_connect_timeout": c.redis_connect_timeout,
        "socket_keepalive": True,
    }
    if is_cluster_url(url):
        if max_connections is not None:
            options["max_connections"] = max_connections
        first, nodes = split_cluster_url(url)
        startup = [ClusterNode(host, port) for host, port in nodes[1:]]
        return aredis.RedisCluster.from_url(first, startup_nodes=startup, **options)
    pool: aredis.ConnectionPool
    if max_connections is None:
        pool = aredis.ConnectionPool.from_url(url, **options)
    else:
        pool = aredis.BlockingConnectionPool.from_url(
            url, max_connections=max_connections, timeout=20, **options
        )
    return aredis.Redis.from_pool(pool)  # closes the pool with the client
