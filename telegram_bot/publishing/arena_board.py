"""An arena's message in its group (#27): posted when an admin announces it,
edited as players join and games are scored -- coalesced, at most one edit
every ``BOARD_GAP`` seconds and always the newest (the group's message budget
is shared with its tables) -- and the podium at its end.

The publisher's part for arenas, as :mod:`telegram_bot.publishing.lobby_messages`
is for lobbies: a use case names what changed
(:data:`telegram_bot.publishing.changes.ArenaChange`),
:meth:`telegram_bot.publishing.publisher.Publisher.show` hands it to
:meth:`ArenaBoards.show`, which draws it (:mod:`telegram_bot.views.arena`) and
delivers it.  Its message id and language live in the bot's chat state under
the arena's own key (``@<arena id>``, :mod:`telegram_bot.state.chat_state`), so
any process edits it.  An arena's wake (:class:`tables.arena_runner.Woken`)
comes from the timers as :func:`woke`: the publisher shows the games it started
as any started game, then :meth:`ArenaBoards.woke` its standings."""

from __future__ import annotations

import logging
from collections.abc import Callable

from aiogram.exceptions import TelegramAPIError
from aiogram.types import EphemeralMessageParameters

from tables.arena_rules import Arena
from tables.arena_runner import Woken
from tables.groups import UPGRADED
from telegram_bot.delivery import Address, Delivery, Urgency
from telegram_bot.delivery.flood.gate import URGENT, CallOptions
from telegram_bot.delivery.waiting_line import TABLE, Priority
from telegram_bot.publishing.changes import (
    ArenaAnswered,
    ArenaCancelled,
    ArenaChange,
    ArenaPosted,
    ArenaSetupShown,
    ArenaShown,
    ArenaWoke,
    GroupLost,
    TopSent,
)
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.hints import HintClaims
from telegram_bot.views.arena import (
    IN_THIS_MESSAGE,
    LEFT_BUSY,
    LEFT_COOLDOWN,
    TOLD_FORFEIT_COUNTS,
    TOLD_FORFEITED,
    TOLD_REMOVED,
    TOLD_UPGRADED,
    UPGRADED_HERE,
    arena_screen,
    message_link,
    podium_screen,
    setup_screen,
    standings_screen,
)
from telegram_bot.views.format import user_text
from telegram_bot.views.i18n import Translator
from telegram_bot.views.lobby import render_rating_top

log = logging.getLogger(__name__)

BOARD_GAP = 10.0
"""Seconds between two edits of an arena's message (the newest goes out)."""
LOW = CallOptions(Priority.DEFERRED, rank=TABLE)
"""#38: a group message nobody's play waits for (``/arena``, ``/top`` while an
arena is on): behind every urgent call and every hand in the group's line."""


def ui_key(arena_id: str) -> str:
    """The arena's entry in the chat state (a table id never starts with '@')."""
    return f"@{arena_id}"


def woke(woken: Woken) -> ArenaWoke:
    """An arena's wake as the change the publisher shows."""
    started = tuple(r.table_id for r in woken.started)
    return ArenaWoke(woken.arena, started, tuple(woken.withdrawn), woken.finished)


def here(arena: Arena, message: int) -> Address:
    """The arena's ``message`` in its group, in its forum topic (re-sent there)."""
    return Address(arena.chat, message, thread=arena.thread)


class ArenaBoards:
    """Posts and edits arenas' messages (see the module)."""

    def __init__(
        self,
        ui: ChatStateStore,
        delivery: Delivery,
        hints: HintClaims,
        now_ms: Callable[[], int],
    ) -> None:
        self.ui = ui
        self.delivery = delivery
        self.hints = hints
        self.now_ms = now_ms

    async def show(self, change: ArenaChange) -> None:
        """Draw and deliver what an arena's use case changed."""
        match change:
            case ArenaShown():
                await self.refresh(change.arena)
            case ArenaPosted():
                await self.post(change.arena, change.lang, change.message)
            case ArenaSetupShown():
                text, markup = setup_screen(change.setup, Translator(change.lang))
                await self.delivery.edit(Address(change.chat, change.message_id), text, markup)
            case ArenaAnswered():
                await self.answer(change.arena, change.chat, change.lang, low=change.low)
            case ArenaCancelled():
                await self.cancelled(change.arena, change.standings)
            case GroupLost():
                await self.group_lost(change)
            case TopSent():
                text = render_rating_top(change.boards, locale=change.locale)
                await self.say(change.chat, text, low=change.low, thread=change.thread)

    async def post(self, arena: Arena, lang: str, message: int | None = None) -> None:
        """The arena's message in its group, in ``lang`` from now on: ``message``
        (the admin's set-up message) becomes it, else a new one."""
        text, markup = arena_screen(arena, Translator(lang), self.now_ms())
        shown: int | None
        if message is not None:
            shown = await self.delivery.edit(here(arena, message), text, markup)
        else:
            sent = await self.delivery.send(arena.chat, text, markup, thread=arena.thread)
            shown = sent.message_id if sent is not None else None
        if shown is not None:
            await self.ui.update_table(ui_key(arena.id), table_message=shown, group_lang=lang)

    async def _where(self, arena: Arena) -> tuple[int | None, str]:
        ui = await self.ui.table(ui_key(arena.id))
        return ui.table_message, ui.group_lang or "en"

    async def refresh(self, arena: Arena) -> None:
        """Its message shows ``arena`` (within ``BOARD_GAP``; the newest wins)."""
        message, lang = await self._where(arena)
        if message is None:
            return
        text, markup = arena_screen(arena, Translator(lang), self.now_ms())
        await self.delivery.edit(here(arena, message), text, markup, Urgency.TABLE, gap=BOARD_GAP)

    async def woke(self, woken: ArenaWoke) -> None:
        """An arena's wake, once the games it started are shown (the publisher
        does that): the players it withdrew told, its standings, its podium."""
        for user, code in woken.withdrawn:  # he could not sit: told why, in his words
            await self._tell_withdrawn(woken.arena, user, code)
        await self.refresh(woken.arena)
        if woken.finished:
            _message, lang = await self._where(woken.arena)
            podium = podium_screen(woken.arena, Translator(lang))
            await self.delivery.send(woken.arena.chat, podium, thread=woken.arena.thread)

    async def cancelled(self, arena: Arena, standings: int) -> None:
        """An admin cancelled ``arena`` from the standings message ``standings``:
        it shows them as they stay, without its button."""
        _message, lang = await self._where(arena)
        text, _markup = standings_screen(arena, Translator(lang), self.now_ms())
        await self.delivery.edit(here(arena, standings), text, None)

    async def group_lost(self, lost: GroupLost) -> None:
        """The bot lost a group (#38): each player of what stopped is told in
        private (where the bot may write to him; a 403 is only logged), and,
        for a group that became a supergroup, the supergroup ``new_chat``."""
        whom = list(lost.players)
        if lost.new_chat is not None and lost.reason == UPGRADED:
            whom.append(lost.chat)  # the supergroup, in the old group's stead
        told = TOLD_UPGRADED if lost.reason == UPGRADED else TOLD_REMOVED
        for who in await self.hints.lost(lost.chat, whom):  # each told once
            if who == lost.chat and lost.new_chat is not None:
                lang = (await self.ui.prefs(lost.chat)).lang or "en"
                await self.delivery.send(lost.new_chat, Translator(lang)(UPGRADED_HERE))
                continue
            prefs = await self.ui.prefs(who)
            if not prefs.started:  # the bot may not write to him in private (#38)
                continue
            _ = Translator(prefs.lang or prefs.tg or "en")
            group = user_text(lost.title or "?")
            if who == lost.by:  # he removed the bot mid-game: his loss (#38)
                await self.delivery.send(who, _(TOLD_FORFEITED, group=group))
            elif who in lost.forfeited:
                name = user_text(lost.by_name or "?")
                await self.delivery.send(who, _(TOLD_FORFEIT_COUNTS, group=group, name=name))
            else:
                await self.delivery.send(who, _(told, group=group))

    async def say(
        self, chat: int, text: str, *, low: bool = False, thread: int | None = None
    ) -> None:
        """A message of its own in ``chat`` (``low``: at low priority, :data:`LOW`;
        ``thread``: in that forum topic)."""
        await self.delivery.send(chat, text, options=LOW if low else URGENT, thread=thread)

    async def _tell_withdrawn(self, arena: Arena, user: int, code: str) -> None:
        """Why the arena withdrew him: in private, or -- the bot may not write to
        him there, he never started it (#38) -- to him alone in the arena's group."""
        prefs = await self.ui.prefs(user)
        why = Translator(prefs.lang or prefs.tg or "en")(
            LEFT_COOLDOWN if code == "cooldown" else LEFT_BUSY
        )
        try:
            if prefs.started:
                await self.delivery.send(user, why)
            else:
                params = EphemeralMessageParameters(receiver_user_id=user)
                await self.delivery.send(arena.chat, why, ephemeral=params, thread=arena.thread)
        except TelegramAPIError as err:  # best effort: the board shows him withdrawn
            log.info("arena %s: %s not told he was withdrawn: %s", arena.id, user, err)

    async def answer(self, arena: Arena, chat: int, lang: str, *, low: bool = False) -> None:
        """A member's ``/arena`` while ``arena`` is on, answered in ``chat`` (#41:
        his copy of the standings said «Nobody has joined yet.» long after people
        joined).  In the arena's group: a short reply to the arena's message,
        which stays up to date; elsewhere (his private chat): the standings as
        of now, saying so, with a link to that message where Telegram has one
        (a supergroup's).  ``low``: at low priority (:data:`LOW`)."""
        message, _lang = await self._where(arena)
        _ = Translator(lang)
        options = LOW if low else URGENT
        if chat == arena.chat and message is not None:
            text = "🏟 " + _(IN_THIS_MESSAGE)
            await self.delivery.send(chat, text, options=options, reply_to=message)
            return
        live = message_link(arena.chat, message) if message is not None else None
        text, markup = standings_screen(arena, _, self.now_ms(), live)
        thread = arena.thread if chat == arena.chat else None
        await self.delivery.send(chat, text, markup, options=options, thread=thread)
