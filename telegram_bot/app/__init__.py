"""Assembling the bot -- the composition root: the aiogram ``Bot`` (pointed at
``TELEGRAM_API_URL``), the Dispatcher with its routers and middlewares, what the
handlers are given (aiogram passes each by its parameter's name: ``cases`` --
every use case, one typed :class:`telegram_bot.usecases.cases.UseCases` --,
``publisher``, which shows what a use case changed once the user is answered,
``bot_username``, ``settings`` and ``miniapp``), the update dedupe in front of
every handler (:mod:`telegram_bot.state.dedupe`: an update delivered twice is
handled once), and the parts that run it, each a module of its own:

* :mod:`telegram_bot.app.loops`: the background loops (turn timers, the notify
  subscriber, the sweep of pending renders, the Mini App's live channels) and
  the renders they spawn;
* :mod:`telegram_bot.app.dispatch`: the delivery's events, each handed to its
  use case (#39);
* :mod:`telegram_bot.app.polling`: long polling under the fleet's poll lease
  (#28); the webhook server is :mod:`telegram_bot.__main__`'s;
* :mod:`telegram_bot.app.menus`: the command menu and the Mini App's menu
  button, set at start-up.

Handlers answer a failure with an apology (:mod:`telegram_bot.handlers.errors`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from aiogram import Bot, Dispatcher, Router
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer

from engine.clock import Clock, scaled
from tables import (
    Decider,
    LiveConfig,
    PoolDecider,
    ServiceUnavailable,
    TableService,
)
from tables.timers import NO_HOOKS, TimerHooks
from telegram_bot.app.dispatch import EventDispatcher
from telegram_bot.app.loops import Background, Backoff, Renders, on_arena
from telegram_bot.app.menus import set_commands, set_menu_button
from telegram_bot.app.polling import Polling, stopped_meanwhile
from telegram_bot.delivery import Delivery, DeliveryConfig, make_delivery
from telegram_bot.delivery.flood.rates import FloodConfig
from telegram_bot.handlers import routers
from telegram_bot.handlers.middlewares import InFlight, LocaleMiddleware
from telegram_bot.miniapp import PageServer
from telegram_bot.publishing.arena_board import ArenaBoards
from telegram_bot.publishing.hands import HandPlacement
from telegram_bot.publishing.lobby_messages import LobbyMessages
from telegram_bot.publishing.locks import TableLocks
from telegram_bot.publishing.parts import GroupGaps, PublisherOutlets, PublisherStores
from telegram_bot.publishing.publisher import Publisher
from telegram_bot.settings import Settings
from telegram_bot.state.budgets import BudgetRules, Budgets
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.claims import WriteClaims
from telegram_bot.state.dedupe import UpdateDedupe
from telegram_bot.state.hints import HintClaims
from telegram_bot.state.pages import PageMoves, PagePresence
from telegram_bot.state.pending_renders import RenderMarks
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.state.snapshot import Snapshots
from telegram_bot.usecases.arena import ArenaActions
from telegram_bot.usecases.cards import MyCards
from telegram_bot.usecases.cases import UseCases
from telegram_bot.usecases.delivery_events import DeliveryEvents
from telegram_bot.usecases.lobby import LobbyActions
from telegram_bot.usecases.page import PageTables
from telegram_bot.usecases.player import PlayerActions
from telegram_bot.usecases.press import PressButton
from telegram_bot.usecases.replay import ReplayGame
from telegram_bot.usecases.standings import Standings
from telegram_bot.usecases.watch import WatchTable
from telegram_bot.views.i18n import get_i18n
from telegram_bot.views.miniapp import MiniApp, miniapp_of

__all__ = ["Backoff", "BotApp", "build_bot", "build_delivery"]

log = logging.getLogger(__name__)


def build_bot(settings: Settings) -> Bot:
    session = AiohttpSession(api=TelegramAPIServer.from_base(settings.telegram_api_url))
    return Bot(
        settings.bot_token,
        session=session,
        default=DefaultBotProperties(parse_mode="HTML", link_preview_is_disabled=True),
    )


def build_service(settings: Settings, clock: Clock | None, decider: Decider | None) -> TableService:
    """The table service of ``settings`` (``clock``: a test's; None: the wall
    clock): a bounded pool of Redis connections that waits for a free one
    instead of failing."""
    config = LiveConfig(
        prefix=settings.redis_prefix,
        timeouts_to_ai=settings.ai_takeover_timeouts,
        rated_after_games=settings.rated_after_games,
        rated_after_days=settings.rated_after_days,
        rated_diversity_opponents=settings.rated_diversity_opponents,
        rated_diversity_days=settings.rated_diversity_days,
        rating_log_maxlen=settings.rating_log_maxlen,
    )
    size = settings.redis_connections
    if clock is not None:
        return TableService.from_url(
            settings.redis_url, config, clock=clock, max_connections=size, decider=decider
        )
    return TableService.from_url(settings.redis_url, config, max_connections=size, decider=decider)


def build_delivery(settings: Settings, bot: Bot, svc: TableService, budgets: Budgets) -> Delivery:
    """Coalesced edits through the shared Redis flood limiter."""
    return make_delivery(
        bot,
        kv=svc.kv if settings.flood_limiter else None,
        config=DeliveryConfig(
            soon_delay=settings.soon_delay,
            later_delay=settings.later_delay,
            table_delay=settings.table_delay,
            # a hand in the group held back by the group's flood limit: said once (#24)
            held_after=settings.flood_hint_after,
        ),
        flood=FloodConfig.with_overall(settings.flood_overall_limit, settings.flood_overall_window),
        budgets=budgets,
        time_scale=settings.telegram_time_scale,
        fleet=lambda: svc.timers.processes,  # #40: the fallback's share
        # #40: a table's render sent while its chat falls back, claimed in
        # the table's own slot once the chat's windows turned over
        claims=svc.tables,
    )


def page_stores(
    svc: TableService, settings: Settings
) -> tuple[PagePresence | None, PageMoves | None]:
    """The Mini App's open pages, fleet-wide: a player's hand waits while his
    page is open (#42 point 6); his page moves counted over the fleet.  None
    while ``MINIAPP_URL`` is unset."""
    s = settings
    if not s.miniapp_url:
        return None, None
    pages = PagePresence(
        svc.kv,
        ttl=s.miniapp_page_ttl,
        shards=s.render_shards,
        clock=svc.clock,
        ui_ttl=svc.config.game_ttl,
    )
    moves = PageMoves(svc.kv, s.miniapp_moves, s.miniapp_moves_window, clock=svc.clock)
    return pages, moves


def _fresh(router: Router) -> Router:
    """A copy of a module router (its handlers, filters and middlewares shared):
    module routers are singletons, and a router has one parent -- so each
    Dispatcher (a restart in the same process, or two bot processes side by side
    as the tests run them) includes copies of its own."""
    copy = Router(name=router.name)
    for name, observer in router.observers.items():
        target = copy.observers[name]
        target.handlers = list(observer.handlers)
        target._handler = observer._handler  # filters of the whole observer
        for middleware in observer.outer_middleware:
            target.outer_middleware.register(middleware)
        for middleware in observer.middleware:
            target.middleware.register(middleware)
    for sub in router.sub_routers:
        copy.include_router(_fresh(sub))
    return copy


class BotApp:
    """One bot process: ``await app.setup()``, then ``await app.run_polling()`` (or
    the webhook server of ``__main__``), ``await app.aclose()`` at the end.
    ``bot``, ``svc``, ``clock``: a test's or a benchmark's (None: made from
    ``settings``)."""

    def __init__(
        self,
        settings: Settings,
        *,
        bot: Bot | None = None,
        svc: TableService | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.settings = settings
        self.bot = bot or build_bot(settings)
        # the hard AI thinks in other processes: the loop keeps answering presses
        # (a pool of its own: made before the service that computes with it)
        self.decider: Decider | None = None
        if settings.ai_workers:
            self.decider = PoolDecider(settings.ai_workers)
        if svc is None:
            svc = build_service(settings, clock, self.decider)
        elif self.decider is not None:  # a service given (tests): ours from now on
            svc.use_decider(self.decider)
        self.svc = svc
        # the groups' budgets learned from 429s (#24), the bot's own state; a
        # group's before a 429 taught it otherwise: the setting
        rules = BudgetRules(counted=settings.flood_ephemeral_counted)
        # on Telegram's clock: scaled with it in tests (#37), as the delivery's
        scale = settings.telegram_time_scale
        budget_clock = svc.clock if scale == 1 else scaled(time.time, scale)
        self.budgets = Budgets(svc.kv, rules, clock=budget_clock)
        self.ui = ChatStateStore.of(svc)
        self.prefs = PrefsCache(self.ui)
        self.dp = Dispatcher()
        self.updates = InFlight()  # the updates being handled (stop lets them finish)
        self.dp.update.outer_middleware(self.updates)
        self.ready = asyncio.Event()  # Redis answered (wait_for_redis)
        self.renders = Renders()  # spawned off the loops and the delivery's events
        self.background = Background(svc, settings, self.renders)
        self.polling = Polling(
            self.dp, self.bot, svc.kv, settings.poll_lease_ttl, self.background.stop
        )
        # made by setup (it asks Telegram for the bot's username first)
        self._delivery: Delivery | None = None
        self.publisher: Publisher | None = None
        self.timer_hooks = NO_HOOKS  # the adapter's part of a timer tick
        self.hands: HandPlacement | None = None
        self.miniapp: MiniApp | None = None  # the Mini App (#42)
        self.cases: UseCases | None = None
        self.page_server: PageServer | None = None  # the Mini App's pages (#42; MINIAPP_URL)
        self._events: asyncio.Task[None] | None = None  # the delivery's events (#39)

    async def setup(self) -> None:
        me = await self.bot.me()
        username = me.username or ""
        s, svc = self.settings, self.svc
        self._delivery = delivery = build_delivery(s, self.bot, svc, self.budgets)
        marks = RenderMarks(svc.kv, grace=s.render_grace, shards=s.render_shards, clock=svc.clock)
        snapshots = Snapshots(svc, self.ui)
        locks, claims = TableLocks(), WriteClaims()
        # the Mini App (#42): None while MINIAPP_URL is unset (no button opens it)
        self.miniapp = miniapp_of(s.miniapp_url, s.miniapp_short_name, username)
        pages, moves = page_stores(svc, s)
        self.hands = HandPlacement(svc, snapshots, self.ui, delivery, username, app=self.miniapp)
        lobbies = LobbyMessages(snapshots, self.ui, delivery, username)
        # arenas (#27): their messages; their wakes come from the timers
        arenas = ArenaBoards(self.ui, delivery, HintClaims.of(svc), svc.arenas.now_ms)
        self.publisher = publisher = Publisher(
            PublisherStores(snapshots, self.ui, locks, claims, marks, HintClaims.of(svc), pages),
            delivery,
            PublisherOutlets(self.hands, lobbies, username, arenas, self.miniapp),
            GroupGaps(table=s.table_delay_in_group, later=s.later_delay_in_group),
        )
        learned = DeliveryEvents(svc, self.ui)
        press = PressButton(svc, self.ui, snapshots, claims, marks)
        self.cases = cases = UseCases(
            press=press,
            lobby=LobbyActions(svc, self.ui, self.prefs, delivery, username),
            player=PlayerActions(svc, self.ui, self.prefs, delivery, learned),
            # the window of a press's reply: real seconds on the delivery's clock
            my_cards=MyCards(svc, delivery.clock, s.press_reply_window * s.telegram_time_scale),
            watch=WatchTable(snapshots, self.ui, delivery, self.miniapp),
            replay=ReplayGame(svc, delivery, self.miniapp),
            standings=Standings(svc, self.prefs),
            arena=ArenaActions(svc, delivery, self.prefs, username),
            page=PageTables(svc, self.prefs, press, pages=pages, moves=moves),
        )
        if s.miniapp_url:  # #42: its pages served by this process, kept live
            self.page_server = PageServer(s, cases.page, publisher, svc.live, time.time)
        # what the delivery learns (a 403, a group moved, a message sent anew, a
        # hand held back) comes up as events, each handed to its use case (#39)
        dispatcher = EventDispatcher(cases, learned, self.prefs, publisher, self.renders)
        self._events = asyncio.create_task(dispatcher.run(delivery.events), name="delivery events")
        # given with every timer tick (#39: nothing wired into the service): a
        # timer's write marks its render first, as a press does (#28), and an
        # arena's wake comes back here
        self.timer_hooks = TimerHooks(
            before_write=marks.set, on_arena=on_arena(publisher, self.renders)
        )
        dp = self.dp
        # what the handlers are given (aiogram passes each by its parameter's name)
        dp["cases"] = cases
        dp["publisher"] = publisher
        dp["bot_username"] = username
        dp["settings"] = s
        dp["miniapp"] = self.miniapp
        if s.update_dedupe:  # before any handler (after aiogram's own)
            dp.update.outer_middleware(UpdateDedupe(svc.kv, s.update_dedupe_ttl))
        for router in routers():
            dp.include_router(_fresh(router))
        LocaleMiddleware(get_i18n(), self.prefs).setup(dp)
        if s.set_commands:
            await set_commands(self.bot)
        if self.miniapp is not None:
            await set_menu_button(self.bot, self.miniapp)

    @property
    def delivery(self) -> Delivery:
        """The bot's outgoing messages (made by :meth:`setup`)."""
        if self._delivery is None:
            raise RuntimeError("BotApp.setup() makes the delivery")
        return self._delivery

    async def wait_for_redis(self) -> None:
        """Return once Redis (on a cluster: a node, with the slot map) answers,
        and set :attr:`ready`; until then try again with the loops' backoff,
        logging each failure as *not ready* -- a process started while Redis
        cannot be reached waits for it instead of taking updates it can only
        answer with "unavailable" (#28)."""
        s = self.settings
        backoff = Backoff(s.loop_backoff_base, s.loop_backoff_cap)
        while True:
            try:
                await self.svc.admin.ping()
            except ServiceUnavailable as e:
                stopped_meanwhile()  # a stop's cancel that came back as the fault
                delay = backoff.next_delay()
                log.warning("not ready: %s; trying again in %.1f s", e, delay)
                await asyncio.sleep(delay)
            else:
                log.info("ready: Redis answers")
                await self._upgrade()
                self.ready.set()
                return

    async def _upgrade(self) -> None:
        """The data of an older release brought up to this one (#38: ratings
        into per-player slots), once per Redis; a fault only delays it to the
        next start (``python -m tables migrate-ratings`` does it by hand)."""
        try:
            moved = await self.svc.upgrade()
        except ServiceUnavailable as e:
            log.warning("upgrade of older data not done now (%s): again at the next start", e)
            return
        if moved:
            log.info("upgraded older data: %s", moved)

    # ------------------------------------------------------------------ running
    def start_background(self) -> None:
        """The background loops (:mod:`telegram_bot.app.loops`), after :meth:`setup`."""
        if self.publisher is None:
            raise RuntimeError("BotApp.setup() comes before the background loops")
        self.background.start(
            self.publisher, self.timer_hooks, self.page_server, catch_up=self.delivery.catch_up
        )

    async def run_polling(self, **kwargs: Any) -> None:
        """Long polling until stopped (``await app.stop_polling()``) -- only while
        this process holds the fleet's poll lease (:mod:`telegram_bot.app.polling`);
        the background loops run meanwhile."""
        self.start_background()
        try:
            await self.polling.run(**kwargs)
        finally:
            await self.stop_background()

    async def stop_polling(self) -> None:
        await self.polling.stop()

    async def stop_background(self) -> None:
        """Let the updates in hand finish (no new ones come once polling or the
        webhook stopped), stop the background loops, hand this process's turn
        timers over to the other processes (#28), and let the renders in flight
        finish (each within half the shutdown budget)."""
        await self.updates.drain(self.settings.shutdown_timeout / 2)
        await self.background.halt()
        await self.renders.drain(self.settings.shutdown_timeout / 2)

    async def aclose(self) -> None:
        await self.stop_background()
        if self.page_server is not None:  # its pages reconnect to another process
            await self.page_server.aclose()
        if self._delivery is not None:
            with contextlib.suppress(Exception):  # TimeoutError: a Telegram that holds us
                await asyncio.wait_for(self._delivery.flush(), self.settings.shutdown_timeout / 2)
            if self._events is not None:  # the flush's own events handled too
                for _ in range(3):
                    await asyncio.sleep(0)
                self._events.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._events
                await self.renders.drain(self.settings.shutdown_timeout / 2)
            if self.publisher is not None:  # the flushed renders' marks cleared
                await self.publisher.guard.aclose()
            await self._delivery.aclose()
        if self.decider is not None:
            await asyncio.to_thread(self.decider.close)
        await self.svc.aclose()
        await self.bot.session.close()
