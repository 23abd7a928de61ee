"""Replays (issue #16): a finished game's record from the table service, stepped
through move by move (``/replay``, the *Replay* button) by the rules
(:mod:`engine.replay`).  The game is over, so a replay shows every hand: only
its players see it (a group's other members saw the public view only)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine import EngineError
from engine.replay import ReplayStep, may_watch
from engine.replay import replay_step as step_record
from tables import LiveError, TableService
from telegram_bot.delivery import Delivery
from telegram_bot.publishing.changes import ReplayStepped
from telegram_bot.views.fair import deal_check_text
from telegram_bot.views.i18n import Translator
from telegram_bot.views.miniapp import MiniApp
from telegram_bot.views.replay import render_replay


async def recent_records(svc: TableService, user: int) -> list[tuple[str, int, Mapping[str, Any]]]:
    """His recent finished games still kept: (table, game number, record),
    newest first (``/replay``, the Mini App's player page)."""
    found: list[tuple[str, int, Mapping[str, Any]]] = []
    for table, game in await svc.replays.recent(user):
        try:
            record = await svc.replays.record(table, game)
        except LiveError as e:
            if e.code == "no_record":
                continue  # expired since
            raise
        found.append((table, game, record))
    return found


async def record_for(svc: TableService, table: str, game: int, user: int) -> dict[str, Any]:
    """A kept record ``user`` may replay: only a player of the game (a replay
    shows every hand, #28).  Raises :class:`LiveError` ``no_record`` (expired
    or never played) or ``not_allowed``."""
    record = await svc.replays.record(table, game)
    if not may_watch(record, user):
        raise LiveError("not_allowed", "only the game's players can replay it")
    return record


class ReplayStatus(enum.Enum):
    EDITED = "edited"  # the pressed replay message shows the step now
    SENT = "sent"  # a new replay message in his private chat
    EXPIRED = "expired"  # no record (expired, or never played)
    NOT_YOURS = "not_yours"
    START_FIRST = "start_first"  # the bot may not write to him in private


@dataclass(frozen=True)
class ReplayGame:
    svc: TableService
    delivery: Delivery
    app: MiniApp | None = None  # the Mini App: a replay message's button to its viewer (#42)

    @property
    def days(self) -> int:
        """How many days records are kept."""
        return max(1, round(self.svc.config.replay_ttl / 86400))

    async def recent(self, user: int) -> list[tuple[str, int, Mapping[str, Any]]]:
        """His recent finished games still kept: (table, game number, record)."""
        return await recent_records(self.svc, user)

    async def step(self, table: str, game: int, step: int, user: int) -> ReplayStep:
        """Step ``step`` (clamped to the record) of a kept record.  Raises
        :class:`LiveError` ``no_record`` (expired or never played) or ``not_allowed``."""
        record = await record_for(self.svc, table, game, user)
        try:
            return step_record(record, step)
        except EngineError as e:  # pragma: no cover - the service writes valid records
            raise LiveError("no_record", f"the record cannot be replayed: {e.message}") from None

    async def show(
        self, table: str, game: int, step: int, user: int, locale: str, *, edit: int | None
    ) -> tuple[ReplayStatus, ReplayStepped | None]:
        """Show the step in his private chat: on the replay message ``edit`` (its
        ◀ ▶ pressed there: the edit is the change to show once the press is
        answered), else in a new message (sent now: the answer says whether it
        could be)."""
        try:
            shown = await self.step(table, game, step, user)
        except LiveError as e:
            if e.code == "no_record":
                return ReplayStatus.EXPIRED, None
            if e.code == "not_allowed":
                return ReplayStatus.NOT_YOURS, None
            raise
        if edit is not None:  # the same step again changes nothing: no edit goes out
            return ReplayStatus.EDITED, ReplayStepped(shown, user, edit, locale)
        text, markup = render_replay(shown, locale=locale, app=self.app)
        if await self.delivery.send(user, text, markup) is None:
            return ReplayStatus.START_FIRST, None
        return ReplayStatus.SENT, None

    async def check(
        self, table: str, game: int, user: int, locale: str
    ) -> tuple[ReplayStatus, str | None]:
        """*Check the deal* (#29): the seed, the commitment and the command that
        checks them, sent to his private chat (anyone may check a finished deal:
        its seed is no secret any more); with START_FIRST the seed, for a
        short answer."""
        try:
            record = await self.svc.replays.record(table, game)
        except LiveError as e:
            if e.code == "no_record":
                return ReplayStatus.EXPIRED, None
            raise
        text = deal_check_text(record, Translator(locale))
        if await self.delivery.send(user, text, None) is None:
            return ReplayStatus.START_FIRST, str(record["seed"])
        return ReplayStatus.SENT, None


__all__ = ["ReplayGame", "ReplayStatus", "ReplayStep"]
