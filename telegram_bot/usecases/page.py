"""The Mini App's page (#42): which table a page shows, the table as read for
its viewers, the reader's language, and a move from the page -- through the
very use case of a hand button (:meth:`telegram_bot.usecases.press.PressButton.page_move`).
The page's adapter (:mod:`telegram_bot.miniapp`) calls these and nothing
below them."""

from __future__ import annotations

from dataclasses import dataclass

from tables import LiveError, Loaded, ServiceUnavailable, TableService
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.usecases.press import PageMove, PressButton, PressOutcome
from telegram_bot.views.i18n import pick_language


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
