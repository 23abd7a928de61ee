"""What the Mini App's page shows of a table (#42), pure: one JSON value per
viewer.  A seated player gets his seat's view (:func:`engine.view`: his own
hand and legal moves, everyone's counts and roles, the bout, the stock and
trump, the public events) and his decision stamp, which a move of his page
carries back (:func:`telegram_bot.buttons.moves.stamp`, the same as a hand
button's); anybody else the public view (:func:`engine.public_view`: no hand
at all).  Names go out as data: the page sets them as text, never as markup."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from engine import GameState, public_view, view
from tables.model import PLAYING, Table
from tables.records import GameResult
from telegram_bot.buttons.moves import stamp
from telegram_bot.views.cards import FACE_RANKS
from telegram_bot.views.fair import table_commitment
from telegram_bot.views.format import ai_name, history_lines
from telegram_bot.views.i18n import VARIANT_TITLES, Translator

PAGE_EVENTS = 12
"""The latest public events a page shows (its *last moves*)."""
PAGE_LINES = 4
"""The last moves a page writes out in words (the newest last)."""
SUIT_ORDER_HIGH_FIRST = ("S", "H", "D", "C")
"""C3: Chuvash Rooster's suits, the highest first (♠ > ♥ > ♦ > ♣): a higher
suit beats a lower one of an equal or lower rank (C4), so the page shows the
order where trumps would be."""


class TableRead(Protocol):
    """A table as read (:class:`tables.Loaded`): what the page's view needs."""

    @property
    def version(self) -> int: ...
    @property
    def table(self) -> Table: ...
    @property
    def state(self) -> GameState | None: ...
    @property
    def deadline(self) -> int | None: ...
    @property
    def result(self) -> GameResult | None: ...


def may_watch(table: Table, user: int) -> bool:
    """Whether ``user`` may follow ``table`` in the page: a player of it, or
    anybody while its lobby lets people watch a group's game -- as ``/watch``
    allows (issue #16's spectators): a private game has none."""
    if table.seat_of(user) is not None:
        return True
    return table.spectators and table.chat is not None and table.chat < 0


def page_view(loaded: TableRead, user: int, locale: str = "en") -> dict[str, Any]:
    """The table as ``user`` may see it, at ``loaded.version``; its last moves
    in words in ``locale`` (``lines``, the bot's own sentences)."""
    table = loaded.table
    seat = table.seat_of(user)
    data: dict[str, Any] = {
        "table": table.id,
        "version": loaded.version,
        "status": table.status,
        "variant": table.variant,
        "options": dict(table.options),
        "game_no": table.game_no,
        "timer": table.timer,
        "deadline": loaded.deadline,
        "you": seat,
        "seats": [
            {
                "name": s.name,
                "ai": s.user is None,
                "ai_playing": s.ai_controlled,
                "left": s.left,
            }
            for s in table.seats
        ],
        "game": None,
        "stamp": "",
        "result": None,
        "lines": [],
        "suit_order": list(SUIT_ORDER_HIGH_FIRST) if table.variant == "chuvash" else None,
        "title": Translator(locale)(VARIANT_TITLES.get(table.variant, table.variant)),
        "fair": None,  # the deal's commitment, as the game's first message shows it
    }
    state = loaded.state
    if state is not None and (table.status == PLAYING or loaded.result is not None):
        data["fair"] = table_commitment(table)  # a hash: nothing of the deal before its end
    if state is not None and table.status == PLAYING:
        if seat is not None:
            seat_view = view(state, seat, last_events=PAGE_EVENTS)
            data["game"] = seat_view
            data["stamp"] = stamp(seat_view)
        else:
            data["game"] = _public(state)
        _ = Translator(locale)
        names = [s.name if s.user is not None else ai_name(s.name, _) for s in table.seats]
        data["lines"] = plain_lines(data["game"], names, _, PAGE_LINES)
    result = loaded.result
    if result is not None and result.game == table.game_no:
        data["result"] = {
            "game": result.game,
            "loser": result.loser,
            "draw": result.draw,
            "places": list(result.places),
        }
    return data


def plain(line: str) -> str:
    """A message's line as plain text: the messages' lines are HTML (a name
    escaped by :func:`telegram_bot.views.format.user_text`, nothing else
    marked up), the page sets text -- unescaped once, the exact inverse."""
    return html.unescape(line)


def plain_lines(
    game: Mapping[str, Any], names: Sequence[str], _: Translator, last: int
) -> list[str]:
    """The last moves of a view in words, as the bot's messages say them
    (:func:`telegram_bot.views.format.history_lines`), as plain text."""
    return [plain(line) for line in history_lines(game, names, _, last)]


def faces(locale: str) -> dict[str, str]:
    """The face ranks as the reader's language names them (В/Д/К/Т in ru, uk)."""
    return dict(FACE_RANKS.get(locale, {}))


def _public(state: GameState) -> dict[str, Any]:
    data = public_view(state)
    data["events"] = data["events"][-PAGE_EVENTS:]
    return data


def page_labels(_: Translator) -> dict[str, str]:
    """The page's words in the reader's language, the hand message's own
    (placeholders such as ``{n}`` left for the page to fill)."""
    return {
        "take": _("Take"),
        "done": _("Done"),
        "pass": _("Pass"),
        "play": _("Play"),
        "clear": _("Clear"),
        "stock": _("stock: {n}", n="{n}"),
        "trump": _("trump {suit}", suit="{suit}"),
        "no_trump": _("no trump"),
        "waiting": _("Waiting for {names}", names="{names}"),
        "replay": _("Replay"),  # the game over: its replay in the viewer (#42)
        "ratings": _("Ratings"),  # his player page
        "fair": _("Fair deal"),  # the deal's commitment (engine/fairness.py)
    }
