"""A table as the bot loads it to show it: the table service's state and the
bot's chat state of it, read together (:class:`Snapshots`).  The value it makes,
:class:`~telegram_bot.state.snapshot_value.Snapshot`, is pure and lives in
:mod:`telegram_bot.state.snapshot_value` (the views read it); re-exported here."""

from __future__ import annotations

import asyncio

from tables import OVER, Loaded, Table, TableService
from telegram_bot.state.chat_state import ChatStateStore, TableUi
from telegram_bot.state.snapshot_value import Snapshot, group_of, hand_target, thread_in

__all__ = ["Snapshot", "Snapshots", "group_of", "hand_target", "thread_in"]


class Snapshots:
    """Loads a table with its chat state (the two reads go out together)."""

    def __init__(self, svc: TableService, ui: ChatStateStore) -> None:
        self.svc = svc
        self.ui = ui

    async def load(self, table_id: str) -> Snapshot:
        """Raises the service's :class:`LiveError` for a table that is gone."""
        # both reads are awaited to their end, even when one fails (a table gone):
        # a read left running outlives its caller and, on a loaded machine, takes
        # a connection after the client closed -- a socket nobody closes
        loaded, ui = await asyncio.gather(
            self.svc.tables.load(table_id), self.ui.table(table_id), return_exceptions=True
        )
        if isinstance(loaded, BaseException):
            raise loaded
        if isinstance(ui, BaseException):
            raise ui
        settlement = None
        if loaded.table.status == OVER:  # the result shows the ratings' changes (#25)
            t = loaded.table
            settlement = await self.svc.ratings.settlement(t.id, t.game_no)
        return Snapshot(loaded, ui, settlement)

    async def of(self, loaded: Loaded) -> Snapshot:
        """``loaded`` (a write's own table, :meth:`tables.Loaded.after`) with the
        chat state read now: the one read a render of a move needs (#39)."""
        ui = await self.ui.table(loaded.table.id)
        settlement = None
        if loaded.table.status == OVER:
            t = loaded.table
            settlement = await self.svc.ratings.settlement(t.id, t.game_no)
        return Snapshot(loaded, ui, settlement)

    async def langs(self, t: Table, ui: TableUi) -> dict[int, str]:
        """Each human's language at the table: as recorded at the game's start,
        else from his preferences (read now, in one round trip)."""
        humans = [u for u in t.humans() if u not in ui.langs]
        langs = dict(ui.langs)
        if humans:
            prefs = await self.ui.many_prefs(humans)
            for u, p in prefs.items():
                langs[u] = p.lang or p.tg or "en"
        return langs
