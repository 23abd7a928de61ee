"""What a use case changed, as data for the publisher to show (never a closure):
the handler answers the user first, then hands the changes to
:meth:`telegram_bot.publishing.publisher.Publisher.show`.  A use case decides
what changed; what the messages then show, and when, is the publisher's."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from engine import EngineError
from engine.replay import ReplayStep
from tables.arena_rules import Arena
from tables.model import Table
from tables.rating_model import BoardRow
from telegram_bot.buttons.moves import Selection
from telegram_bot.state.snapshot_value import Snapshot
from telegram_bot.views.arena import Setup


@dataclass(frozen=True)
class Refresh:
    """A table changed: re-render the hand messages of ``seats`` (None: every
    human seat), the group's table message, lobby and spectators' messages;
    ``actor`` gets his own update at once.  ``wrote``: the version the caller's
    write made, claimed (``claim``, :class:`telegram_bot.state.claims.WriteClaims`)
    from the write on, so the write's own notification waits for this render
    instead of rendering the move twice.  ``written``: the table as that write
    left it (:meth:`tables.Loaded.after`, with the chat state the press read;
    #39: drawn from, not read again -- the chat state is read afresh);
    ``marked``: its render was marked pending before the write (#28), so it is
    not marked a second time.  ``from_page``: the move came from ``actor``'s
    Mini App page (#42 point 6): his hand waits like the others' whose page is
    open -- a button's press draws the presser's hand at once, page or not."""

    table_id: str
    seats: tuple[int, ...] | None = None
    actor: int | None = None
    wrote: int = 0
    claim: asyncio.Event | None = field(default=None, compare=False)
    written: Snapshot | None = field(default=None, compare=False, repr=False)
    marked: bool = False
    from_page: bool = False


@dataclass(frozen=True)
class Redraw:
    """One player's hand message drawn again at once from a snapshot already
    loaded (his selection changed, or he pressed a stale button)."""

    snap: Snapshot
    user: int
    selection: Selection


@dataclass(frozen=True)
class PagesClosed:
    """#42 point 6: the last Mini App page of each of ``users`` on the table
    closed (or expired with its process): their hand messages, left as they
    were while the page showed the table, are brought up to date once."""

    table_id: str
    users: tuple[int, ...]


@dataclass(frozen=True)
class GameStarted:
    """A game started (or a rematch): new hand and table messages."""

    table_id: str


@dataclass(frozen=True)
class HandToPrivate:
    """He opened his cards in private (the deep link): his hand there from now on."""

    table_id: str
    user: int


@dataclass(frozen=True)
class LobbyPosted:
    """A lobby message to send to ``chat`` (and remember): a new lobby in a group
    or in its creator's private chat, or a private lobby's copy for a player who
    joined by its link.  ``langs``: players' languages to remember with it."""

    table: Table
    chat: int
    locale: str
    langs: Mapping[int, str] = field(default_factory=dict)
    group_lang: str | None = None


@dataclass(frozen=True)
class SettingsShown:
    """The lobby's settings panel (or, ``back``, the lobby again) on the pressed
    message; after a change (``changed``) the lobby's other messages show it."""

    table: Table
    chat: int
    message_id: int
    locale: str
    back: bool = False
    changed: bool = False


@dataclass(frozen=True)
class TableOffered:
    """A refused press (an alert cannot hold a button) followed by a private
    message with the refusal and *Open my table* (``seated_elsewhere``)."""

    error: EngineError
    user: int
    locale: str


@dataclass(frozen=True)
class HandResent:
    """His hand message of ``table_id`` sent again in private (``again``: even if
    he has one -- he asked for his table)."""

    user: int
    table_id: str
    again: bool = False


@dataclass(frozen=True)
class HandShown:
    """*My cards* (answered already, #28): his hand in the group, to him alone --
    tied to the press (``query_id``) until ``fresh_until`` (the delivery's clock)."""

    table_id: str
    user: int
    query_id: str
    fresh_until: float


@dataclass(frozen=True)
class MenuSet:
    """/lang chose ``language`` for ``chat``: its command menu speaks it (set
    after the answer, #28)."""

    chat: int
    language: str


@dataclass(frozen=True)
class AppMenuSet:
    """#42: the private ``chat``'s menu button opens the Mini App, labelled in
    ``language`` (Telegram's default for every chat is one label: the bot
    sets a chat's own when its user speaks another, at /start).  Nothing
    while the Mini App is off."""

    chat: int
    language: str


@dataclass(frozen=True)
class LeftNoted:
    """He left ``table`` mid-game: his hand message (or a new one) says so, with
    *Take my seat back* while the game lasts (``over``: the AI played it out);
    ``reply_to``: a new one answers his /leave, that message of his private
    chat (#41)."""

    table: Table
    user: int
    locale: str
    over: bool
    reply_to: int | None = None


@dataclass(frozen=True)
class ReplayStepped:
    """The replay message ``message_id`` in his private chat shows ``step`` now
    (its ◀ ▶ pressed there)."""

    step: ReplayStep
    user: int
    message_id: int
    locale: str


@dataclass(frozen=True)
class ArenaShown:
    """An arena changed (#27): its message in its group shows it -- coalesced,
    within :data:`telegram_bot.publishing.arena_board.BOARD_GAP`, the newest wins."""

    arena: Arena


@dataclass(frozen=True)
class ArenaPosted:
    """A new arena's message in its group, in ``lang`` from now on: ``message``
    (the admin's set-up message) becomes it, else a new one."""

    arena: Arena
    lang: str
    message: int | None = None


@dataclass(frozen=True)
class ArenaSetupShown:
    """The admin's set-up message ``message_id`` in ``chat`` shows ``setup``."""

    chat: int
    message_id: int
    setup: Setup
    lang: str


@dataclass(frozen=True)
class ArenaAnswered:
    """A member's ``/arena`` while ``arena`` is on, answered in ``chat`` (#38,
    #41): a reply to the arena's message in its group, else the standings as of
    now with a link to it; ``low``: at low priority."""

    arena: Arena
    chat: int
    lang: str
    low: bool = False


@dataclass(frozen=True)
class ArenaCancelled:
    """An admin cancelled ``arena`` from the standings message ``standings``
    (#38): it shows them as they stay, without its button."""

    arena: Arena
    standings: int


@dataclass(frozen=True)
class ArenaWoke:
    """An arena's wake (:class:`tables.arena_runner.Woken`): the games it
    started (``started``: their tables) shown as any started game is, the
    players it withdrew (user, why) told, its standings, its podium once
    ``finished``."""

    arena: Arena
    started: tuple[str, ...] = ()
    withdrawn: tuple[tuple[int, str], ...] = ()
    finished: bool = False


@dataclass(frozen=True)
class GroupLost:
    """The bot lost the group ``chat`` (#38, ``reason`` as
    :data:`tables.groups.REASONS`): each of ``players`` is told in private, and,
    for a group that became the supergroup ``new_chat``, that supergroup;
    ``forfeited``: the players of a rated game that the user ``by``
    (``by_name``) forfeited by removing the bot -- each told that it counts."""

    chat: int
    reason: str
    players: tuple[int, ...]
    title: str
    new_chat: int | None = None
    by: int | None = None
    by_name: str = ""
    forfeited: tuple[int, ...] = ()


@dataclass(frozen=True)
class TopSent:
    """``/top`` while the group's arena is on (#38): the group's players by
    rating sent to ``chat`` (his private chat, or the group at low priority:
    in ``thread``, the forum topic of the command)."""

    chat: int
    boards: Mapping[str, Sequence[BoardRow]]
    locale: str
    low: bool = False
    thread: int | None = None


ArenaChange = (
    ArenaShown
    | ArenaPosted
    | ArenaSetupShown
    | ArenaAnswered
    | ArenaCancelled
    | GroupLost
    | TopSent
)
"""What an arena's messages (:class:`telegram_bot.publishing.arena_board.ArenaBoards`)
show; :class:`ArenaWoke` also starts games, so the publisher takes it apart."""

Change = (
    Refresh
    | Redraw
    | PagesClosed
    | GameStarted
    | HandToPrivate
    | LobbyPosted
    | SettingsShown
    | TableOffered
    | HandResent
    | HandShown
    | MenuSet
    | AppMenuSet
    | LeftNoted
    | ReplayStepped
    | ArenaChange
    | ArenaWoke
)


class Shows(Protocol):
    """What a handler does with the publisher: hands it what changed, once the
    user is answered (:meth:`telegram_bot.publishing.publisher.Publisher.show`)
    -- and nothing else (the ``handlers-thin`` contract: no delivery)."""

    async def show(self, *changes: Change | None) -> None: ...
