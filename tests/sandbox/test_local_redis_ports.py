"""Ports of the servers the tests start: cluster nodes get ports whose cluster
bus (port + 10000) exists, and a server is only ever taken for the one started.

CI once failed because a node drew a port above 55535 from the kernel's
ephemeral range (32768-60999) and redis-server refused it three times in a row.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from sandbox.local_redis import (
    CLUSTER_BUS_OFFSET,
    MAX_CLUSTER_PORT,
    LocalRedisError,
    find_redis_server,
    free_cluster_port,
    server_pid,
    start_redis,
    stop,
)


def test_cluster_ports_leave_room_for_the_bus() -> None:
    for _ in range(200):
        port = free_cluster_port()
        assert 1024 < port <= MAX_CLUSTER_PORT == 55535
        for candidate in (port, port + CLUSTER_BUS_OFFSET):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.bind(("127.0.0.1", candidate))  # raises if taken


def test_a_server_on_the_port_that_is_not_ours_is_never_taken_for_ours(tmp_path: Path) -> None:
    """Parallel test workers draw free ports at the same time: a worker whose own
    server could not bind its port must not take the server another worker
    started there for its own (and flush that worker's data)."""
    binary = find_redis_server()
    assert binary is not None, "no redis-server (see tests/conftest.py)"
    (tmp_path / "theirs").mkdir()
    (tmp_path / "ours").mkdir()
    theirs, url = start_redis(binary, tmp_path / "theirs")
    try:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert server_pid(port) == theirs.pid
        with pytest.raises(LocalRedisError):
            start_redis(binary, tmp_path / "ours", port=port)
        assert theirs.poll() is None
    finally:
        stop(theirs)
    assert server_pid(port) is None
