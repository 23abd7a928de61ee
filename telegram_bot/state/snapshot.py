"""A table as the bot loads it to show it: the table service's state and the
bot's chat state of it, read together; where a table and a hand live."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from tables import OVER, Loaded, Table, TableService
from tables.ratings import Settlement
from telegram_bot.state.chat_state import ChatStateStore, TableUi


@dataclass
class Snapshot:
    """A table as loaded for rendering."""

    loaded: Loaded
    ui: TableUi
    settlement: Settlement | None = None
    """Once its game is over: what the game did to the ratings (#25; None:
    not settled yet, or no human played)."""

    @property
    def table(self) -> Table:
        return self.loaded.table

    @property
    def version(self) -> int:
        return self.loaded.version


def group_of(table: Table) -> int | None:
    """The group the table plays in (None: a private game)."""
    return table.chat if table.chat is not None and table.chat < 0 else None


def hand_target(user: int, msg: int, group: int | None) -> tuple[int, int, int | None]:
    """(chat, message key, ephemeral receiver or None) of ``user``'s hand ``msg``."""
    if msg < 0 and group is not None:
        return group, msg, user
    return user, msg, None


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
