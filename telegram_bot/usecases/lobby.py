"""LobbyActions: opening one (``/new``), joining one (a button or a deep link), and
the lobby message's buttons -- Join, Leave, Add/Remove AI, Settings, Start,
Cancel -- and Rematch.  Each returns what to answer and what changed (data
the publisher shows once the user is answered); the writes go through the
table service."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from engine import EngineError
from engine.ai import LEVELS
from tables import OPEN, PLAYING, LiveError, ServiceUnavailable, Table, TableService
from telegram_bot.buttons.callbacks import LobbyCb, LobbyOp
from telegram_bot.delivery import Delivery
from telegram_bot.publishing.changes import (
    Change,
    GameStarted,
    HandResent,
    HandToPrivate,
    LobbyPosted,
    Refresh,
    SettingsShown,
    TableOffered,
)
from telegram_bot.publishing.hands import GROUP
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.views import texts
from telegram_bot.views.format import bold, user_text
from telegram_bot.views.i18n import VARIANT_TITLES, Translator
from telegram_bot.views.lobby import (
    deep_link,
)


@dataclass(frozen=True)
class Person:
    """Who asks (a player, or someone about to be one): his user id, display
    name and language."""

    id: int
    name: str
    locale: str


@dataclass(frozen=True)
class LobbyOutcome:
    """What to answer: ``notice`` (a msgid, or None for a silent answer), ``url``
    (open this link instead: the bot's private chat), or ``error`` (a refusal,
    as an alert); ``params``: the notice's placeholders.  ``changes``: what
    changed, for the publisher to show once answered (starting a game sends many
    messages; the press is answered first)."""

    notice: str | None = None
    params: Mapping[str, object] = field(default_factory=dict)
    url: str | None = None
    error: EngineError | None = None
    changes: tuple[Change, ...] = ()


@dataclass(frozen=True)
class PlayOffer:
    """``/play`` with no game named (#41): the choice to offer -- ``last``, his
    last game and AI level, first -- or, while he sits at a table, the refusal
    a game named would get then (``refused``)."""

    last: tuple[str, str] | None = None
    refused: LobbyOutcome | None = None


def last_play(value: str | None) -> tuple[str, str] | None:
    """A remembered ``<game>:<level>`` (:attr:`telegram_bot.state.chat_state.Prefs.play`),
    or None for anything else."""
    variant, _sep, level = (value or "").partition(":")
    return (variant, level) if variant in VARIANT_TITLES and level in LEVELS else None


@dataclass(frozen=True)
class LobbyActions:
    """The lobby use cases over the services they need."""

    svc: TableService
    ui: ChatStateStore
    prefs: PrefsCache
    delivery: Delivery  # a group's title (getChat) for the deep link's answer
    bot_username: str

    async def open(
        self,
        player: Person,
        *,
        variant: str,
        timer: int,
        group: int | None,
        group_lang: str,
        thread: int | None = None,
    ) -> LobbyOutcome:
        """``/new``: a lobby in ``group``, or (None) a private lobby whose message
        goes to his private chat after the notice.  ``thread``: the topic of a
        forum group it was asked in -- the table lives there (``Table.thread``:
        its lobby, table, result and rematch messages; None: General)."""
        try:
            result = await self.svc.lobbies.create_lobby(
                player.id,
                player.name,
                chat=group,
                thread=thread,
                variant=variant,
                timer=timer,
                private=group is None,
            )
        except EngineError as e:
            return self.elsewhere(e, player)
        table, langs = result.table, {player.id: player.locale}
        if group is None:
            posted = LobbyPosted(table, player.id, player.locale, langs)
            return LobbyOutcome(texts.NEW_GAME_LOBBY, changes=(posted,))
        return LobbyOutcome(changes=(LobbyPosted(table, group, group_lang, langs, group_lang),))

    async def offer_play(self, player: Person) -> PlayOffer:
        """``/play`` alone (#41): his last choice, to offer first -- unless he sits
        at a table (a lobby of his ``/play`` left half set up aside, which a
        choice drops): then the refusal, with his table, at once."""
        table = await self.svc.tables.where(player.id)
        if table is not None and not _abandoned_solo(table, player.id):
            refused = LiveError(
                "seated_elsewhere",
                "you already sit at a table; leave it first",
                table=table.id,
                status=table.status,
                chat=table.chat,
                variant=table.variant,
                user=player.id,
            )
            return PlayOffer(refused=self.elsewhere(refused, player))
        return PlayOffer(last=last_play((await self.prefs.get(player.id)).play))

    async def play_solo(
        self, player: Person, *, variant: str, timer: int, opponents: int, level: str = "normal"
    ) -> LobbyOutcome:
        """``/play``: a private game against ``opponents`` AI players of ``level``
        (``engine.ai.LEVELS``), started at once (the lobby is cancelled again if
        it cannot start).  The game and level are remembered once it started:
        the next ``/play`` offers them first (#41)."""
        for attempt in range(2):
            try:
                lobby = await self.svc.lobbies.create_lobby(
                    player.id,
                    player.name,
                    variant=variant,
                    timer=timer,
                    private=True,
                    ai_kind=LEVELS[level],
                    rated=False,  # against the AI: casual, so its timer may be none (#38)
                )
                break
            except LiveError as e:
                if attempt or not await self._drop_abandoned_solo(e, player):
                    return self.elsewhere(e, player)
            except EngineError as e:
                return LobbyOutcome(error=e)
        code = lobby.table.id
        try:
            for _n in range(opponents):
                await self.svc.lobbies.add_ai(code, player.id)
            await self.ui.update_table(code, langs={player.id: player.locale})
            await self.svc.games.start(code, player.id)
        except EngineError as e:
            return await self._settle_solo(code, player, e)
        with contextlib.suppress(ServiceUnavailable):  # a choice forgotten: still his game
            await self.prefs.update(player.id, play=f"{variant}:{level}")
        return LobbyOutcome(changes=(GameStarted(code),))

    async def _settle_solo(self, code: str, player: Person, error: EngineError) -> LobbyOutcome:
        """A ``/play`` set-up failed half-way (Redis went away): complete it if the
        start went through after all (its reply was lost), else roll it back
        (cancel the lobby, which frees his seat).  If Redis cannot tell now, the
        next ``/play`` drops the abandoned lobby (:meth:`_drop_abandoned_solo`) or
        offers the started game (:meth:`elsewhere`)."""
        with contextlib.suppress(EngineError):
            if (await self.svc.lobbies.lobby(code)).status == PLAYING:
                return LobbyOutcome(changes=(GameStarted(code),))
            await self.svc.lobbies.cancel(code, player.id)
        return LobbyOutcome(error=error)

    async def _drop_abandoned_solo(self, error: LiveError, player: Person) -> bool:
        """He sits at an open private lobby of his own with AI players and no other
        human -- a ``/play`` whose set-up broke off: cancel it (True; ``/play``
        then starts anew).  A lobby of his ``/new`` (no AI added) is left alone."""
        code = error.info.get("table") if error.code == "seated_elsewhere" else None
        if not code:
            return False
        try:
            table = await self.svc.lobbies.lobby(code)
            if not _abandoned_solo(table, player.id):
                return False
            await self.svc.lobbies.cancel(code, player.id)
        except EngineError:
            return False
        return True

    def elsewhere(self, error: EngineError, player: Person) -> LobbyOutcome:
        """A refusal; for ``seated_elsewhere`` (a game of his whose hand message
        never went out -- a ``/play`` cut off by an outage) the hand message is
        sent now.  The refusal's answer carries the "Open my table" button
        (:func:`telegram_bot.handlers.common.reply`)."""
        info = getattr(error, "info", {})
        code = info.get("table") if error.code == "seated_elsewhere" else None
        if not code or info.get("status") != PLAYING:
            return LobbyOutcome(error=error)
        return LobbyOutcome(error=error, changes=(HandResent(player.id, str(code)),))

    async def join(self, code: str, player: Person) -> Table:
        """Seat him at the lobby (LiveError when refused); remember his language."""
        return await self._seat(code, player)

    async def _seat(self, code: str, player: Person, request_id: str = "") -> Table:
        result = await self.svc.lobbies.join(code, player.id, player.name, request_id=request_id)
        await self.ui.update_table(code, langs={player.id: player.locale})
        return result.table

    async def join_by_link(self, code: str, player: Person) -> LobbyOutcome:
        """He opened ``t.me/<bot>?start=<code>``: seat him at that lobby."""
        try:
            table = await self.svc.lobbies.lobby(code)
        except LiveError:
            return LobbyOutcome(texts.NO_SUCH_LOBBY)
        seat = table.seat_of(player.id)
        if seat is not None and table.status == PLAYING:
            # #41: mid-game -- his cards come below this answer (the game started
            # long ago): from the group to here, or his hand here sent anew below
            # (the old one says where they went, as *Open my table* does)
            hand = (await self.ui.table(code)).hands.get(player.id)
            if hand is None or hand < 0:  # in the group, or none: here from now on
                moved = HandToPrivate(code, player.id)
                return LobbyOutcome(texts.CARDS_BELOW, changes=(moved,))
            resent = HandResent(player.id, code, again=True)
            return LobbyOutcome(texts.CARDS_BELOW, changes=(resent,))
        try:
            table = await self.join(code, player)
        except EngineError as e:
            return self.elsewhere(e, player)
        joined = await self._joined(table, player)
        return replace(joined, changes=(Refresh(code, actor=player.id), *joined.changes))

    async def _joined(self, table: Table, player: Person) -> LobbyOutcome:
        """The deep link's answer names the game and the group, or who gathers a
        private game (issue 13); a private lobby's players each keep a copy of
        its message."""
        _ = Translator(player.locale)
        game = bold(_(VARIANT_TITLES[table.variant]))
        if table.chat is not None and table.chat < 0:
            group = await self.delivery.chat_title(table.chat)
            if not group:
                return LobbyOutcome(texts.JOINED)
            return LobbyOutcome(texts.JOINED_GROUP, {"game": game, "group": user_text(group)})
        creator = next((s.name for s in table.seats if s.user == table.creator), "")
        params = {"game": game, "name": user_text(creator)}
        if table.status != OPEN:
            return LobbyOutcome(texts.JOINED_PRIVATE, params)
        copy = LobbyPosted(table, player.id, player.locale)  # his own copy of it
        return LobbyOutcome(texts.JOINED_PRIVATE, params, changes=(copy,))

    async def press(
        self,
        button: LobbyCb,
        player: Person,
        message: tuple[int, int] | None,
        request_id: str = "",
    ) -> LobbyOutcome:
        """A lobby button pressed on ``message`` (chat id, message id).  Every write
        carries ``request_id`` (the callback query's): the same press delivered
        again -- to another process too -- is applied once (a second *Start* sends
        no second set of hand messages)."""
        try:
            return await self._press(button, player, message, request_id)
        except EngineError as e:
            if e.code == "seated_elsewhere":
                offer = TableOffered(e, player.id, player.locale)
                return LobbyOutcome(error=e, changes=(offer,))
            return LobbyOutcome(error=e)

    async def _press(
        self,
        button: LobbyCb,
        player: Person,
        message: tuple[int, int] | None,
        rid: str,
    ) -> LobbyOutcome:
        # The outcome is decided here; what the messages show then is left to the
        # publisher, once the press is answered (an edit may wait long for the
        # chat's flood tokens; Telegram drops a late answer).
        code, op, user = button.code, button.op, player.id
        refresh = Refresh(code, actor=user)
        if op == LobbyOp.JOIN:
            await self._open_lobby(code)
            if not (await self.prefs.get(user)).started:
                if message is not None and message[0] < 0:
                    # he never opened the private chat, but an ephemeral message
                    # asks only that its receiver be a member of the group (issue
                    # 14): he plays here, his hand shown in the group to him alone
                    await self._seat(code, player, rid)
                    await self.ui.set_prefs(user, plays=GROUP)
                    return LobbyOutcome(texts.JOINED_HERE, changes=(refresh,))
                # not in a group (an inline lobby): the deep link opens the
                # private chat and seats him
                return LobbyOutcome(url=deep_link(self.bot_username, code))
            await self._seat(code, player, rid)
            return LobbyOutcome(texts.JOINED, changes=(refresh,))
        if op in (LobbyOp.SETTINGS, LobbyOp.SET, LobbyOp.BACK):
            shown = await self.settings(button, player, message, rid)
            return LobbyOutcome(changes=() if shown is None else (shown,))
        if op == LobbyOp.REMATCH:
            return await self._rematch(button, player, rid)
        if op == LobbyOp.START:
            try:
                started = await self.svc.games.start(code, user, request_id=rid)
            except LiveError as e:
                if e.code == "not_open" and await self._playing(code, user):
                    return LobbyOutcome()  # a second tap of Start: his game is on (#29)
                raise
            if started.duplicate:
                return LobbyOutcome()  # the first copy of this press sends the hands
            return LobbyOutcome(changes=(GameStarted(code),))
        write = self._writes().get(op)
        if write is None:
            return LobbyOutcome(texts.BAD_BUTTON)
        await write(code, user, rid)
        return LobbyOutcome(texts.LEFT if op == LobbyOp.LEAVE else None, changes=(refresh,))

    async def _rematch(self, button: LobbyCb, player: Person, rid: str) -> LobbyOutcome:
        """*Rematch* (#38): his yes to the next game.  It starts at once when
        every present player of the last game said yes (new hands, a new table
        message), else the offer stands: he is told whom it waits for and for
        how long, and the result messages show who agreed."""
        code = button.code
        written = await self.svc.games.rematch(code, player.id, request_id=rid, game=button.game)
        if written.duplicate:
            return LobbyOutcome()  # the first copy of this press answers it
        t = written.table
        if t.status == PLAYING:
            return LobbyOutcome(changes=(GameStarted(code),))
        refresh = Refresh(code, actor=player.id)
        offer = t.rematch
        if offer is None:  # pragma: no cover - his own yes starts it at the deadline
            return LobbyOutcome(changes=(refresh,))
        left = max(1, -(-(offer.until - int(self.svc.clock() * 1000)) // 1000))
        waiting = [s.name for s in t.seats if s.user in t.present() and s.user not in offer.agreed]
        params = {"names": ", ".join(waiting), "seconds": left}
        return LobbyOutcome(texts.REMATCH_WAITING, params, changes=(refresh,))

    async def _playing(self, code: str, user: int) -> bool:
        """Is the lobby's game on, with ``user`` seated at it?"""
        table = await self.svc.lobbies.lobby(code)
        return table.status == PLAYING and table.seat_of(user) is not None

    async def _open_lobby(self, code: str) -> Table:
        """The lobby, while it is open (its game not started): else ``not_open``."""
        table = await self.svc.lobbies.lobby(code)
        if table.status != OPEN:
            raise LiveError("not_open", "the game has already started or was cancelled")
        return table

    def _writes(self) -> dict[LobbyOp, Callable[[str, int, str], Awaitable[Any]]]:
        """The buttons that are one write (table, user, request id), then a refresh
        of the lobby messages.  *Remove AI* removes the last AI seat, chosen inside
        the write."""
        svc = self.svc
        return {
            # the lobby's Leave leaves the lobby only, never a game it started
            LobbyOp.LEAVE: lambda c, u, r: svc.lobbies.leave(c, u, request_id=r, lobby=True),
            LobbyOp.ADD_AI: lambda c, u, r: svc.lobbies.add_ai(c, u, request_id=r),
            LobbyOp.REMOVE_AI: lambda c, u, r: svc.lobbies.remove_ai(c, u, request_id=r),
            LobbyOp.CANCEL: lambda c, u, r: svc.lobbies.cancel(c, u, request_id=r),
        }

    async def settings(
        self,
        button: LobbyCb,
        player: Person,
        message: tuple[int, int] | None,
        request_id: str = "",
    ) -> SettingsShown | None:
        """The settings keyboard on the lobby message itself; a change goes through
        the service, while the lobby is open.  Only the lobby's owner opens it: the
        panel replaces the shared lobby message for everyone (``not_owner`` for
        anyone else, nothing changes).  Returns what to show (once the press is
        answered)."""
        table = await self._open_lobby(button.code)
        if table.creator != player.id:
            raise LiveError(
                "not_owner", "only the lobby's creator can change the settings", action="settings"
            )
        if message is not None:
            # the panel replaces the pressed message: it must be this lobby's own
            # (#28: his lobby's settings data pressed on another lobby's message,
            # or on a game's table message, rewrote that message into his lobby)
            chat, message_id = message
            if (await self.ui.table(button.code)).lobby_messages.get(chat) != message_id:
                raise LiveError("bad_button", "the pressed message is not this lobby's")
        if button.op == LobbyOp.SET and button.setting is not None:
            changes = setting_changes(table, *button.setting)
            written = await self.svc.lobbies.configure(
                button.code, player.id, request_id=request_id, **changes
            )
            table = written.table
        if message is None:
            return None
        chat, message_id = message
        back, changed = button.op == LobbyOp.BACK, button.op == LobbyOp.SET
        return SettingsShown(table, chat, message_id, player.locale, back, changed)


def _abandoned_solo(table: Table, user: int) -> bool:
    """Is ``table`` an open private lobby of ``user``'s with AI players and no
    other human -- a ``/play`` whose set-up broke off?  A lobby of his ``/new``
    (no AI added, or friends joined) is not."""
    humans = [s for s in table.seats if s.user is not None and not s.left]
    if table.status != OPEN or not table.private or table.creator != user:
        return False
    return len(humans) == 1 and len(humans) < len(table.seats)


def setting_changes(table: Table, key: str, value: str) -> dict[str, Any]:
    """The ``configure`` arguments a settings button asks for."""
    if key == "game":
        return {"variant": value}
    if key == "timer":
        return {"timer": int(value)}
    if key == "max":
        return {"max_seats": int(value)}
    if key == "watch":
        return {"spectators": value == "1"}
    if key == "rated":
        return {"rated": value == "1"}
    if key == "level":
        return {"ai_kind": LEVELS[value]}
    if key in ("decks", "joker") and table.variant == "shchelkovsky":
        options = dict(table.options)
        if key == "decks":
            options["decks"] = int(value)
        else:
            options["remove_joker"] = value == "1"
        return {"options": options}
    return {}
