"""ArenaActions (#27): ``/arena`` in a group (the set-up for an admin, the
standings for anybody), the set-up message's choices and *Announce*, *Join* and
*Withdraw*, an admin's *Cancel*, and a group the bot lost (#38).  Each returns
what to answer and what changed (``changes``, for the publisher:
:data:`telegram_bot.publishing.changes.ArenaChange`); the arena itself is the
table service's (:mod:`tables.arenas`, :mod:`tables.groups`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from engine import EngineError
from tables import LiveError, TableService
from tables.arena_rules import Arena
from tables.groups import REMOVED, UPGRADED
from telegram_bot.delivery import Delivery
from telegram_bot.publishing.changes import (
    ArenaAnswered,
    ArenaCancelled,
    ArenaPosted,
    ArenaSetupShown,
    ArenaShown,
    Change,
    GroupLost,
)
from telegram_bot.state.keys import ArenaAnswerKeys
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.usecases.lobby import Person
from telegram_bot.views import arena as arena_views
from telegram_bot.views.arena import Setup
from telegram_bot.views.i18n import N_

JOINED = N_("You are in the arena: the bot seats you at a table as soon as players are free.")
ALREADY_IN = N_("You are in the arena already.")
WITHDRAWN = N_("You have withdrawn: your points stay, and you may join again.")
NOT_IN = N_("You do not play in this arena.")
START_TO_JOIN = N_(
    "An arena's cards come to your private chat with me: press Start there, and you are in."
)
"""#38: *Join* by a member who never started the bot -- the answer opens the
private chat (``?start=arena_<id>``), whose Start joins him."""

ARENA_LINK = "arena_"
"""The deep link's payload prefix: ``t.me/<bot>?start=arena_<arena id>`` (#38)."""
GROUP_ANSWER_GAP_MS = 60_000
"""#38: in a group with an arena on, ``/arena`` or ``/top`` of a member the bot
cannot write to in private is answered in the group at most this often."""


def arena_link(bot_username: str, arena_id: str) -> str:
    """The deep link whose Start joins the arena (#38)."""
    return f"https://t.me/{bot_username}?start={ARENA_LINK}{arena_id}"


@dataclass(frozen=True)
class AnswerAt:
    """Where a read-only command's answer goes (#38): ``chat`` (None: nowhere --
    the arena's own message shows it), ``low``: a group message sent at low
    priority (it leaves the group's urgent reserve to the arena's hands)."""

    chat: int | None
    low: bool = False


async def answer_at(
    svc: TableService, prefs: PrefsCache | None, chat: int, user: int, command: str
) -> AnswerAt:
    """#38: where ``/arena``'s standings or ``/top`` (``command``) go in group
    ``chat``.  While its arena is scheduled or running the group's 20 messages
    a minute belong to the arena's play: the answer goes to the member's
    private chat if he started the bot; else to the group at most once a
    minute (per command), at low priority; else nowhere -- the arena's
    message shows the standings.  With no arena on: the group, as always."""
    arena = await svc.arenas.current(chat)
    if arena is None or arena.over:
        return AnswerAt(chat)
    if prefs is None or (await prefs.get(user)).started:
        return AnswerAt(user)
    key = ArenaAnswerKeys(svc.kv).answer(chat, command)
    [first] = await svc.kv.set_nx([key], "1", ttl_ms=GROUP_ANSWER_GAP_MS)
    return AnswerAt(chat, low=True) if first else AnswerAt(None)


@dataclass(frozen=True)
class ArenaOutcome:
    """What to answer: ``notice`` (a msgid with ``params``) or ``error`` (a
    refusal); ``arena``: the arena as read (for ``/arena``, the standings the
    answer shows, true at ``read_at`` ms, #41); ``setup``: send the admin the
    set-up message; ``admin``: the one who asked is the
    group's admin (his standings carry *Cancel*, #38); ``changes``: what the
    publisher shows once he is answered (the arena's message, ...)."""

    notice: str | None = None
    params: Mapping[str, object] = field(default_factory=dict)
    error: EngineError | None = None
    arena: Arena | None = None
    setup: bool = False
    admin: bool = False
    url: str | None = None  # the answer opens this link (#38: the private chat)
    read_at: int = 0
    changes: tuple[Change, ...] = ()


@dataclass(frozen=True)
class ArenaActions:
    svc: TableService
    delivery: Delivery  # the group's admins (getChatMember)
    prefs: PrefsCache | None = None  # who started the bot (#38)
    bot_username: str = ""

    async def _started(self, user: int) -> bool:
        return self.prefs is None or (await self.prefs.get(user)).started

    async def ask(
        self, chat: int, private: bool, user: int, locale: str, chat_locale: str
    ) -> ArenaOutcome:
        """``/arena``: the arena of the group, or the set-up for an admin.  #38: a
        member's standings of an arena on go where :func:`answer_at` says, in
        his language in his private chat (``locale``), else the group's
        (``chat_locale``); the arena's message is brought up to date."""
        if private:
            return ArenaOutcome(notice=arena_views.ONLY_GROUPS)
        arena = await self.svc.arenas.current(chat)
        read_at = self.svc.arenas.now_ms()
        if arena is not None and not arena.over:
            if await self.delivery.is_admin(chat, user):
                return ArenaOutcome(arena=arena, admin=True, read_at=read_at)
            changes: list[Change] = [ArenaShown(arena)]
            at = await answer_at(self.svc, self.prefs, chat, user, "arena")
            if at.chat is not None:
                lang = locale if at.chat == user else chat_locale
                changes.append(ArenaAnswered(arena, at.chat, lang, low=at.low))
            return ArenaOutcome(arena=arena, read_at=read_at, changes=tuple(changes))
        if await self.delivery.is_admin(chat, user):
            return ArenaOutcome(setup=True, arena=arena, read_at=read_at)
        return ArenaOutcome(notice=arena_views.ARENA_HELP, arena=arena, read_at=read_at)

    async def set_up(
        self,
        chat: int,
        message_id: int,
        admin: Person,
        setup: Setup,
        announce: bool,
        lang: str,
        thread: int | None = None,
    ) -> ArenaOutcome:
        """A choice on the set-up message ``message_id`` (it shows ``setup``), or
        *Announce* (``announce``): the arena is made, and that message becomes
        its message, in ``lang`` -- a group's admin only.  ``thread``: the forum
        topic that message is in -- the arena lives there (its podium too)."""
        if not await self.delivery.is_admin(chat, admin.id):
            return ArenaOutcome(notice=arena_views.ONLY_ADMINS)
        if not announce:
            return ArenaOutcome(changes=(ArenaSetupShown(chat, message_id, setup, lang),))
        now = self.svc.arenas.now_ms()
        try:
            arena = await self.svc.arenas.create(
                chat,
                admin.id,
                setup.variant,
                seats=setup.seats,
                minutes=setup.minutes,
                starts=now + setup.start * 60_000 if setup.start else None,
                thread=thread,
            )
        except LiveError as e:
            if e.code == "arena_running":
                return ArenaOutcome(error=e, arena=await self.svc.arenas.current(chat))
            return ArenaOutcome(error=e)
        return ArenaOutcome(arena=arena, changes=(ArenaPosted(arena, lang, message_id),))

    async def join(self, arena_id: str, player: Person, *, link: bool = False) -> ArenaOutcome:
        """*Join*: he plays from the start (or now).  A cooldown from rated games
        (#25) keeps him out, as it keeps him from a rated lobby.  #38: an arena's
        hands are private -- a member who never started the bot is answered
        with the link that opens the private chat, whose Start joins him
        (``link``: that Start, :data:`ARENA_LINK`)."""
        if not link and not await self._started(player.id):
            return ArenaOutcome(notice=START_TO_JOIN, url=arena_link(self.bot_username, arena_id))
        try:
            before = await self.svc.arenas.get(arena_id)
            me = before.player(player.id)
            if me is not None and not me.withdrawn:
                return ArenaOutcome(notice=ALREADY_IN, arena=before, changes=(ArenaShown(before),))
            rating = (await self.svc.ratings.many([player.id], before.variant))[player.id]
            # the join's CAS refuses a cooldown (the one check, tables.fairplay)
            arena = await self.svc.arenas.join(arena_id, player.id, player.name, rating.shown)
        except LiveError as e:
            return ArenaOutcome(error=e)
        return ArenaOutcome(notice=JOINED, arena=arena, changes=(ArenaShown(arena),))

    async def cancel(self, arena_id: str, chat: int, user: int, standings: int) -> ArenaOutcome:
        """*Cancel* (#38) under the standings message ``standings``: a group's
        admin (Telegram's word: ``getChatMember`` says creator or administrator)
        stops its arena, as an operator may; the games being played finish as
        ordinary games and score nothing in it.  Anybody else is refused."""
        if not await self.delivery.is_admin(chat, user):
            return ArenaOutcome(notice=arena_views.ONLY_ADMINS_CANCEL)
        try:
            arena = await self.svc.arenas.get(arena_id)
            if arena.chat != chat:  # a button of another group's arena
                return ArenaOutcome(notice=arena_views.ONLY_ADMINS_CANCEL)
            stopped = await self.svc.arenas.stop(arena_id, f"admin {user}")
        except LiveError as e:
            return ArenaOutcome(error=e)
        if stopped is None:
            return ArenaOutcome(
                notice=arena_views.OVER_ALREADY, arena=arena, changes=self._over(arena, standings)
            )
        return ArenaOutcome(
            notice=arena_views.CANCELLED_NOW, arena=stopped, changes=self._over(stopped, standings)
        )

    @staticmethod
    def _over(arena: Arena, standings: int) -> tuple[Change, ...]:
        """An arena over: its message and the standings message say so."""
        return (ArenaShown(arena), ArenaCancelled(arena, standings)) if arena.over else ()

    async def removed(self, chat: int, title: str, by: int | None = None) -> ArenaOutcome:
        """The bot was removed (or kicked) from the group ``chat`` (#38) by the
        user ``by``: a rated game he plays there is his loss."""
        return await self._lost(chat, REMOVED, title, by=by)

    async def upgraded(self, old: int, new: int, title: str | None = None) -> ArenaOutcome:
        """The group ``old`` became the supergroup ``new`` (#38; ``title``: the
        supergroup's, else asked of Telegram if anything stopped)."""
        return await self._lost(old, UPGRADED, title, new)

    async def _lost(
        self,
        chat: int,
        reason: str,
        title: str | None,
        new: int | None = None,
        *,
        by: int | None = None,
    ) -> ArenaOutcome:
        """A lost group's arena and tables stop (:meth:`tables.groups.Groups.close`;
        ``by``: who removed the bot -- he forfeits a rated game he plays there),
        once; their players are to be told (nothing, when another update or
        process stopped them)."""
        closed = await self.svc.groups.close(chat, reason, by)
        if not closed.anything:
            return ArenaOutcome()
        if title is None:
            title = await self.delivery.chat_title(new) if new is not None else ""
        forfeits = closed.forfeits()
        name = ""
        if by is not None and by in forfeits:
            name = next(s.name for s in forfeits[by].seats if s.user == by)
        lost = GroupLost(
            chat,
            reason,
            tuple(closed.players()),
            title,
            new,
            by=by if forfeits else None,
            by_name=name,
            forfeited=tuple(forfeits),
        )
        return ArenaOutcome(changes=(lost,))

    async def withdraw(self, arena_id: str, user: int) -> ArenaOutcome:
        """*Withdraw*: paired no more (a game he plays goes on); his points stay."""
        try:
            arena = await self.svc.arenas.withdraw(arena_id, user)
        except LiveError as e:
            if e.code == "not_in_arena":
                return ArenaOutcome(notice=NOT_IN)
            return ArenaOutcome(error=e)
        return ArenaOutcome(notice=WITHDRAWN, arena=arena, changes=(ArenaShown(arena),))
