"""The Redis fixtures give a real, isolated server."""

from __future__ import annotations

import os

import redis

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
