"""Cluster nodes get ports whose cluster bus (port + 10000) exists.

CI once failed because a node drew a port above 55535 from the kernel's
ephemeral range (32768-60999) and redis-server refused it three times in a row.
"""

from __future__ import annotations

import socket

from sandbox.local_redis import CLUSTER_BUS_OFFSET, MAX_CLUSTER_PORT, free_cluster_port


def test_cluster_ports_leave_room_for_the_bus() -> None:
    for _ in range(200):
        port = free_cluster_port()
        assert 1024 < port <= MAX_CLUSTER_PORT == 55535
        for candidate in (port, port + CLUSTER_BUS_OFFSET):
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.bind(("127.0.0.1", candidate))  # raises if taken
