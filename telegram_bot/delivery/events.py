"""What the delivery learns on the way, as data (#39): a private chat closed to
the bot, a group that removed it or moved, a gone message sent anew, a hand in
the group held back by the flood budget.  The delivery never calls the layers
above: each event goes on its :class:`Events` queue, and a dispatcher above
(``BotApp``) hands it to a use case."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from enum import StrEnum

from telegram_bot.delivery.address import Address


class Forbidden(StrEnum):
    """Why Telegram refused a write to a private chat (403), by its description (#38)."""

    NOT_STARTED = "not_started"
    """He never opened the private chat (he may play in a group): not his act."""
    BLOCKED = "blocked"
    """He blocked the bot: his own act."""
    DEACTIVATED = "deactivated"
    """His account was deleted."""
    OTHER = "other"
    """Any other 403 of a private chat: not known to be his act."""


@dataclass(frozen=True)
class PrivateForbidden:
    """A write to ``user``'s private chat was refused (403), for ``kind``."""

    user: int
    kind: Forbidden


@dataclass(frozen=True)
class Kicked:
    """A write to the group ``chat`` was refused (403): the bot is out of it."""

    chat: int


@dataclass(frozen=True)
class Migrated:
    """The group ``old`` lives on as the supergroup ``new`` (#38); told once per
    process and group."""

    old: int
    new: int


@dataclass(frozen=True)
class Replaced:
    """The message ``old`` of ``chat`` was gone: its content went out as ``new``."""

    chat: int
    old: int
    new: int


@dataclass(frozen=True)
class HeldBack:
    """An ephemeral message's edit waited ``waited`` s for the flood limiter (#24)."""

    to: Address  # the ephemeral message
    version: str  # the table version its newest content renders (``<table>#<n>``)
    waited: float


Event = PrivateForbidden | Kicked | Migrated | Replaced | HeldBack


class Events:
    """The delivery's events in order: :meth:`put` never waits; the reader takes
    them with ``async for``."""

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Event] = asyncio.Queue()

    def put(self, event: Event) -> None:
        self._queue.put_nowait(event)

    def drain(self) -> list[Event]:
        """The events waiting now (none left after)."""
        out = []
        while not self._queue.empty():
            out.append(self._queue.get_nowait())
        return out

    async def __aiter__(self) -> AsyncIterator[Event]:
        while True:
            yield await self._queue.get()


__all__ = [
    "Event",
    "Events",
    "Forbidden",
    "HeldBack",
    "Kicked",
    "Migrated",
    "PrivateForbidden",
    "Replaced",
]
