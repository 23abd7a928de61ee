"""The hands a Mini App page stands in for (#42 point 6): while a player's
page is open on the table -- on any bot process (:mod:`telegram_bot.state.pages`)
-- the publisher leaves his hand message alone (:meth:`PageHands.shows`);
when his last page there closes, or expires with a process that died
(:meth:`PageHands.due`, a sweep), his hand is drawn once as the table is now
(:meth:`PageHands.closed`), versioned as any render: never older than what
it shows."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from tables import LiveError, survived
from telegram_bot.buttons.moves import Selection
from telegram_bot.publishing.locks import TableLocks
from telegram_bot.state.chat_state import TableUi
from telegram_bot.state.pages import PagePresence
from telegram_bot.state.snapshot import Snapshot, Snapshots

log = logging.getLogger(__name__)

Draw = Callable[[Snapshot, int, Selection], Awaitable[None]]
"""Draw one player's hand at once (:meth:`Publisher.render_seat`)."""


@dataclass
class PageHands:
    """``pages`` None: no page is recorded (every hand is edited as before)."""

    pages: PagePresence | None
    locks: TableLocks
    snapshots: Snapshots
    draw: Draw

    def shows(self, ui: TableUi, user: int) -> bool:
        """A page of ``user``'s is open on the table whose chat state is ``ui``."""
        return self.pages is not None and self.pages.open_in(ui, user)

    async def closed(self, table_id: str, users: Iterable[int]) -> None:
        """The last page of each of ``users`` closed (or expired): his hand,
        left alone meanwhile, drawn once as the table is now -- unless a page
        of his opened again.  A game over meanwhile drew it already (its
        result goes to every hand)."""
        async with self.locks.of(table_id):  # in order with the table's renders
            try:
                snap = await self.snapshots.load(table_id)
            except LiveError:
                return
            for user in users:
                if not self.shows(snap.ui, user):
                    await self.draw(snap, user, Selection.from_json(snap.ui.selections.get(user)))

    async def due(self, place: tuple[int, int] = (0, 1)) -> list[str]:
        """One sweep of the pages their process renews no more (it died), in
        this process's share of the shards (``place``, :meth:`OpenPages.sweep`):
        the hands of the players left with no live page drawn; the tables."""
        if self.pages is None:
            return []
        swept = await self.pages.sweep(place)
        for table_id, users in swept.items():
            with survived(log, "hands at %s not drawn after their pages expired", table_id):
                await self.closed(table_id, users)
        return list(swept)
