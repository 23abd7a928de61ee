"""What a :class:`telegram_bot.publishing.publisher.Publisher` is built from,
as three values (#39 point 6: no constructor of a dozen parameters): the
stores it reads and marks, the messages it shows tables in, and the gaps of
a group whose hands are in it.  The delivery is given beside them."""

from __future__ import annotations

from dataclasses import dataclass

from telegram_bot.publishing.arena_board import ArenaBoards
from telegram_bot.publishing.hands import HandPlacement
from telegram_bot.publishing.lobby_messages import LobbyMessages
from telegram_bot.publishing.locks import TableLocks
from telegram_bot.state.chat_state import ChatStateStore
from telegram_bot.state.claims import WriteClaims
from telegram_bot.state.hints import HintClaims
from telegram_bot.state.pages import PagePresence
from telegram_bot.state.pending_renders import RenderMarks
from telegram_bot.state.snapshot import Snapshots
from telegram_bot.views.miniapp import MiniApp


@dataclass(frozen=True)
class PublisherStores:
    """What the publisher reads and marks: the snapshot loader, the chat state,
    this process's table locks and writers' claims; optional: the pending-render
    marks (None: renders unmarked), the flood hint's once-per-game claims (None:
    never given), the Mini App's open pages (None: no Mini App)."""

    snapshots: Snapshots
    ui: ChatStateStore
    locks: TableLocks
    claims: WriteClaims
    marks: RenderMarks | None = None
    hints: HintClaims | None = None
    pages: PagePresence | None = None


@dataclass(frozen=True)
class PublisherOutlets:
    """The messages the publisher shows tables in: the hands (where each lives),
    the lobby messages, the bot's username (its links name it); optional: the
    arenas' messages (#27; None: never given), the Mini App the hands and the
    table message open (#42; None: off)."""

    hands: HandPlacement
    lobbies: LobbyMessages
    bot_username: str
    arenas: ArenaBoards | None = None
    app: MiniApp | None = None


@dataclass(frozen=True)
class GroupGaps:
    """The gaps while a hand is in the group (#24; None: the delivery's own): of
    the table message (``table``), of a watching player's hand (``later``)."""

    table: float | None = None
    later: float | None = None
