"""Callback data of every inline button (aiogram ``CallbackData``), always within
Telegram's 64 bytes.

Game buttons (``g:<game>:<version>:<payload>:<stamp>:<sel>``) carry the short
game id, the state version the keyboard was drawn at, a payload, the presser's
decision stamp (:func:`telegram_bot.buttons.moves.stamp`) and the revision of his
selection the keyboard shows (:attr:`telegram_bot.buttons.moves.Selection.token`).  The
handler compares the version with the live one; when they differ, the button is
honoured only if the stamp still matches (his hand and options are unchanged, so
the press means what it meant), else it is stale: a short notice and a
refreshed message (a pass still legal is honoured; a double tap of a move he made
is answered silently).  A card or *Play* press whose ``sel`` is not his selection's revision
now (a toggle delivered twice, a double tap) changes nothing: his keyboard is
redrawn.  Payloads:

====================  =====================================================
``C10H10S``, ``K`` …  an engine action in its text form (:meth:`engine.Action.text`)
``c7S``               a card pressed (``telegram_bot.buttons.moves`` decides what it means)
``pb``                pass for the rest of this bout (RULES §0 Passing)
``go``                play the cards toggled so far
``x``                 clear the toggled cards
``b``                 back: close the choice offered for one card
``p2``                show page 2 of a huge hand
``n``                 no-op (a page counter)
====================  =====================================================

Lobby buttons (``l:<code>:<op>:<arg>``) carry the lobby's invite code, the
operation and, for a settings change, ``key=value``.

Anything else -- a forged or truncated payload -- fails validation: ``unpack``
raises (so aiogram's ``GameCb.filter()`` does not match) and :func:`parse_game` /
:func:`parse_lobby` return ``None``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Literal

from aiogram.filters.callback_data import CallbackData
from pydantic import Field, ValidationError, field_validator

from engine import Action, ActionFormatError
from engine.cards import RANKS, SUITS

MAX_CALLBACK_BYTES = 64
MAX_CODE = 16
"""Game ids and lobby codes: ``secrets.token_urlsafe(8)`` is 11 characters."""
MAX_VERSION = 10**10 - 1
MAX_PAYLOAD = 24
STAMP_PATTERN = r"^(?:[A-Za-z0-9_-]{6})?$"
"""Longest game payload: every single-step action (a cover is at most 7 bytes);
several cards go through toggling and ``go``."""
SEL_PATTERN = r"^[0-9]{0,2}$"
"""A selection revision modulo 100 (empty: a button drawn before revisions); with
the longest code, version and payload the data is exactly 64 bytes."""


def is_card(text: str) -> bool:
    """Is ``text`` a card in the engine's notation?"""
    return text == "JK" or (len(text) in (2, 3) and text[:-1] in RANKS and text[-1] in SUITS)


CODE_PATTERN = rf"^[A-Za-z0-9_-]{{1,{MAX_CODE}}}$"
_CARD = r"(?:10|[2-9JQKA])[CDHS]|JK"
_PAYLOAD_RE = re.compile(rf"^(?:[LCTRS](?:{_CARD})+|[KP]|c(?:{_CARD})|pb|go|x|b|n|p\d{{1,3}})$")

PressKind = Literal["action", "card", "play", "clear", "back", "page", "noop", "bout_pass"]


@dataclass(frozen=True)
class Press:
    """A game button's payload, parsed."""

    kind: PressKind
    action: str = ""  # kind "action": the engine's action text
    card: str = ""  # kind "card": the pressed card (engine notation)
    page: int = 0  # kind "page"

    @property
    def payload(self) -> str:
        return {
            "action": self.action,
            "card": "c" + self.card,
            "play": "go",
            "clear": "x",
            "back": "b",
            "page": f"p{self.page}",
            "noop": "n",
            "bout_pass": "pb",
        }[self.kind]


PLAY = Press("play")
CLEAR = Press("clear")
BACK = Press("back")
INERT = Press("noop")
BOUT_PASS = Press("bout_pass")


def act(text: str) -> Press:
    return Press("action", action=text)


def press_card(card: str) -> Press:
    return Press("card", card=card)


def page(n: int) -> Press:
    return Press("page", page=n)


def parse_payload(payload: str) -> Press | None:
    """The :class:`Press` a payload stands for, or ``None`` if it is malformed."""
    if len(payload) > MAX_PAYLOAD or not _PAYLOAD_RE.match(payload):
        return None
    if payload == "go":
        return PLAY
    if payload == "x":
        return CLEAR
    if payload == "b":
        return BACK
    if payload == "n":
        return INERT
    if payload == "pb":
        return BOUT_PASS
    if payload[0] == "p":
        return page(int(payload[1:]))
    if payload[0] == "c" and is_card(payload[1:]):
        return press_card(payload[1:])
    try:
        Action.from_text(0, payload)
    except ActionFormatError:
        return None
    return act(payload)


class GameCb(CallbackData, prefix="g"):
    """A button of a player's hand message."""

    game: Annotated[str, Field(pattern=CODE_PATTERN)]
    version: Annotated[int, Field(ge=0, le=MAX_VERSION)]
    payload: str
    stamp: Annotated[str, Field(pattern=STAMP_PATTERN)] = ""
    sel: Annotated[str, Field(pattern=SEL_PATTERN)] = ""

    @field_validator("payload")
    @classmethod
    def _check_payload(cls, value: str) -> str:
        if parse_payload(value) is None:
            raise ValueError(f"not a game button payload: {value!r}")
        return value

    @property
    def press(self) -> Press:
        p = parse_payload(self.payload)
        assert p is not None  # validated on construction
        return p

    @classmethod
    def unpack(cls, value: str) -> GameCb:
        """Also a button drawn before stamps or selection revisions existed
        (``g:<id>:<version>:<payload>[:<stamp>]``): it parses without them, so the
        handler answers it as stale (or redraws his keyboard)."""
        parts = value.count(cls.__separator__)
        if parts in (3, 4):
            value += cls.__separator__ * (5 - parts)
        return super().unpack(value)

    @classmethod
    def of(cls, game_id: str, version: int, press: Press, stamp: str = "", sel: str = "") -> GameCb:
        return cls(game=game_id, version=version, payload=press.payload, stamp=stamp, sel=sel)


class LobbyOp(StrEnum):
    JOIN = "j"
    LEAVE = "l"
    ADD_AI = "a"
    REMOVE_AI = "r"
    SETTINGS = "s"  # open the settings keyboard
    SET = "set"  # change one setting: arg "key=value"
    BACK = "b"  # close the settings keyboard
    START = "go"
    CANCEL = "x"
    SHARE = "sh"
    REMATCH = "re"


SETTING_VALUES: dict[str, tuple[str, ...]] = {
    "game": ("chuvash", "shchelkovsky"),
    "decks": ("2", "4"),
    "joker": ("0", "1"),  # remove one joker (S1)
    "timer": ("0", "30", "60", "120"),
    "max": tuple(str(n) for n in range(2, 11)),
    "watch": ("0", "1"),  # spectators allowed (issue #16)
    "level": ("easy", "normal", "hard", "expert"),  # the AI seats' level (engine.ai.LEVELS)
    "rated": ("0", "1"),  # rated or casual games (#25)
}
"""Every settings change a button may ask for; the table service validates the
combination (e.g. ``max`` against the game)."""


def parse_setting(arg: str) -> tuple[str, str] | None:
    """``"decks=4"`` -> ``("decks", "4")``; ``None`` for anything not in
    :data:`SETTING_VALUES`."""
    key, sep, value = arg.partition("=")
    if not sep or value not in SETTING_VALUES.get(key, ()):
        return None
    return key, value


class LobbyCb(CallbackData, prefix="l"):
    """A button of a lobby message (or of the game-over message: rematch).
    ``arg``: a setting (``SET``), or the number of the game whose *Rematch* it
    is (#38: pressed once the next game started, it is answered as stale)."""

    code: Annotated[str, Field(pattern=CODE_PATTERN)]
    op: LobbyOp
    arg: str = ""

    @field_validator("arg")
    @classmethod
    def _check_arg(cls, value: str) -> str:
        if value and not _game_no(value) and parse_setting(value) is None:
            raise ValueError(f"not a setting: {value!r} (nor a game's number)")
        return value

    @property
    def setting(self) -> tuple[str, str] | None:
        return parse_setting(self.arg) if self.arg else None

    @property
    def game(self) -> int | None:
        """The game a *Rematch* button was drawn for (None: a button drawn
        before it carried one)."""
        return int(self.arg) if _game_no(self.arg) else None


def _game_no(value: str) -> bool:
    return value.isascii() and value.isdigit() and len(value) <= 9


def parse_game(data: str | None) -> GameCb | None:
    """A game button's data, or ``None`` if it is not one (forged, truncated, other)."""
    if not data or len(data.encode()) > MAX_CALLBACK_BYTES:
        return None
    try:
        return GameCb.unpack(data)
    except (TypeError, ValueError, ValidationError):
        return None


def parse_lobby(data: str | None) -> LobbyCb | None:
    """A lobby button's data, or ``None`` if it is not one."""
    if not data or len(data.encode()) > MAX_CALLBACK_BYTES:
        return None
    try:
        return LobbyCb.unpack(data)
    except (TypeError, ValueError, ValidationError):
        return None


class ReplayOp(StrEnum):
    OPEN = "o"
    STEP = "s"
    CHECK = "c"  # *Check the deal*: the seed, the commitment, the command (#29)


class ReplayCb(CallbackData, prefix="rp"):
    table: Annotated[str, Field(pattern=CODE_PATTERN)]
    game: Annotated[int, Field(ge=1, le=10**9)]
    step: Annotated[int, Field(ge=0, le=10**6)]
    op: ReplayOp


class WatchCb(CallbackData, prefix="w"):
    """*Watch* under a group's table message: its public view in the presser's
    private chat, updated like the table (issue #16)."""

    table: Annotated[str, Field(pattern=CODE_PATTERN)]


class LangCb(CallbackData, prefix="lang"):
    """/lang keyboard: ``lang`` is ru, uk or en."""

    lang: Literal["ru", "uk", "en"]


class PlayCb(CallbackData, prefix="pl"):
    """A choice under the private ``/play`` (#41): a game against AI players of
    ``level`` (``engine.ai.LEVELS``), started at once."""

    variant: Literal["chuvash", "shchelkovsky"]
    level: Literal["easy", "normal", "hard", "expert"]


class NewLobbyCb(CallbackData, prefix="nl"):
    """ "Open a lobby here" under the group's /play answer: ``variant`` to play."""

    variant: Literal["chuvash", "shchelkovsky"]


class SeatCb(CallbackData, prefix="seat"):
    """Seat operations in a game: ``op`` = ``back`` (take my seat back from the AI)."""

    game: Annotated[str, Field(pattern=CODE_PATTERN)]
    op: Literal["back"]


class TableCb(CallbackData, prefix="t"):
    """ "Open my table" (under a ``seated_elsewhere`` refusal): his hand message
    of that game sent again, or a copy of that lobby's message."""

    code: Annotated[str, Field(pattern=CODE_PATTERN)]


class CardsCb(CallbackData, prefix="mc"):
    """*My cards* on a group's table message: the presser's hand shown to him
    alone, as an ephemeral message in the group (issue 14)."""

    code: Annotated[str, Field(pattern=CODE_PATTERN)]


class ArenaOp(StrEnum):
    JOIN = "j"
    LEAVE = "w"
    CANCEL = "x"  # a group admin's (#38)


class ArenaCb(CallbackData, prefix="ar"):
    """*Join* and *Withdraw* on an arena's message in a group (#27); *Cancel*
    under the standings an admin asked for (#38)."""

    arena: Annotated[str, Field(pattern=CODE_PATTERN)]
    op: ArenaOp


class ArenaSetupCb(CallbackData, prefix="as"):
    """The admin's arena set-up message (#27): the choices so far -- game
    (``c`` Chuvash, ``s`` Shchelkovsky), players a table, minutes, start in
    minutes from now -- and ``op``: ``set`` redraws it, ``go`` announces."""

    v: Literal["c", "s"]
    n: Annotated[int, Field(ge=2, le=6)]
    m: Annotated[int, Field(ge=10, le=180)]
    s: Annotated[int, Field(ge=0, le=1440)]
    op: Literal["set", "go"]
