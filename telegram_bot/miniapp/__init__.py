"""The Mini App's server (#42): an adapter beside the handlers.  The page
(``static/``), its live channel (:mod:`.session`, one WebSocket a page, bound
to the Telegram user its init data proves, :mod:`.auth`), the pages kept live
across the fleet (:mod:`.hub`, over the tables' live channels), its reads (:mod:`.api`: a
replay, the player page) and the HTTP routes with their security headers
(:mod:`.server`).  It calls use cases
(:class:`telegram_bot.usecases.page.PageTables`) and hands what they changed
to the publisher, as a handler does; it never imports redis."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from aiohttp import web

from telegram_bot.miniapp.api import PageReads
from telegram_bot.miniapp.hub import Feed, LiveHub
from telegram_bot.miniapp.server import miniapp_application, origin_of
from telegram_bot.miniapp.session import MoveLimit, PageChannel, PageConfig
from telegram_bot.publishing.changes import Shows
from telegram_bot.settings import Settings
from telegram_bot.usecases.page import PageTables


class PageServer:
    """The Mini App of one bot process: ``web_app()`` to serve, ``run(stop)``
    (a background task) to keep its pages live."""

    def __init__(
        self,
        settings: Settings,
        cases: PageTables,
        publisher: Shows,
        feed: Callable[[], AbstractAsyncContextManager[Feed]],
        clock: Callable[[], float],
    ) -> None:
        self.settings = settings
        self.hub = LiveHub(
            feed,
            cases.load,
            backoff_base=settings.loop_backoff_base,
            backoff_cap=settings.loop_backoff_cap,
        )
        self.channel = PageChannel(
            PageConfig(
                settings.bot_token,
                settings.miniapp_init_data_max_age,
                clock,
                renew_every=settings.miniapp_page_ttl / 3,
            ),
            cases,
            self.hub,
            publisher,
            MoveLimit(settings.miniapp_moves, settings.miniapp_moves_window),
        )
        self.reads = PageReads(  # a replay, the player page: limited like moves
            self.channel.config,
            cases,
            MoveLimit(settings.miniapp_moves, settings.miniapp_moves_window),
        )

    def web_app(self) -> web.Application:
        s = self.settings
        framers = s.miniapp_frame_ancestors.split()
        return miniapp_application(
            self.channel.handle,
            web_app_js=s.telegram_web_app_js,
            framers=framers,
            reads=self.reads.routes(),
        )

    async def run(self, stop: asyncio.Event) -> None:
        await asyncio.gather(self.hub.run(stop), self.channel.keep_open(stop))

    async def aclose(self) -> None:
        for session in list(self.channel.sessions):
            with contextlib.suppress(Exception):
                await session.ws.close(code=1012)  # service restart: the page reconnects
        await self.hub.aclose()


__all__ = ["PageServer", "origin_of"]
