"""A player's own commands: leaving his table (``/leave``), choosing a language
(``/lang``, for himself or, in a group, for the group), opening his table again
(the button under a ``seated_elsewhere`` refusal), taking his seat back from the
AI, and the bot's membership of his private chat (he blocked or unblocked it)."""

from __future__ import annotations

from dataclasses import dataclass

from engine import EngineError
from tables import CANCELLED, OPEN, OVER, PLAYING, LiveError, TableService
from telegram_bot.delivery import Delivery, Forbidden
from telegram_bot.publishing.changes import (
    Change,
    HandResent,
    LeftNoted,
    LobbyPosted,
    MenuSet,
    Refresh,
)
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.prefs import PrefsCache
from telegram_bot.state.snapshot import group_of, hand_target
from telegram_bot.usecases.delivery_events import DeliveryEvents
from telegram_bot.usecases.lobby import LobbyOutcome, Person
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator


@dataclass(frozen=True)
class LanguageChosen:
    """What /lang answers (``said``), the chat's command menu to set (None: not
    chosen) and what to redraw in the new language (None: nothing)."""

    said: str
    menu: MenuSet | None = None
    change: Change | None = None


def left_notice(note: int, chat: int, over: bool) -> str:
    """What /leave mid-game answers in ``chat`` when the note saying so (with
    *Take my seat back*) went to the chat ``note`` (#41): above in the same
    chat, or in the other one -- his private chat, or the group of his hand."""
    if note == chat:  # the note is just above: it says the rest
        return texts.LEFT if over else texts.LEFT_SEAT_ABOVE
    if over:
        return texts.LEFT_OVER
    return texts.LEFT_SEAT_GROUP if note < 0 else texts.LEFT_SEAT_PRIVATE


@dataclass(frozen=True)
class PlayerActions:
    svc: TableService
    ui: ChatStateStore
    prefs: PrefsCache
    delivery: Delivery  # /lang: the group's admins
    events: DeliveryEvents

    async def leave(self, player: Person, chat: int, command: int | None = None) -> LobbyOutcome:
        """He leaves the table he sits at (``/leave``, the message ``command`` sent
        in ``chat``): a lobby seat, or a game (the AI plays on).  Mid-game one
        message says so, with *Take my seat back* while the game lasts (issue
        13): his hand message, or a new one in his private chat if he has none.
        #41: the command is always answered below it, as a reply (the handler's)
        -- a short word that says where the way back is; when the note itself
        goes to the command's chat as a new message, it is that reply."""
        table = await self.svc.tables.where(player.id)
        if table is None:
            return LobbyOutcome(texts.NOT_SITTING)
        try:
            result = await self.svc.lobbies.leave(table.id, player.id)
        except EngineError as e:
            return LobbyOutcome(error=e)
        refresh = Refresh(table.id, actor=player.id)
        if table.status != PLAYING:
            return LobbyOutcome(texts.LEFT, changes=(refresh,))
        seat = result.table.player_seat(player.id)
        if seat is not None and not result.table.seats[seat].away:
            # out of the game before he left: no AI took his seat, no way back
            return LobbyOutcome(texts.LEFT_WHEN_OUT, changes=(refresh,))
        over = result.table.status != PLAYING  # the AI played the game out (no human left)
        msg = (await self.ui.table(table.id)).hands.get(player.id)
        # the note goes where his hand is: a new message in his private chat if none
        where = player.id if msg is None else hand_target(player.id, msg, group_of(table))[0]
        if msg is None and where == chat:
            noted = LeftNoted(table, player.id, player.locale, over, reply_to=command)
            return LobbyOutcome(changes=(noted, refresh))
        noted = LeftNoted(table, player.id, player.locale, over)
        return LobbyOutcome(left_notice(where, chat, over), changes=(noted, refresh))

    async def choose_language(
        self,
        chat: int,
        private: bool,
        user: int,
        locale: str,
        choice: str,
        *,
        admin: bool,
    ) -> LanguageChosen:
        """/lang or its keyboard: the answer's text, and what to show.  In a group
        only its admins choose the group's language (``admin``: an anonymous
        admin writing as the group; else Telegram is asked).  Nothing here waits
        for Telegram but that check: a press is answered before the chat's
        command menu is set (#28).  ``locale``: the refusal's language, the
        prompt's (#29)."""
        if not private and not (admin or await self.delivery.is_admin(chat, user)):
            return LanguageChosen(Translator(locale)(texts.ONLY_ADMINS))
        change = await self._set_language(chat, user, choice)
        # the command menu of this one chat speaks it too, not only the messages (issue 13)
        said = Translator(choice)(texts.LANGUAGE_SET if private else texts.GROUP_LANGUAGE_SET)
        return LanguageChosen(said, MenuSet(chat, choice), change)

    async def _set_language(self, chat: int, user: int, choice: str) -> Change | None:
        """In a group /lang sets the group's language: lobbies opened there from
        now on speak it, and so does the lobby or game of this group where the
        sender sits (its messages are redrawn).  In private it sets the user's
        language, and his messages at his current table are redrawn in it."""
        await self.prefs.update(chat, lang=choice)
        table = await self.svc.tables.where(user)
        if table is None:
            return None
        if chat < 0:
            if table.chat != chat:
                return None
            await self.ui.update_table(table.id, group_lang=choice)
            return Refresh(table.id, seats=(), actor=user)
        await self.ui.update_table(table.id, langs={user: choice})
        seat = table.seat_of(user)
        return Refresh(table.id, seats=() if seat is None else (seat,), actor=user)

    async def open_table(self, code: str, player: Person) -> LobbyOutcome:
        """ "Open my table": the game he sits at gets his hand message again, below
        (the old one no longer takes presses); a lobby, a copy of its message in
        his private chat.  A table he no longer sits at: ``not_seated``; one whose
        game ended: ``game_over`` (#41); one that is gone: ``no_table``."""
        try:
            table = await self.svc.lobbies.lobby(code)
        except EngineError as e:
            return LobbyOutcome(error=e)
        if table.status == OVER:  # #41: the button outlived the game he sat at
            over = LiveError("game_over", "the game is over", arena=bool(table.arena))
            return LobbyOutcome(error=over)
        if table.status == CANCELLED:
            return LobbyOutcome(error=LiveError("not_open", "the lobby was cancelled"))
        seat = table.seat_of(player.id)
        if seat is None or table.status not in (OPEN, PLAYING) or table.seats[seat].left:
            return LobbyOutcome(error=LiveError("not_seated", "you do not sit at this table"))
        if table.status == PLAYING:
            resent = HandResent(player.id, code, again=True)
            return LobbyOutcome(texts.HERE_IS_YOUR_TABLE, changes=(resent,))
        copy = LobbyPosted(table, player.id, player.locale)
        return LobbyOutcome(texts.HERE_IS_YOUR_TABLE, changes=(copy,))

    async def take_seat_back(self, game: str, user: int, request_id: str) -> LobbyOutcome:
        """*Take my seat back* from the AI (his hand message, after a timeout or a
        /leave)."""
        try:
            await self.svc.games.take_seat_back(game, user, request_id=request_id)
        except EngineError as e:
            return LobbyOutcome(error=e)
        return LobbyOutcome(texts.SEAT_BACK, changes=(Refresh(game, actor=user),))

    async def started(self, user: int) -> Change:
        """He (re)started or unblocked the bot: it may write to him; mid-game, his
        cards again."""
        await self.prefs.update(user, started=True)
        return HandResent(user, "")

    async def blocked(self, user: int) -> None:
        """He blocked the bot: his hand cannot reach him, so the AI plays his seat
        now -- waiting for the next 403 would stall a game that waits for his
        move (and has no turn timer)."""
        await self.prefs.update(user, started=False)
        await self.events.forbidden(user, Forbidden.BLOCKED)
