"""Messages of a lobby that are not re-renders of its table: a new lobby message
(and remembering it), the settings panel on the pressed lobby message, and the
private *Open my table* offer after a refused press."""

from __future__ import annotations

from tables import CANCELLED, OPEN, LiveError
from telegram_bot.delivery import Address, Delivery, Urgency
from telegram_bot.publishing.changes import LobbyPosted, SettingsShown, TableOffered
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.snapshot import Snapshots, thread_in
from telegram_bot.views import texts
from telegram_bot.views.i18n import Translator
from telegram_bot.views.keyboards import open_table_keyboard
from telegram_bot.views.lobby import (
    lobby_lang,
    lobby_screen,
    render_lobby,
    settings_keyboard,
    settings_text,
    started_lobby_screen,
)


class LobbyMessages:
    def __init__(
        self, snapshots: Snapshots, ui: ChatStateStore, delivery: Delivery, bot_username: str
    ) -> None:
        self.snapshots = snapshots
        self.ui = ui
        self.delivery = delivery
        self.bot_username = bot_username

    async def post(self, c: LobbyPosted) -> None:
        """Send the lobby message to ``c.chat`` and remember it.  A change to the
        lobby while the send's answer was on its way (a Join pressed on the message
        as soon as it appeared) re-rendered the lobby's messages without this one,
        whose id was not known yet: so once it is remembered, a lobby that changed
        since is shown on it (#28)."""
        text, markup = render_lobby(c.table, locale=c.locale, bot_username=self.bot_username)
        thread = thread_in(c.table, c.chat)  # a forum group: in the topic of its /new
        msg = await self.delivery.send(c.chat, text, markup, thread=thread)
        await self.ui.update_table(
            c.table.id,
            lobby_messages={c.chat: msg.message_id} if msg is not None else None,
            langs=dict(c.langs) or None,
            group_lang=c.group_lang,
        )
        if msg is None:
            return
        try:
            now = await self.snapshots.load(c.table.id)
        except LiveError:
            return  # gone meanwhile
        if now.table == c.table:
            return
        if now.table.status in (OPEN, CANCELLED):
            shown = lobby_screen(now, c.chat, self.bot_username)
        else:  # the game started meanwhile: the message says so, as the others do
            shown = started_lobby_screen(now, c.chat, self.bot_username)
        to = Address(c.chat, msg.message_id, thread=thread)
        await self.delivery.edit(to, *shown, urgency=Urgency.SOON)

    async def show_settings(self, c: SettingsShown) -> None:
        """The settings panel (or the lobby, ``back``) on the pressed message; a
        changed setting shows in the lobby's other messages (private lobbies)."""
        snap = await self.snapshots.load(c.table.id)
        lang = lobby_lang(snap, c.chat) if c.chat < 0 else c.locale
        bot = self.bot_username
        if c.back:
            text, markup = render_lobby(c.table, locale=lang, bot_username=bot)
        else:
            text, markup = (
                settings_text(c.table, locale=lang),
                settings_keyboard(c.table, locale=lang),
            )
        to = Address(c.chat, c.message_id, thread=thread_in(c.table, c.chat))
        await self.delivery.edit(to, text, markup, urgency=Urgency.NOW)
        if c.changed:
            for chat, msg in snap.ui.lobby_messages.items():
                if chat != c.chat:
                    t2, k2 = render_lobby(c.table, locale=lobby_lang(snap, chat), bot_username=bot)
                    to = Address(chat, msg, thread=thread_in(c.table, chat))
                    await self.delivery.edit(to, t2, k2, urgency=Urgency.SOON)

    async def offer_table(self, c: TableOffered) -> None:
        """After a refused press (an alert cannot hold a button): a private message
        with the refusal and the *Open my table* button (``seated_elsewhere``) --
        not to one who never started the bot (he may play in a group all the
        same): the alert told him, a private send would only draw a 403 (#38)."""
        error = c.error
        code = getattr(error, "info", {}).get("table") if error.code == "seated_elsewhere" else None
        if not code or not (await self.ui.prefs(c.user)).started:
            return
        _ = Translator(c.locale)
        markup = open_table_keyboard(str(code), _(texts.OPEN_TABLE))
        await self.delivery.send(c.user, texts.refusal(error, _), markup)
