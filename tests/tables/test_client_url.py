"""Cluster URLs naming several startup nodes (#28): ``REDIS_URL`` lists them."""

from __future__ import annotations

import pytest
import redis.asyncio as aredis

from tables import LiveConfig
from tables.client import make_client, split_cluster_url


@pytest.mark.parametrize(
    ("url", "first", "nodes"),
    [
        ("redis+cluster://h1:7000/0", "redis://h1:7000/0", [("h1", 7000)]),
        (
            "redis+cluster://u:p@h1:7000,h2:7001,h3/0?socket_timeout=2",
            "redis://u:p@h1:7000/0?socket_timeout=2",
            [("h1", 7000), ("h2", 7001), ("h3", 6379)],
        ),
        ("rediss+cluster://h1:7000, h2:7001", "rediss://h1:7000", [("h1", 7000), ("h2", 7001)]),
        (
            "redis+cluster://[::1]:7000,[::2]/0",
            "redis://[::1]:7000/0",
            [("::1", 7000), ("::2", 6379)],
        ),
    ],
)
def test_a_cluster_url_names_its_startup_nodes(
    url: str, first: str, nodes: list[tuple[str, int]]
) -> None:
    assert split_cluster_url(url) == (first, nodes)


async def test_the_client_knows_every_startup_node() -> None:
    client = make_client("redis+cluster://10.0.0.1:7000,10.0.0.2:7001/0", LiveConfig())
    try:
        assert isinstance(client, aredis.RedisCluster)
        names = set(client.nodes_manager.startup_nodes)
        assert names == {"10.0.0.1:7000", "10.0.0.2:7001"}
    finally:
        await client.aclose()
