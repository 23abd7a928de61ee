"""What a use case changed, as data for the publisher to show (never a closure):
the handler answers the user first, then hands the change to
:meth:`telegram_bot.publishing.publisher.Publisher.show`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from telegram_bot.buttons.moves import Selection
from telegram_bot.state.snapshot import Snapshot


@dataclass(frozen=True)
class Refresh:
    """A table changed: re-render the hand messages of ``seats`` (None: every
    human seat), the group's table message, lobby and spectators' messages;
    ``actor`` gets his own update at once.  ``wrote``: the version the caller's
    write made, claimed (``claim``, :class:`telegram_bot.state.claims.WriteClaims`)
    from the write on, so the write's own notification waits for this render
    instead of rendering the move twice."""

    table_id: str
    seats: tuple[int, ...] | None = None
    actor: int | None = None
    wrote: int = 0
    claim: asyncio.Event | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Redraw:
    """One player's hand message drawn again at once from a snapshot already
    loaded (his selection changed, or he pressed a stale button)."""

    snap: Snapshot
    user: int
    selection: Selection


@dataclass(frozen=True)
class GameStarted:
    """A game started (or a rematch): new hand and table messages."""

    table_id: str


@dataclass(frozen=True)
class HandToPrivate:
    """He opened his cards in private (the deep link): his hand there from now on."""

    table_id: str
    user: int


Change = Refresh | Redraw | GameStarted | HandToPrivate
