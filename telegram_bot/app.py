"""Assembling the bot: the aiogram ``Bot`` (pointed at ``TELEGRAM_API_URL``), the
Dispatcher with its routers and middlewares, what the handlers are given
(aiogram passes each by its parameter's name: ``cases`` -- every use case, one
typed :class:`telegram_bot.usecases.cases.UseCases` --, ``publisher``, which shows
what a use case changed once the user is answered, ``bot_username`` and
``settings``), the update
dedupe in front of every handler (:mod:`telegram_bot.state.dedupe`: an update delivered
twice is handled once), and three background tasks:

* the turn-timer loop (:meth:`tables.timers.Timers.run_timers`), which
  re-renders the tables its timeout moves changed;
* a subscriber of the service's notify channel, which re-renders tables changed
  by other processes (timers, operators, players leaving) -- at most once per
  version in this process;
* the sweep of pending renders (:mod:`telegram_bot.state.pending_renders`): a table whose
  render outlived the process that marked it is rendered again; with it, the
  Mini App's pages whose process died (:mod:`telegram_bot.state.pages`): their
  players' hands are drawn again;
* with ``MINIAPP_URL`` set, a fourth: the live channels of the tables the Mini
  App's pages of this process show (:mod:`telegram_bot.miniapp`, #42).

No exception stops any loop: each failure is logged and the loop runs
again (the subscriber resubscribes) after an exponential backoff
(``LOOP_BACKOFF_BASE`` doubling up to ``LOOP_BACKOFF_CAP`` s, reset once it got
going); handlers answer with an apology (:mod:`telegram_bot.handlers.errors`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import Bot, Dispatcher, Router
from aiogram.client.default import DefaultBotProperties
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.exceptions import TelegramAPIError
from aiogram.types import (
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
    BotCommandScopeDefault,
)

from engine.clock import Clock, scaled
from tables import (
    Decider,
    LiveConfig,
    PoolDecider,
    ServiceUnavailable,
    TableService,
    WriteResult,
    expected_fault,
)
from tables.arena_runner import Woken
from tables.timers import NO_HOOKS, TimerHooks
from telegram_bot.delivery import Delivery, DeliveryConfig, Forbidden, make_delivery
from telegram_bot.delivery.events import (
    Event,
    HeldBack,
    Kicked,
    Migrated,
    PrivateForbidden,
    Replaced,
)
from telegram_bot.delivery.flood.rates import FloodConfig
from telegram_bot.handlers import routers
from telegram_bot.handlers.middlewares import InFlight, LocaleMiddleware
from telegram_bot.miniapp import PageServer
from telegram_bot.publishing.arena_board import ArenaBoards, woke
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
from telegram_bot.state.poll_lease import PollLease
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
from telegram_bot.views.i18n import (
    GROUP_COMMANDS,
    LANGUAGES,
    PRIVATE_COMMANDS,
    Translator,
    bot_commands,
    get_i18n,
)
from telegram_bot.views.miniapp import MiniApp, menu_button, miniapp_of

log = logging.getLogger(__name__)


def build_bot(settings: Settings) -> Bot:
    session = AiohttpSession(api=TelegramAPIServer.from_base(settings.telegram_api_url))
    return Bot(
        settings.bot_token,
        session=session,
        default=DefaultBotProperties(parse_mode="HTML", link_preview_is_disabled=True),
    )


class Backoff:
    """Exponential backoff of a background loop: ``base``, doubled per failure up
    to ``cap`` seconds; :meth:`reset` after a success."""

    def __init__(self, base: float, cap: float) -> None:
        self.base = base
        self.cap = cap
        self.failures = 0

    def next_delay(self) -> float:
        delay = min(self.cap, self.base * 2**self.failures)
        self.failures = min(self.failures + 1, 32)
        return delay

    def reset(self) -> None:
        self.failures = 0


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
    the webhook server of ``__main__``), ``await app.aclose()`` at the end."""

    def __init__(
        self,
        settings: Settings,
        *,
        bot: Bot | None = None,
        svc: TableService | None = None,
        clock: Clock | None = None,
        delivery_factory: Callable[[BotApp], Delivery] | None = None,
    ) -> None:
        self.settings = settings
        self.bot = bot or build_bot(settings)
        config = LiveConfig(
            prefix=settings.redis_prefix,
            timeouts_to_ai=settings.ai_takeover_timeouts,
            rated_after_games=settings.rated_after_games,
            rated_after_days=settings.rated_after_days,
            rated_diversity_opponents=settings.rated_diversity_opponents,
            rated_diversity_days=settings.rated_diversity_days,
            rating_log_maxlen=settings.rating_log_maxlen,
        )
        # the hard AI thinks in other processes: the loop keeps answering presses
        # (a pool of its own: made before the service that computes with it)
        self.decider: Decider | None = None
        if settings.ai_workers:
            self.decider = PoolDecider(settings.ai_workers)
        if svc is None:
            # a bounded pool that waits for a free connection instead of failing
            size = settings.redis_connections
            if clock is not None:
                svc = TableService.from_url(
                    settings.redis_url,
                    config,
                    clock=clock,
                    max_connections=size,
                    decider=self.decider,
                )
            else:
                svc = TableService.from_url(
                    settings.redis_url, config, max_connections=size, decider=self.decider
                )
        elif self.decider is not None:  # a service given (tests): ours from now on
            svc.use_decider(self.decider)
        self.svc = svc
        # the groups' budgets learned from 429s (#24), the bot's own state; a
        # group's before a 429 taught it otherwise: the setting
        rules = BudgetRules(counted=settings.flood_ephemeral_counted)
        # on Telegram's clock: scaled with it in tests (#37), as the delivery's
        scale = settings.telegram_time_scale
        clock = svc.clock if scale == 1 else scaled(time.time, scale)
        self.budgets = Budgets(svc.kv, rules, clock=clock)
        self.ui = ChatStateStore.of(svc)
        self.prefs = PrefsCache(self.ui)
        self._delivery_factory = delivery_factory or BotApp.default_delivery
        self._delivery: Delivery | None = None
        self.publisher: Publisher | None = None
        self.timer_hooks = NO_HOOKS  # the adapter's part of a timer tick (setup)
        self.hands: HandPlacement | None = None
        self.miniapp: MiniApp | None = None  # the Mini App (#42), made by setup
        self.cases: UseCases | None = None
        self.page_server: PageServer | None = None  # the Mini App's pages (#42; MINIAPP_URL)
        self.events = DeliveryEvents(svc, self.ui)
        self.dp = Dispatcher()
        self.updates = InFlight()  # the updates being handled (stop lets them finish)
        self.dp.update.outer_middleware(self.updates)
        self.stop = asyncio.Event()
        self.ready = asyncio.Event()  # Redis answered (wait_for_redis)
        self._tasks: list[asyncio.Task[None]] = []
        self._renders: set[asyncio.Task[None]] = set()
        self._events: asyncio.Task[None] | None = None  # the delivery's events (#39)
        self.loop_failures = 0  # background-loop failures so far (tests read it)
        self.subscriptions = 0  # times the notify subscriber (re)subscribed
        self.polls = False  # this process holds the poll lease (#28)
        self._polling = asyncio.Event()  # set: run_polling stops

    async def setup(self) -> None:
        me = await self.bot.me()
        username = me.username or ""
        self._delivery = self._delivery_factory(self)
        s = self.settings
        marks = RenderMarks(
            self.svc.kv, grace=s.render_grace, shards=s.render_shards, clock=self.svc.clock
        )
        snapshots = Snapshots(self.svc, self.ui)
        locks, claims = TableLocks(), WriteClaims()
        delivery = self.delivery
        # the Mini App (#42): None while MINIAPP_URL is unset (no button opens it)
        self.miniapp = miniapp_of(s.miniapp_url, s.miniapp_short_name, username)
        # its open pages, fleet-wide: a player's hand waits while his page is
        # open (#42 point 6); his page moves counted over the fleet
        pages = moves = None
        if s.miniapp_url:
            pages = PagePresence(
                self.svc.kv,
                ttl=s.miniapp_page_ttl,
                shards=s.render_shards,
                clock=self.svc.clock,
                ui_ttl=self.svc.config.game_ttl,
            )
            moves = PageMoves(
                self.svc.kv, s.miniapp_moves, s.miniapp_moves_window, clock=self.svc.clock
            )
        self.hands = HandPlacement(
            self.svc, snapshots, self.ui, delivery, username, app=self.miniapp
        )
        lobbies = LobbyMessages(snapshots, self.ui, delivery, username)
        # arenas (#27): their messages; their wakes come from the timers
        arenas = ArenaBoards(self.ui, delivery, HintClaims.of(self.svc), self.svc.arenas.now_ms)
        self.publisher = Publisher(
            PublisherStores(
                snapshots, self.ui, locks, claims, marks, HintClaims.of(self.svc), pages
            ),
            delivery,
            PublisherOutlets(self.hands, lobbies, username, arenas, self.miniapp),
            GroupGaps(table=s.table_delay_in_group, later=s.later_delay_in_group),
        )
        press = PressButton(self.svc, self.ui, snapshots, claims, marks)
        self.cases = UseCases(
            press=press,
            lobby=LobbyActions(self.svc, self.ui, self.prefs, delivery, username),
            player=PlayerActions(self.svc, self.ui, self.prefs, delivery, self.events),
            # the window of a press's reply: real seconds on the delivery's clock
            my_cards=MyCards(
                self.svc, delivery.clock, s.press_reply_window * s.telegram_time_scale
            ),
            watch=WatchTable(snapshots, self.ui, delivery, self.miniapp),
            replay=ReplayGame(self.svc, delivery, self.miniapp),
            standings=Standings(self.svc, self.prefs),
            arena=ArenaActions(self.svc, delivery, self.prefs, username),
            page=PageTables(self.svc, self.prefs, press, pages=pages, moves=moves),
        )
        if s.miniapp_url:  # #42: its pages served by this process, kept live
            self.page_server = PageServer(
                s, self.cases.page, self.publisher, self.svc.live, time.time
            )
        # what the delivery learns (a 403, a group moved, a message sent anew, a
        # hand held back) comes up as events, each handed to its use case (#39)
        self._events = asyncio.create_task(self._delivery_events(), name="delivery events")
        # given with every timer tick (#39: nothing wired into the service): a
        # timer's write marks its render first, as a press does (#28), and an
        # arena's wake comes back here
        self.timer_hooks = TimerHooks(before_write=marks.set, on_arena=self._on_arena)
        dp = self.dp
        # what the handlers are given (aiogram passes each by its parameter's name)
        dp["cases"] = self.cases
        dp["publisher"] = self.publisher
        dp["bot_username"] = username
        dp["settings"] = self.settings
        dp["miniapp"] = self.miniapp
        if self.settings.update_dedupe:  # before any handler (after aiogram's own)
            dp.update.outer_middleware(UpdateDedupe(self.svc.kv, self.settings.update_dedupe_ttl))
        for router in routers():
            dp.include_router(_fresh(router))
        LocaleMiddleware(get_i18n(), self.prefs).setup(dp)
        if self.settings.set_commands:
            await self.set_commands()
        if self.miniapp is not None:
            await self.set_menu_button(self.miniapp)

    @property
    def delivery(self) -> Delivery:
        """The bot's outgoing messages (made by :meth:`setup`)."""
        if self._delivery is None:
            raise RuntimeError("BotApp.setup() makes the delivery")
        return self._delivery

    def default_delivery(self) -> Delivery:
        """Coalesced edits through the shared Redis flood limiter."""
        return make_delivery(
            self.bot,
            kv=self.svc.kv if self.settings.flood_limiter else None,
            config=DeliveryConfig(
                soon_delay=self.settings.soon_delay,
                later_delay=self.settings.later_delay,
                table_delay=self.settings.table_delay,
                # a hand in the group held back by the group's flood limit: said once (#24)
                held_after=self.settings.flood_hint_after,
            ),
            flood=FloodConfig.with_overall(
                self.settings.flood_overall_limit, self.settings.flood_overall_window
            ),
            budgets=self.budgets,
            time_scale=self.settings.telegram_time_scale,
            fleet=lambda: self.svc.timers.processes,  # #40: the fallback's share
            # #40: a table's render sent while its chat falls back, claimed in
            # the table's own slot once the chat's windows turned over
            claims=self.svc.tables,
        )

    async def _delivery_events(self) -> None:
        """The dispatcher of the delivery's events (#39): each handed to its use
        case in a task of its own (a failure is logged)."""
        async for event in self.delivery.events:
            self._spawn(self._on_event(event))

    async def _on_event(self, event: Event) -> None:
        assert self.publisher is not None
        match event:
            case PrivateForbidden(user, kind):
                await self.on_forbidden(user, kind)
            case Migrated(old, new):  # a 400 "upgraded to a supergroup" (#38)
                await self.on_migrated(old, new)
            case Replaced(chat, old, new):
                await self.on_replaced(chat, old, new)
            case HeldBack():  # a hand in the group held back: say so once (#24)
                await self.publisher.held_back(event)
            case Kicked():  # the group's own service message tells (handlers)
                pass

    async def on_forbidden(self, user_id: int, kind: Forbidden) -> None:
        """A 403 of his private chat: the bot writes to him there no more (until he
        sends it something); he blocked it: the AI plays his seat, the table sees
        it -- not when he never started the bot (#38, :meth:`DeliveryEvents.forbidden`)."""
        await self.prefs.update(user_id, started=False)
        await self.events.forbidden(user_id, kind)

    async def on_migrated(self, old: int, new: int) -> None:
        """A call to the group ``old`` was answered 400 with ``migrate_to_chat_id``
        ``new`` (#38): the same as its service message -- its arena and tables
        stop, the players and the supergroup are told (a second time finds
        nothing to do)."""
        assert self.cases is not None
        assert self.publisher is not None
        outcome = await self.cases.arena.upgraded(old, new)
        await self.publisher.show(*outcome.changes)

    async def on_replaced(self, chat_id: int, old_id: int, new_id: int) -> None:
        """A message we edit was gone and was sent anew: remember the new id."""
        await self.events.replaced(chat_id, old_id, new_id)

    async def set_commands(self) -> None:
        """The command menu per language and scope (private chats, groups)."""
        for lang in (*LANGUAGES, None):
            private = bot_commands(lang or "en", PRIVATE_COMMANDS)
            group = bot_commands(lang or "en", GROUP_COMMANDS)
            for scope, cmds in (
                (BotCommandScopeAllPrivateChats(), private),
                (BotCommandScopeAllGroupChats(), group),
            ):
                await self.bot.set_my_commands(cmds, scope=scope, language_code=lang)
            if lang is None:
                await self.bot.set_my_commands(private, scope=BotCommandScopeDefault())

    async def set_menu_button(self, app: MiniApp) -> None:
        """The private chats' menu button opens the Mini App without a table:
        the user's lobbies and games (#42).  Set once, as every private chat's
        default; a failure is logged (the buttons in the messages still open it)."""
        # one default for all, in English: Telegram takes no language here (a
        # chat whose user speaks another gets its own, Publisher: AppMenuSet)
        button = menu_button(app, Translator("en"))
        try:
            await self.bot.set_chat_menu_button(menu_button=button)
        except TelegramAPIError as e:
            log.warning("the Mini App's menu button was not set: %s", e.message)

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

    # ------------------------------------------------------------------ background
    def start_background(self) -> None:
        self.stop.clear()
        self._tasks = [
            asyncio.create_task(self._timers(), name="timers"),
            asyncio.create_task(self._notifications(), name="notify"),
            asyncio.create_task(self._repairs(), name="repairs"),
        ]
        if self.page_server is not None:  # the pages' live channels (#42)
            self._tasks.append(asyncio.create_task(self.page_server.run(self.stop), name="pages"))

    async def _on_timer(self, result: WriteResult) -> None:
        assert self.publisher is not None
        if any(e.kind == "start" for e in result.events):
            # #38: a rematch offer ended -- its game starts with those who agreed
            self._spawn(self.publisher.start_game(result.table_id))
            return
        self._spawn(self.publisher.refresh(result.table_id, min_version=result.version))
        self._spawn(self.publisher.nudge(result))  # #25: a timeout, a takeover

    async def _on_arena(self, woken: Woken) -> None:
        """An arena woke (#27): its new games and standings shown, off the timer loop."""
        assert self.publisher is not None
        self._spawn(self.publisher.show(woke(woken)))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._renders.add(task)
        task.add_done_callback(self._render_done)

    def _render_done(self, task: asyncio.Task[None]) -> None:
        self._renders.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("re-render failed: %r", task.exception())

    async def _timers(self) -> None:
        """The turn-timer loop; restarted after any failure."""
        await self._forever("timer loop", self._run_timers)

    async def _run_timers(self, backoff: Backoff) -> None:
        await self.svc.timers.run_timers(
            self.stop,
            interval=self.settings.timer_interval,
            on_result=self._on_timer,
            hooks=self.timer_hooks,
        )

    async def _notifications(self) -> None:
        """Re-render tables written elsewhere (notify channel); resubscribed after
        any failure."""
        await self._forever("notify subscriber", self._subscribe)

    async def _subscribe(self, backoff: Backoff) -> None:
        assert self.publisher is not None
        async with self.svc.notifications() as notes:
            self.subscriptions += 1
            backoff.reset()  # subscribed (again)
            while not self.stop.is_set():
                note = await notes.get(timeout=0.5)
                if note is not None:
                    self._spawn(self.publisher.refresh(note.table, min_version=note.version))

    async def _repairs(self) -> None:
        """Sweep the pending renders that outlived their process; restarted after
        any failure."""
        await self._forever("render sweep", self._sweep)

    async def _sweep(self, backoff: Backoff) -> None:
        assert self.publisher is not None
        every = self.settings.render_grace / 4
        while not self.stop.is_set():
            await self.publisher.repair_due()
            await self.publisher.pages_due()  # #42 point 6: a dead process's pages
            backoff.reset()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), every)
        await self.publisher.stop_repairs()  # its shards to the others at once (#39)

    async def _forever(self, name: str, run: Callable[[Backoff], Awaitable[None]]) -> None:
        """Run ``run`` until stopped; after ANY exception (Redis down, a bug in a
        render, ...) log it and run it again after an exponential backoff
        (capped; reset once a run got going: subscribed, or ran past the cap)."""
        s = self.settings
        backoff = Backoff(s.loop_backoff_base, s.loop_backoff_cap)
        while not self.stop.is_set():
            started = time.monotonic()
            try:
                await run(backoff)
            except Exception as e:  # a background loop must survive anything
                if time.monotonic() - started > backoff.cap:
                    backoff.reset()  # it ran fine for a while: start over small
                delay = backoff.next_delay()
                self.loop_failures += 1
                # a fault we expect (Redis down, a failover): one line; else its traceback
                trace = not expected_fault(e)
                log.warning("%s failed; again in %.1f s: %s", name, delay, e, exc_info=trace)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop.wait(), delay)

    # ------------------------------------------------------------------ running
    async def run_polling(self, **kwargs: Any) -> None:
        """Long polling until stopped (``await app.stop_polling()``) -- only while
        this process holds the fleet's poll lease (#28, :mod:`telegram_bot.state.poll_lease`):
        Telegram allows one ``getUpdates`` consumer, so the others wait quietly
        and one takes over when the holder stops or dies."""
        self.start_background()
        lease = PollLease(self.svc.kv, self.settings.poll_lease_ttl)
        try:
            while not self._polling.is_set():
                if await self._poll_turn(lease) and not self._polling.is_set():
                    await self._poll_while_held(lease, kwargs)
                else:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._polling.wait(), lease.every)
        finally:
            with contextlib.suppress(Exception):
                await lease.release()
            await self.stop_background()

    async def _poll_turn(self, lease: PollLease) -> bool:
        """Whether this process may poll now (logged once per change)."""
        try:
            held = await lease.take()
        except ServiceUnavailable as e:
            _stopped_meanwhile()
            log.warning("poll lease: Redis unavailable: %s", e)
            return False
        if held != self.polls:
            log.info("poll lease %s: %s", "taken" if held else "held elsewhere", lease.owner)
        self.polls = held
        return held

    async def _poll_while_held(self, lease: PollLease, kwargs: dict[str, Any]) -> None:
        """aiogram's polling, stopped when the lease is lost (renewed meanwhile;
        while Redis does not answer it goes on: nobody else can take it then) or by
        :meth:`stop_polling` -- also one that came before aiogram's polling started,
        when aiogram's own ``stop_polling`` says "Polling is not started"."""
        polling = asyncio.create_task(
            self.dp.start_polling(
                self.bot,
                handle_signals=kwargs.get("handle_signals", True),
                close_bot_session=False,
                **{k: v for k, v in kwargs.items() if k != "handle_signals"},
            )
        )
        stopping = asyncio.create_task(self._polling.wait())
        try:
            while not polling.done():
                await asyncio.wait(
                    {polling, stopping}, timeout=lease.every, return_when=asyncio.FIRST_COMPLETED
                )
                if polling.done():
                    break
                if stopping.done():  # again until aiogram's polling has started and stops
                    with contextlib.suppress(RuntimeError):
                        await self.dp.stop_polling()
                    continue
                try:
                    held = await lease.take()
                except ServiceUnavailable:  # it goes on: nobody else can take it now
                    _stopped_meanwhile()
                    held = True
                if not held:
                    log.warning("poll lease lost to another process: polling stops")
                    self.polls = False
                    with contextlib.suppress(RuntimeError):
                        await self.dp.stop_polling()
            await polling
            if not self.polls or self.stop.is_set():
                return
            self._polling.set()  # stopped by aiogram itself (a signal): stop here too
        finally:
            stopping.cancel()
            if not polling.done():
                polling.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await polling

    async def stop_polling(self) -> None:
        self._polling.set()
        with contextlib.suppress(RuntimeError):
            await self.dp.stop_polling()

    async def stop_background(self) -> None:
        """Let the updates in hand finish (no new ones come once polling or the
        webhook stopped), stop the background loops, hand this process's turn
        timers over to the other processes (#28), and let the renders in flight
        finish (each within half the shutdown budget)."""
        await self.updates.drain(self.settings.shutdown_timeout / 2)
        running = bool(self._tasks)
        self.stop.set()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, 5)
        self._tasks = []
        if running:
            try:
                await self.svc.timers.hand_over()
            except ServiceUnavailable as e:  # they take the shards when the lease ends
                log.warning("timer shards not handed over: %s", e)
        await self._renders_done()

    async def _renders_done(self) -> None:
        """Let the renders in flight finish, each within half the shutdown budget."""
        if self._renders:
            _done, late = await asyncio.wait(
                set(self._renders), timeout=self.settings.shutdown_timeout / 2
            )
            if late:  # cancelled and awaited: none touches Redis after it closed
                log.warning("stopping with %d renders unfinished", len(late))
                for task in late:
                    task.cancel()
                await asyncio.gather(*late, return_exceptions=True)

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
                await self._renders_done()
            if self.publisher is not None:  # the flushed renders' marks cleared
                await self.publisher.guard.aclose()
            await self._delivery.aclose()
        if self.decider is not None:
            await asyncio.to_thread(self.decider.close)
        await self.svc.aclose()
        await self.bot.session.close()


def _stopped_meanwhile() -> None:
    """Raise CancelledError if this task is being cancelled: a stop's cancel
    that reached a Redis call as it failed (its read timing out) came back
    as ServiceUnavailable, and a loop that goes on through Redis faults went
    on for good -- the polling loop kept a stopped bot running (CI)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
