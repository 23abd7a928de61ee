"""*My cards* on a group's table message: the presser's hand shown in the group,
to him alone (issue 14); a presser who does not play there gets a toast."""

from __future__ import annotations

import time
from dataclasses import dataclass

from engine import EngineError
from engine.clock import Clock
from tables import OPEN, PLAYING, TableService
from telegram_bot.publishing.changes import HandShown
from telegram_bot.state.snapshot import group_of
from telegram_bot.views import texts

REPLY_WINDOW = 10.0
"""Seconds after a press arrives during which an ephemeral reply may still be tied
to it: Telegram refuses one to a press older than 15 s, and the update took
some of them to arrive."""


@dataclass(frozen=True)
class CardsOutcome:
    """What *My cards* is answered with (a msgid, a toast), and the hand to show
    after the answer (None: nothing)."""

    said: str
    change: HandShown | None = None


@dataclass(frozen=True)
class MyCards:
    svc: TableService
    clock: Clock = time.monotonic  # the delivery's clock (Delivery.clock)
    reply_window: float = REPLY_WINDOW

    async def __call__(self, table_id: str, user: int, query_id: str) -> CardsOutcome:
        """Is he seated there, in a game on?  One read, no lock, nothing sent:
        the press is answered at once and his hand shown after it (#28: the
        answer waited behind the table's lock and the group's flood tokens)."""
        received = self.clock()
        try:
            t = await self.svc.lobbies.lobby(table_id)
        except EngineError as e:  # #41: a table gone says so, not "you do not play here"
            return CardsOutcome(texts.REFUSALS.get(e.code, texts.REFUSALS["no_table"]))
        if t.status == OPEN:
            return CardsOutcome(texts.REFUSALS["no_game"])
        if t.status != PLAYING:  # #41: before "not seated" -- a player who left it too
            return CardsOutcome(texts.ARENA_GAME_OVER if t.arena else texts.REFUSALS["game_over"])
        seat = t.seat_of(user)
        if seat is None or t.seats[seat].left or group_of(t) is None:
            return CardsOutcome(texts.REFUSALS["not_seated"])
        shown = HandShown(t.id, user, query_id, received + self.reply_window)
        return CardsOutcome(texts.CARDS_HERE, shown)
