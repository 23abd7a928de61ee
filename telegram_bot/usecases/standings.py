"""What the bot tells of games and players without changing anything: one's
stats (``/stats``), a group's leaderboard (``/top``), and the lobby an inline
query invites to."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine import EngineError
from tables import OPEN, LeaderboardEntry, Table, TableService, UserStats
from tables.ratings import VARIANTS, BoardRow, PlayerRatings
from telegram_bot.buttons.callbacks import CODE_PATTERN
from telegram_bot.publishing.changes import Change, TopSent
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.usecases.arena import answer_at

LEADERBOARD_ROWS = 50


@dataclass(frozen=True)
class RatingTop:
    """``/top``: the group's players by rating (``boards``), answered in the
    group now (``here``), or sent elsewhere (``changes``, #38)."""

    boards: dict[str, list[BoardRow]]
    here: bool
    changes: tuple[Change, ...] = ()


@dataclass(frozen=True)
class Standings:
    svc: TableService
    prefs: PrefsCache | None = None  # who started the bot (#38)

    async def stats(self, user: int) -> UserStats:
        return await self.svc.results.user_stats(user)

    async def top(self, chat: int) -> list[LeaderboardEntry]:
        return await self.svc.results.leaderboard(chat, limit=LEADERBOARD_ROWS)

    async def rating_board(self, chat: int) -> dict[str, list[BoardRow]]:
        """The chat's players (those who played in it) by rating, per game (#25)."""
        rows = await self.svc.results.leaderboard(chat, limit=1000)
        users = [r.user for r in rows]
        return {v: await self.svc.ratings.board(users, v) for v in VARIANTS}

    async def rating_top(
        self, chat: int, user: int | None, locale: str, chat_locale: str, thread: int | None = None
    ) -> RatingTop:
        """``/top`` in group ``chat``: its players by rating (#25).  #38: while the
        group's arena is on, to the member's private chat (in ``locale``), or to
        the group once a minute at low priority, else nowhere
        (:func:`telegram_bot.usecases.arena.answer_at`) -- in ``thread``, the
        forum topic the command was sent in."""
        boards = await self.rating_board(chat)
        at = await answer_at(self.svc, self.prefs, chat, user, "top") if user else None
        if at is None or (at.chat == chat and not at.low):
            return RatingTop(boards, here=True)
        if at.chat is None:
            return RatingTop(boards, here=False)
        lang = locale if at.chat == user else chat_locale
        where = thread if at.chat == chat else None
        sent = TopSent(at.chat, boards, lang, at.low, where)
        return RatingTop(boards, here=False, changes=(sent,))

    async def ratings(self, user: int) -> PlayerRatings:
        """His ratings, reliability and cooldown (``/rating``, #25)."""
        return await self.svc.ratings.of(user)

    async def invitation(self, code: str, user: int) -> Table | None:
        """The open lobby an inline query names (``code``), else the one he sits
        at; None if there is none."""
        try:
            table = await self.svc.lobbies.lobby(code) if re.match(CODE_PATTERN, code) else None
            if table is None or table.status != OPEN:
                table = await self.svc.tables.where(user)
        except EngineError:
            return None
        return table if table is not None and table.status == OPEN else None
