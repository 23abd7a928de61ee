"""What the views read of a table (pure: a value, no Redis): the table service's
state and the bot's chat state of it, as loaded together by
:class:`telegram_bot.state.snapshot.Snapshots`; where a table and a hand live.

Its field types are imported for type checking only: at run time this module
imports nothing of the service or the chat-state store, so the views that
read it stay pure (the ``views-pure`` contract, no indirect imports)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tables.model import Table
from tables.rating_model import Settlement

if TYPE_CHECKING:  # type-only: the contract ignores these two edges (pyproject)
    from tables.tables import Loaded
    from telegram_bot.state.chat_state import TableUi


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


def thread_in(table: Table, chat: int) -> int | None:
    """Where in ``chat`` the table's messages go: its topic when ``chat`` is the
    forum group it was opened in (``Table.thread``, ``message_thread_id``);
    None elsewhere -- a private chat, General, a group without topics."""
    return table.thread if chat == table.chat else None


def hand_target(user: int, msg: int, group: int | None) -> tuple[int, int, int | None]:
    """Where ``user``'s hand ``msg`` is: (chat, message id, ephemeral receiver or
    None) -- the fields of a :class:`telegram_bot.delivery.address.Address`; a
    hand in the group is stored as minus its ``ephemeral_message_id``."""
    if msg < 0 and group is not None:
        return group, -msg, user
    return user, msg, None
