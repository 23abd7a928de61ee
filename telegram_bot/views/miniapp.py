"""The ways into the Mini App (#42), pure: where its page lives, and the buttons
that open it -- a ``web_app`` button in a private chat, a URL button to the
app's direct link (or to the private chat) in a group.

Telegram allows a ``web_app`` inline button "only in private chats between a
user and the bot" (Bot API, ``InlineKeyboardButton.web_app``); a group -- its
table message, and a hand shown there to one member (an ephemeral message) --
gets a URL button to the app's direct link ``https://t.me/<bot>/<short
name>?startapp=<table id>``, which opens the app in place with the table in
its init data's ``start_param``.  Without a short name registered with
@BotFather, that button is a deep link to the private chat
(``?start=app_<table id>``), which answers with the ``web_app`` button."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from aiogram.types import InlineKeyboardButton, InlineKeyboardMarkup, MenuButtonWebApp, WebAppInfo

from telegram_bot.views.i18n import N_, Translator

TABLE_PARAM = "t"
"""The page's query parameter naming a table: ``MINIAPP_URL?t=<table id>``."""
REPLAY_PARAM, STEP_PARAM = "r", "s"
"""A finished game's replay: ``MINIAPP_URL?r=<table id>.<game>&s=<step>``."""
PLAYER_PARAM = "p"
"""The player's own page: ``MINIAPP_URL?p=1``."""
TABLE_ID_LENGTH = 11
"""A table id's length (``secrets.token_urlsafe(8)``, :mod:`tables.lobbies`)."""
REPLAY_START = re.compile(r"^r(\d{1,9})_([A-Za-z0-9_-]{1,64})$")
"""A direct link's ``startapp`` that opens a replay: ``r<game>_<table id>``
(a group's result message; the page routes on it).  Longer than any table
id, so never taken for one (:func:`replay_start`)."""

APP_LINK = "app_"
"""The ``/start`` payload prefix of the deep link that answers with the
``web_app`` button of a table: ``t.me/<bot>?start=app_<table id>``."""

APP_MARK = "🎴"
"""The mark of the buttons that open the Mini App."""

OPEN_TABLE = N_("Card table")
MY_TABLES = N_("My tables")
RATING_HISTORY = N_("Rating history")
"""/rating's button to the player page, and the page's chart (#42)."""
MY_GAMES = N_("My games")
"""/replay's button to the player page: his ratings and recent games."""
OPEN_IN_APP = N_("Your game as a real card table: tap the button below to open it.")


@dataclass(frozen=True)
class MiniApp:
    """Where the Mini App lives (``MINIAPP_URL``, ``MINIAPP_SHORT_NAME``) and
    the bot whose direct links open it: a value the views are given."""

    url: str
    short_name: str
    bot_username: str

    def page(self, table_id: str | None = None) -> str:
        """The page's URL: a table's (``?t=<id>``, beside any query the
        configured URL has), or the user's lobbies and games."""
        if table_id is None:
            return self.url
        return self._with((TABLE_PARAM, table_id))

    def replay(self, table_id: str, game: int, step: int = 0) -> str:
        """The replay viewer's URL of game ``game`` of ``table_id`` at ``step``."""
        return self._with((REPLAY_PARAM, f"{table_id}.{game}"), (STEP_PARAM, str(step)))

    def player(self) -> str:
        """The player page's URL: his ratings, reliability and recent games."""
        return self._with((PLAYER_PARAM, "1"))

    def _with(self, *params: tuple[str, str]) -> str:
        parts = urlsplit(self.url)
        query = [*parse_qsl(parts.query, keep_blank_values=True), *params]
        return urlunsplit(parts._replace(query=urlencode(query)))

    def direct_link(self, table_id: str) -> str | None:
        """The app's direct link with the table as ``startapp`` (opens in place
        in a group), or None without a short name."""
        if not self.short_name or not self.bot_username:
            return None
        return f"https://t.me/{self.bot_username}/{self.short_name}?startapp={table_id}"

    def replay_link(self, table_id: str, game: int) -> str | None:
        """The app's direct link that opens game ``game`` of ``table_id`` in the
        replay viewer (a group's result message), or None without a short name."""
        link = self.direct_link(f"r{game}_{table_id}")
        return link if link is not None and len(table_id) <= 64 else None

    def group_link(self, table_id: str) -> str:
        """What a group's button opens: the direct link, else the private
        chat's deep link that answers with the ``web_app`` button."""
        return self.direct_link(table_id) or (
            f"https://t.me/{self.bot_username}?start={APP_LINK}{table_id}"
        )


def miniapp_of(url: str, short_name: str, bot_username: str) -> MiniApp | None:
    """The Mini App as configured; None when it is off (no ``MINIAPP_URL``)."""
    return MiniApp(url, short_name, bot_username) if url else None


def label(_: Translator) -> str:
    return APP_MARK + " " + _(OPEN_TABLE)


def private_button(app: MiniApp, table_id: str, _: Translator) -> InlineKeyboardButton:
    """A private chat's button: opens the table's page as a Mini App."""
    return InlineKeyboardButton(text=label(_), web_app=WebAppInfo(url=app.page(table_id)))


def group_button(app: MiniApp, table_id: str, _: Translator) -> InlineKeyboardButton:
    """A group's button (a ``web_app`` one is refused there): the direct link,
    or the deep link to the private chat."""
    return InlineKeyboardButton(text=label(_), url=app.group_link(table_id))


def with_app_button(
    markup: InlineKeyboardMarkup | None,
    app: MiniApp | None,
    table_id: str,
    _: Translator,
    *,
    in_group: bool,
) -> InlineKeyboardMarkup | None:
    """``markup`` with a last row that opens the table in the Mini App (none
    while the Mini App is off)."""
    if app is None:
        return markup
    button = group_button(app, table_id, _) if in_group else private_button(app, table_id, _)
    rows = markup.inline_keyboard if markup is not None else []
    return InlineKeyboardMarkup(inline_keyboard=[*rows, [button]])


def replay_button(
    app: MiniApp, table_id: str, game: int, step: int, _: Translator
) -> InlineKeyboardButton:
    """A private chat's button that opens a replay in the Mini App's viewer at
    ``step`` (the replay message's; #42)."""
    url = app.replay(table_id, game, step)
    return InlineKeyboardButton(text=APP_MARK + " " + _("Replay"), web_app=WebAppInfo(url=url))


def player_button(app: MiniApp, _: Translator, text: str = MY_GAMES) -> InlineKeyboardButton:
    """A private chat's button that opens his player page (``/replay``,
    ``/rating``; #42)."""
    return InlineKeyboardButton(text=APP_MARK + " " + _(text), web_app=WebAppInfo(url=app.player()))


def replay_start(param: str) -> tuple[str, int] | None:
    """``(table id, game)`` of a replay's ``startapp`` (``r<game>_<table>``), or
    None: a table's (at most :data:`TABLE_ID_LENGTH` characters), or nothing."""
    m = REPLAY_START.match(param)
    if m is None or len(param) <= TABLE_ID_LENGTH:
        return None
    return m.group(2), int(m.group(1))


def group_replay_button(
    app: MiniApp, table_id: str, game: int, _: Translator
) -> InlineKeyboardButton | None:
    """A group's result message: the app's direct link to the game's replay
    (None without a short name: *Replay* sends it to the private chat, where
    its message has the ``web_app`` button)."""
    link = app.replay_link(table_id, game)
    if link is None:
        return None
    return InlineKeyboardButton(text=APP_MARK + " " + _("Replay"), url=link)


def menu_button(app: MiniApp, _: Translator) -> MenuButtonWebApp:
    """The private chat's menu button: the app without a table (his lobbies
    and games)."""
    return MenuButtonWebApp(text=_(MY_TABLES), web_app=WebAppInfo(url=app.page()))


def open_table_screen(
    app: MiniApp, table_id: str, _: Translator
) -> tuple[str, InlineKeyboardMarkup]:
    """The private chat's answer to ``?start=app_<table id>`` (a group's button
    without a short name): the ``web_app`` button of that table."""
    markup = InlineKeyboardMarkup(inline_keyboard=[[private_button(app, table_id, _)]])
    return APP_MARK + " " + _(OPEN_IN_APP), markup
