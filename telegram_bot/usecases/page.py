"""The Mini App's page (#42): which table a page shows, the table as read for
its viewers, the reader's language, and a move from the page -- through the
very use case of a hand button (:meth:`telegram_bot.usecases.press.PressButton.page_move`).
The page's adapter (:mod:`telegram_bot.miniapp`) calls these and nothing
below them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tables import LiveError, Loaded, ServiceUnavailable, TableService, UserStats
from tables.rating_model import PlayerRatings
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.usecases.press import PageMove, PressButton, PressOutcome
from telegram_bot.usecases.replay import recent_records, record_for
from telegram_bot.views.i18n import pick_language

RATING_HISTORY = 100
"""Entries of his rating's history a player page charts (as many as are kept)."""


@dataclass(frozen=True)
class PlayerData:
    """What a player page shows of him (#42): his ratings, reliability and
    cooldown, his rating's history (newest first), his counts, his recent
    games still kept (newest first)."""

    ratings: PlayerRatings
    history: Sequence[Mapping[str, Any]]
    stats: UserStats
    recent: Sequence[tuple[str, int, Mapping[str, Any]]]


@dataclass(frozen=True)
class PageTables:
    """The use cases of a page, over the services they need."""

    svc: TableService
    prefs: PrefsCache
    press: PressButton

    async def table_of(self, user: int, asked: str | None) -> str | None:
        """The table a page opened by ``user`` shows: the one it asks for (the
        page's ``?t=``, a direct link's ``start_param``), else the open lobby
        or game where he sits (None: none)."""
        if asked:
            return asked
        table = await self.svc.tables.where(user)
        return None if table is None else table.id

    async def load(self, table_id: str) -> Loaded | None:
        """The table as it is now (None: there is no such table)."""
        try:
            return await self.svc.tables.load(table_id)
        except LiveError:
            return None

    async def locale(self, user: int, telegram_language: str | None) -> str:
        """His language as the bot speaks it to him: his /lang, else Telegram's."""
        try:
            chosen = (await self.prefs.get(user)).lang
        except ServiceUnavailable:
            chosen = None
        return chosen or pick_language(telegram_language)

    async def move(self, move: PageMove) -> PressOutcome:
        return await self.press.page_move(move)

    async def replay(self, user: int, table: str, game: int) -> Mapping[str, Any]:
        """The record of a finished game ``user`` may replay -- a player of it,
        as ``/replay`` allows (:func:`telegram_bot.usecases.replay.record_for`);
        its steps: :func:`engine.replay.replay_steps`.  Raises :class:`LiveError`
        ``no_record`` or ``not_allowed``."""
        return await record_for(self.svc, table, game, user)

    @property
    def replay_days(self) -> int:
        """How many days records are kept (what a refused replay says)."""
        return max(1, round(self.svc.config.replay_ttl / 86400))

    async def player(self, user: int) -> PlayerData:
        """His own player page's data (nobody else's: the page proved who he is)."""
        ratings = self.svc.ratings
        return PlayerData(
            ratings=await ratings.of(user),
            history=await ratings.history(user, RATING_HISTORY),
            stats=await self.svc.results.user_stats(user),
            recent=await recent_records(self.svc, user),
        )
