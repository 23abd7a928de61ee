"""The Redis fixtures give a real, isolated server."""

from __future__ import annotations

import os
import uuid

import redis
from redis.cluster import RedisCluster

from tests.conftest import RedisServer


def test_redis_answers_ping_and_stores_a_key(redis_url: str, redis_prefix: str) -> None:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        assert client.ping() is True
        key = f"{redis_prefix}greeting"
        client.set(key, "hello")
        assert client.get(key) == "hello"
    finally:
        client.close()


def test_default_server_is_never_the_implicit_one(redis_server: RedisServer) -> None:
    if "REDIS_URL" in os.environ:
        assert redis_server.url == os.environ["REDIS_URL"]
        assert not redis_server.owned
    else:
        assert redis_server.owned
        assert not redis_server.url.startswith("redis://127.0.0.1:6379")


def test_the_cluster_spreads_keys_over_its_masters(redis_cluster: RedisServer) -> None:
    client = RedisCluster.from_url(redis_cluster.url)
    prefix = f"test:{uuid.uuid4().hex[:12]}:"
    keys = [f"{prefix}{i}" for i in range(60)]
    try:
        masters = client.get_primaries()  # type: ignore[no-untyped-call]
        assert len(masters) >= 3
        for key in keys:
            client.set(key, key)
        owners = {client.get_node_from_key(k).name for k in keys}  # type: ignore[no-untyped-call]
        assert len(owners) == len(masters)  # 60 random slots hit every master
        assert [client.get(k) for k in keys] == [k.encode() for k in keys]
    finally:
        for key in keys:
            client.delete(key)
        client.close()
