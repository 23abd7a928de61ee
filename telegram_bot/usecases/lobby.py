"""LobbyActions: opening one (``/new``), joining one (a button or a deep link), and
the lobby message's buttons -- Join, Leave, Add/Remove AI, Settings, Start,
Cancel -- and Rematch.  Each returns what to answer; the writes go through the
table service and the messages through the publisher."""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from engine import EngineError
from engine.ai import LEVELS
from tables import OPEN, PLAYING, LiveError, Table, TableService
from telegram_bot.buttons.callbacks import LobbyCb, LobbyOp
from telegram_bot.delivery import Delivery, Urgency
from telegram_bot.publishing import group_hands
from telegram_bot.publishing.publisher import Publisher
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.views import texts
from telegram_bot.views.format import bold, user_text
from telegram_bot.views.i18n import VARIANT_TITLES, Translator
from telegram_bot.views.keyboards import open_table_keyboard
from telegram_bot.views.lobby import deep_link, render_lobby, settings_keyboard, settings_text
from telegram_bot.views.screens import lobby_lang


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
    as an alert); ``params``: the notice's placeholders.  ``then``: what to do
    once answered (starting a game sends many messages; the press is answered
    first)."""

    notice: str | None = None
    params: Mapping[str, object] = field(default_factory=dict)
    url: str | None = None
    error: EngineError | None = None
    then: Callable[[], Awaitable[None]] | None = None


@dataclass(frozen=True)
class LobbyActions:
    """The lobby use cases over the services they need."""

    svc: TableService
    ui: ChatStateStore
    publisher: Publisher
    delivery: Delivery

    async def post(
        self, table: Table, chat_id: int, locale: str, *, user: int, group_lang: str | None = None
    ) -> None:
        """Send the lobby message to ``chat_id`` and remember it."""
        text, markup = render_lobby(table, locale=locale, bot_username=self.publisher.bot_username)
        msg = await self.delivery.send(chat_id, text, markup)
        await self.ui.update_table(
            table.id,
            lobby_messages={chat_id: msg.message_id} if msg is not None else None,
            langs={user: locale},
            group_lang=group_lang,
        )

    async def open(
        self, player: Person, *, variant: str, timer: int, group: int | None, group_lang: str
    ) -> LobbyOutcome:
        """``/new``: a lobby in ``group``, or (None) a private lobby whose message
        goes to his private chat after the notice."""
        try:
            result = await self.svc.lobbies.create_lobby(
                player.id,
                player.name,
                chat=group,
                variant=variant,
                timer=timer,
                private=group is None,
            )
        except EngineError as e:
            return self.elsewhere(e, player)
        table = result.table
        if group is None:
            return LobbyOutcome(
                texts.NEW_GAME_LOBBY,
                then=lambda: self.post(table, player.id, player.locale, user=player.id),
            )
        await self.post(table, group, group_lang, user=player.id, group_lang=group_lang)
        await self.ui.update_table(table.id, langs={player.id: player.locale})
        return LobbyOutcome()

    async def play_solo(
        self, player: Person, *, variant: str, timer: int, opponents: int, level: str = "normal"
    ) -> LobbyOutcome:
        """``/play``: a private game against ``opponents`` AI players of ``level``
        (``engine.ai.LEVELS``), started at once (the lobby is cancelled again if
        it cannot start)."""
        for attempt in range(2):
            try:
                lobby = await self.svc.lobbies.create_lobby(
                    player.id,
                    player.name,
                    variant=variant,
                    timer=timer,
                    private=True,
                    ai_kind=LEVELS[level],
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
        return LobbyOutcome(then=lambda: self.publisher.start_game(code))

    async def _settle_solo(self, code: str, player: Person, error: EngineError) -> LobbyOutcome:
        """A ``/play`` set-up failed half-way (Redis went away): complete it if the
        start went through after all (its reply was lost), else roll it back
        (cancel the lobby, which frees his seat).  If Redis cannot tell now, the
        next ``/play`` drops the abandoned lobby (:meth:`_drop_abandoned_solo`) or
        offers the started game (:meth:`elsewhere`)."""
        with contextlib.suppress(EngineError):
            if (await self.svc.lobbies.lobby(code)).status == PLAYING:
                return LobbyOutcome(then=lambda: self.publisher.start_game(code))
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
            humans = [s for s in table.seats if s.user is not None and not s.left]
            if table.status != OPEN or not table.private or table.creator != player.id:
                return False
            if len(humans) != 1 or len(humans) == len(table.seats):
                return False  # friends joined, or no AI yet: an invitation (/new), kept
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

        async def send_missing_hand() -> None:
            with contextlib.suppress(EngineError):
                await self.publisher.resend_hand(player.id, table_id=str(code))

        return LobbyOutcome(error=error, then=send_missing_hand)

    async def offer_table(self, error: EngineError, player: Person) -> None:
        """After a refused press (an alert cannot hold a button): a private message
        with the refusal and the "Open my table" button (``seated_elsewhere``)."""
        code = getattr(error, "info", {}).get("table") if error.code == "seated_elsewhere" else None
        if not code:
            return
        _ = Translator(player.locale)
        markup = open_table_keyboard(str(code), _(texts.OPEN_TABLE))
        await self.delivery.send(player.id, texts.refusal(error, _), markup)

    async def join(self, code: str, player: Person) -> Table:
        """Seat him at the lobby (LiveError when refused); remember his language;
        re-render the lobby messages."""
        table = await self._seat(code, player)
        await self.publisher.refresh(code, actor=player.id)
        return table

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
            hand = (await self.publisher.ui.table(code)).hands.get(player.id)
            if hand is None or hand < 0:  # in the group, or none: here from now on
                return LobbyOutcome(
                    texts.GAME_STARTED_PRIVATE,
                    then=lambda: group_hands.open_private(self.publisher, code, player.id),
                )
            return LobbyOutcome(
                texts.GAME_STARTED_PRIVATE,
                then=lambda: self.publisher.refresh(code, seats=[seat], actor=player.id),
            )
        try:
            table = await self.join(code, player)
        except EngineError as e:
            return self.elsewhere(e, player)
        return await self._joined(table, player)

    async def _joined(self, table: Table, player: Person) -> LobbyOutcome:
        """The deep link's answer names the game and the group, or who gathers a
        private game (issue 13); a private lobby's players each keep a copy of
        its message."""
        _ = Translator(player.locale)
        game = bold(_(VARIANT_TITLES[table.variant]))
        if table.chat is not None and table.chat < 0:
            group = await self.publisher.chat_title(table.chat)
            if not group:
                return LobbyOutcome(texts.JOINED)
            return LobbyOutcome(texts.JOINED_GROUP, {"game": game, "group": user_text(group)})
        creator = next((s.name for s in table.seats if s.user == table.creator), "")
        params = {"game": game, "name": user_text(creator)}
        if table.status != OPEN:
            return LobbyOutcome(texts.JOINED_PRIVATE, params)
        return LobbyOutcome(
            texts.JOINED_PRIVATE, params, then=lambda: self._send_copy(table, player)
        )

    async def _send_copy(self, table: Table, player: Person) -> None:
        bot = self.publisher.bot_username
        text, markup = render_lobby(table, locale=player.locale, bot_username=bot)
        sent = await self.delivery.send(player.id, text, markup)
        if sent is not None:
            await self.ui.update_table(table.id, lobby_messages={player.id: sent.message_id})

    async def press(
        self,
        button: LobbyCb,
        player: Person,
        prefs: PrefsCache,
        message: tuple[int, int] | None,
        request_id: str = "",
    ) -> LobbyOutcome:
        """A lobby button pressed on ``message`` (chat id, message id).  Every write
        carries ``request_id`` (the callback query's): the same press delivered
        again -- to another process too -- is applied once (a second *Start* sends
        no second set of hand messages)."""
        try:
            return await self._press(button, player, prefs, message, request_id)
        except EngineError as e:
            if e.code == "seated_elsewhere":
                return LobbyOutcome(error=e, then=partial(self.offer_table, e, player))
            return LobbyOutcome(error=e)

    async def _press(
        self,
        button: LobbyCb,
        player: Person,
        prefs: PrefsCache,
        message: tuple[int, int] | None,
        rid: str,
    ) -> LobbyOutcome:
        # The outcome is decided here; what the messages show then is left to
        # ``then``, which runs once the press is answered (an edit may wait long
        # for the chat's flood tokens; Telegram drops a late answer).
        code, op, user = button.code, button.op, player.id
        refresh = partial(self.publisher.refresh, code, actor=user)
        if op == LobbyOp.JOIN:
            await self._open_lobby(code)
            if not (await prefs.get(user)).started:
                if message is not None and message[0] < 0:
                    # he never opened the private chat, but an ephemeral message
                    # asks only that its receiver be a member of the group (issue
                    # 14): he plays here, his hand shown in the group to him alone
                    await self._seat(code, player, rid)
                    await self.ui.set_prefs(user, plays=group_hands.GROUP)
                    return LobbyOutcome(texts.JOINED_HERE, then=refresh)
                # not in a group (an inline lobby): the deep link opens the
                # private chat and seats him
                return LobbyOutcome(url=deep_link(self.publisher.bot_username, code))
            await self._seat(code, player, rid)
            return LobbyOutcome(texts.JOINED, then=refresh)
        if op in (LobbyOp.SETTINGS, LobbyOp.SET, LobbyOp.BACK):
            return LobbyOutcome(then=await self.settings(button, player, message, rid))
        if op in (LobbyOp.START, LobbyOp.REMATCH):
            begin = self.svc.games.start if op == LobbyOp.START else self.svc.games.rematch
            if (await begin(code, user, request_id=rid)).duplicate:
                return LobbyOutcome()  # the first copy of this press sends the hands
            return LobbyOutcome(then=lambda: self.publisher.start_game(code))
        write = self._writes().get(op)
        if write is None:
            return LobbyOutcome(texts.BAD_BUTTON)
        await write(code, user, rid)
        return LobbyOutcome(texts.LEFT if op == LobbyOp.LEAVE else None, then=refresh)

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
            LobbyOp.LEAVE: lambda c, u, r: svc.lobbies.leave(c, u, request_id=r),
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
    ) -> Callable[[], Awaitable[None]] | None:
        """The settings keyboard on the lobby message itself; a change goes through
        the service, while the lobby is open.  Only the lobby's owner opens it: the
        panel replaces the shared lobby message for everyone (``not_owner`` for
        anyone else, nothing changes).  Returns what shows it (to run once the press
        is answered)."""
        table = await self._open_lobby(button.code)
        if table.creator != player.id:
            raise LiveError(
                "not_owner", "only the lobby's creator can change the settings", action="settings"
            )
        if button.op == LobbyOp.SET and button.setting is not None:
            changes = setting_changes(table, *button.setting)
            changed = await self.svc.lobbies.configure(
                button.code, player.id, request_id=request_id, **changes
            )
            table = changed.table
        if message is None:
            return None
        return lambda: self._show_settings(button, player, table, message)

    async def _show_settings(
        self, button: LobbyCb, player: Person, table: Table, message: tuple[int, int]
    ) -> None:
        chat, message_id = message
        snap = await self.publisher.snapshot(button.code)
        lang = lobby_lang(snap, chat) if chat < 0 else player.locale
        bot = self.publisher.bot_username
        if button.op == LobbyOp.BACK:
            text, markup = render_lobby(table, locale=lang, bot_username=bot)
        else:
            text, markup = settings_text(table, locale=lang), settings_keyboard(table, locale=lang)
        await self.delivery.edit(chat, message_id, text, markup, urgency=Urgency.NOW)
        if button.op == LobbyOp.SET:  # the other lobby messages (private lobbies) show it
            for c, m in snap.ui.lobby_messages.items():
                if c != chat:
                    t2, k2 = render_lobby(table, locale=lobby_lang(snap, c), bot_username=bot)
                    await self.delivery.edit(c, m, t2, k2, urgency=Urgency.SOON)


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
