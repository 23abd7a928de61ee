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
from telegram_bot.publishing.changes import PagesClosed
from telegram_bot.state.pages import OpenPage, PageMoves, PagePresence
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
    pages: PagePresence | None = None
    """The open pages across the fleet (#42 point 6; None: not recorded)."""
    moves: PageMoves | None = None
    """A player's page moves counted across the fleet (None: per process only)."""

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

    # ---------------------------------------------------------------- presence
    async def page_open(self, table_id: str, user: int, page: str) -> None:
        """``user``'s page ``page`` shows ``table_id`` (opened now, or still
        open: renewed for the presence's ``ttl``).  While one of his pages is
        open on any process, his hand message waits (#42 point 6).  Raises
        :class:`tables.ServiceUnavailable`."""
        if self.pages is not None:
            await self.pages.beat(OpenPage(table_id, user, page))

    async def pages_open(self, pages: list[tuple[str, int, str]]) -> None:
        """:meth:`page_open` of each ``(table, user, page)``; a failure of one
        does not stop the others (raised at the end)."""
        if self.pages is None or not pages:
            return
        await self.pages.beat_many([OpenPage(t, u, p) for t, u, p in pages])

    async def page_closed(self, table_id: str, user: int, page: str) -> PagesClosed | None:
        """``user``'s page ``page`` closed: his hand message brought up to date
        when it was his last on the table (any process).  Raises
        :class:`tables.ServiceUnavailable` (the page then expires: a sweep
        draws his hand)."""
        if self.pages is None:
            return None
        if await self.pages.close(OpenPage(table_id, user, page)):
            return PagesClosed(table_id, (user,))
        return None

    async def move_allowed(self, user: int) -> bool | None:
        """Is one more page move of ``user``'s within his flood limit over the
        fleet (None: not counted here -- no fleet-wide limit, or Redis down;
        the process's own limit decides)."""
        if self.moves is None:
            return None
        try:
            return await self.moves.allow(user)
        except ServiceUnavailable:
            return None

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
