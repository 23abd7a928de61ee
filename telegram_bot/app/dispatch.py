"""The dispatcher of the delivery's events (#39): what the delivery learns (a
403, a group moved, a message sent anew, a hand held back) comes up as data
(:mod:`telegram_bot.delivery.events`), and each event is handed here to its
use case -- in a render task of its own (:class:`telegram_bot.app.loops.Renders`;
a failure is logged)."""

from __future__ import annotations

from telegram_bot.app.loops import Renders
from telegram_bot.delivery.events import (
    Event,
    Events,
    HeldBack,
    Kicked,
    Migrated,
    PrivateForbidden,
    Replaced,
)
from telegram_bot.publishing.publisher import Publisher
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.usecases.cases import UseCases
from telegram_bot.usecases.delivery_events import DeliveryEvents


class EventDispatcher:
    """Each event of the delivery handed to its use case: ``cases`` (a group
    moved), ``learned`` (a 403, a message sent anew), ``prefs`` (who may be
    written to in private), ``publisher`` (what changed shown, a hand held back)."""

    def __init__(
        self,
        cases: UseCases,
        learned: DeliveryEvents,
        prefs: PrefsCache,
        publisher: Publisher,
        renders: Renders,
    ) -> None:
        self.cases = cases
        self.learned = learned
        self.prefs = prefs
        self.publisher = publisher
        self.renders = renders

    async def run(self, events: Events) -> None:
        """Hand every event to its use case, each in a task of its own (until
        cancelled)."""
        async for event in events:
            self.renders.spawn(self.handle(event))

    async def handle(self, event: Event) -> None:
        match event:
            case PrivateForbidden(user, kind):
                # a 403 of his private chat: the bot writes to him there no more
                # (until he sends it something); he blocked it: the AI plays his
                # seat, the table sees it -- not when he never started the bot
                # (#38, :meth:`DeliveryEvents.forbidden`)
                await self.prefs.update(user, started=False)
                await self.learned.forbidden(user, kind)
            case Migrated(old, new):
                # a call to the group ``old`` was answered 400 with
                # ``migrate_to_chat_id`` ``new`` (#38): the same as its service
                # message -- its arena and tables stop, the players and the
                # supergroup are told (a second time finds nothing to do)
                outcome = await self.cases.arena.upgraded(old, new)
                await self.publisher.show(*outcome.changes)
            case Replaced(chat, old, new):
                # a message we edit was gone and was sent anew: its new id kept
                await self.learned.replaced(chat, old, new)
            case HeldBack():
                # a hand in the group held back: his turn again if it is his
                # (the bot's delivery trouble, not his), and say so once (#24)
                await self.learned.held_back(event)
                await self.publisher.held_back(event)
            case Kicked():  # the group's own service message tells (handlers)
                pass
