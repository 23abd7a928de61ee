"""Spectators (issue #16): someone not seated at a group's game asks to follow
it in his private chat (*Watch* under the table message, or ``/watch CODE``);
he gets the public view -- never a hand -- edited like the group's table
message (:meth:`telegram_bot.publishing.publisher.Publisher._watchers`)."""

from __future__ import annotations

from enum import StrEnum

from tables import LiveError
from telegram_bot.delivery import Delivery
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.snapshot import Snapshots, group_of
from telegram_bot.views.miniapp import MiniApp
from telegram_bot.views.table import watch_screen


class WatchStatus(StrEnum):
    WATCHING = "watching"
    NO_TABLE = "no_table"
    NOT_STARTED = "not_started"
    NOT_A_GROUP = "not_a_group"
    FORBIDDEN = "forbidden"  # the lobby forbids spectators
    SEATED = "seated"  # he plays: his hand message is his view
    CLOSED = "closed"  # the bot cannot write to him (he never started it)


class WatchTable:
    """Send a spectator the table's public view and keep it updated."""

    def __init__(
        self,
        snapshots: Snapshots,
        ui: ChatStateStore,
        delivery: Delivery,
        app: MiniApp | None = None,
    ) -> None:
        self.app = app  # the Mini App his message opens (#42; None: off)
        self.snapshots = snapshots
        self.ui = ui
        self.delivery = delivery

    async def __call__(self, table_id: str, user: int, lang: str) -> WatchStatus:
        try:
            snap = await self.snapshots.load(table_id)
        except LiveError:
            return WatchStatus.NO_TABLE
        t = snap.table
        if group_of(t) is None:
            return WatchStatus.NOT_A_GROUP
        if not t.spectators:
            return WatchStatus.FORBIDDEN
        if t.seat_of(user) is not None:
            return WatchStatus.SEATED
        if snap.loaded.state is None:
            return WatchStatus.NOT_STARTED
        # sent here, not after the answer: the answer says whether it could be
        text, markup = watch_screen(snap, lang, self.app)
        msg = await self.delivery.send(user, text, markup)
        if msg is None:
            return WatchStatus.CLOSED
        await self.ui.update_table(table_id, watchers={user: msg.message_id}, langs={user: lang})
        return WatchStatus.WATCHING


__all__ = ["WatchStatus", "WatchTable"]
