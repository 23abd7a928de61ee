"""Notifications: the CAS script publishes a JSON note on the notify channel
(``keys.notify``) for timer, AI-takeover and admin writes; every bot process
subscribes to re-render the table (:meth:`tables.TableService.notifications`)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError

from tables.store import Store, unavailable


@dataclass(frozen=True)
class Notification:
    """A table written elsewhere: its id, the version written and why (``timeout``,
    ``takeover``, ``left``, ``reset``, ``abort``, ``cancel``, ``delete``)."""

    table: str
    version: int
    kind: str


def parse(data: Any) -> Notification | None:
    try:
        note = json.loads(data)
        return Notification(str(note["table"]), int(note["version"]), str(note.get("kind", "")))
    except (ValueError, KeyError, TypeError):
        return None


class Notifications:
    """A subscription to the notify channel: ``async with svc.notifications() as
    notes``, then ``await notes.get(timeout)`` or ``async for note in notes``.
    Redis failures raise :class:`tables.ServiceUnavailable`."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._pubsub: Any = None

    async def __aenter__(self) -> Notifications:
        # a cluster client learns its slot map first (its pubsub does not); on a
        # cluster PUBLISH reaches every node, so any node's subscription hears it
        await self._store.ready()
        self._pubsub = self._store.r.pubsub()
        try:
            with unavailable():
                await self._pubsub.subscribe(self._store.keys.notify)
        except BaseException:
            await self.__aexit__()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        pubsub, self._pubsub = self._pubsub, None
        if pubsub is not None:
            with contextlib.suppress(RedisError, OSError):  # closing: nothing to tell
                await pubsub.aclose()

    async def get(self, timeout: float = 1.0) -> Notification | None:
        """The next notification, or None when none came within ``timeout`` s."""
        assert self._pubsub is not None, "use: async with svc.notifications() as notes"
        with unavailable():
            msg = await self._pubsub.get_message(ignore_subscribe_messages=True, timeout=timeout)
        if msg is None or msg.get("type") != "message":
            return None
        return parse(msg["data"])

    async def __aiter__(self) -> AsyncIterator[Notification]:
        while True:
            note = await self.get()
            if note is not None:
                yield note
