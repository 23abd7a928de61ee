"""A table as the bot loads it to show it: the table service's state and the
bot's chat state of it, read together; where a table and a hand live."""

from __future__ import annotations

from dataclasses import dataclass

from tables import Loaded, Table
from telegram_bot.state.chat_state import TableUi


@dataclass
class Snapshot:
    """A table as loaded for rendering."""

    loaded: Loaded
    ui: TableUi

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
