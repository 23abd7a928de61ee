"""One lock per table in this process: renders of a table are serialised so each
shows the newest version.  (Hands are placed without it, by compare-and-set:
nothing waits for flood tokens under it on their account, #28.)"""

from __future__ import annotations

import asyncio

MAX_IDLE_LOCKS = 10_000
"""Idle locks kept before the unlocked ones are dropped (a dropped lock is made
again on the next render of its table)."""


class TableLocks:
    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}

    def of(self, table_id: str) -> asyncio.Lock:
        lock = self._locks.get(table_id)
        if lock is None:
            if len(self._locks) > MAX_IDLE_LOCKS:
                for k in [k for k, v in self._locks.items() if not v.locked()]:
                    del self._locks[k]
            lock = self._locks[table_id] = asyncio.Lock()
        return lock
