"""What a service's Redis client really sends: a redis-py connection class that
counts its round trips (each ``send_packed_command``: one command, or one
pipeline to one node) and records the commands in them, on one server and on a
cluster.  Real Redis answers them; nothing is mocked."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
import redis.asyncio as aredis
import redis.asyncio.cluster as acluster
from redis.asyncio.connection import Connection

from tables.client import Client, is_cluster_url


class Wire:
    """Round trips and commands sent since the last :meth:`reset`."""

    def __init__(self) -> None:
        self.trips = 0
        self.commands: list[tuple[str, ...]] = []

    def reset(self) -> None:
        self.trips = 0
        self.commands = []

    def record(self, args: Iterable[Any]) -> None:
        self.commands.append(
            tuple(a.decode(errors="replace") if isinstance(a, bytes) else str(a) for a in args)
        )

    def named(self, *names: str) -> list[tuple[str, ...]]:
        """The commands sent whose name is one of ``names`` (upper case)."""
        return [c for c in self.commands if c[0].upper() in names]


def connection_class(wire: Wire) -> type[Connection]:
    class Counting(Connection):
        # a pipeline packs each of its commands with pack_command too
        def pack_command(self, *args: Any) -> list[bytes]:
            wire.record(args)
            return super().pack_command(*args)

        async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
            wire.trips += 1
            await super().send_packed_command(command, check_health)

    return Counting


def wired_client(url: str, wire: Wire) -> Client:
    """A client of ``url`` (one server or a ``redis+cluster://`` one) whose
    connections count into ``wire``."""
    counting = connection_class(wire)
    if not is_cluster_url(url):
        return aredis.Redis.from_url(url, connection_class=counting)
    # RedisCluster builds its nodes' connections from the module's Connection
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(acluster, "Connection", counting)
        return aredis.RedisCluster.from_url(url.replace("+cluster", "", 1))
