"""What :class:`telegram_bot.delivery.coalesce.Delivery` keeps per message: the urgency
of an edit, the content waiting to go out (coalescing) and when it is due (by
its :class:`DeliveryConfig`)."""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field

from aiogram.types import InlineKeyboardMarkup


class Urgency(enum.Enum):
    NOW = "now"  # at once: the acting player's own message
    SOON = "soon"  # within soon_delay: the players the game now waits for
    LATER = "later"  # like SOON, at most every later_delay: players who only watch
    TABLE = "table"  # like SOON, at most every table_delay: a group's table message


@dataclass(frozen=True)
class DeliveryConfig:
    """When the delivery edits (the module docstring): the product's values come
    from the settings (``SOON_DELAY``, ``LATER_DELAY``, ``TABLE_DELAY``,
    ``FLOOD_HINT_AFTER``); the rest are its own."""

    soon_delay: float = 1.0
    """A SOON edit goes out within this many seconds."""
    later_delay: float = 2.0
    """A LATER edit: at most every this many seconds per message."""
    table_delay: float = 4.0
    """A TABLE edit: at most every this many seconds per message."""
    max_hold: float = 4.0
    """A due LATER / TABLE edit waits for the limiter's headroom this long at most."""
    held_after: float | None = None
    """A hand in the group held back this many seconds is told (``HeldBack``);
    None: not watched."""
    deferred_concurrency: int = 8
    """Deferred edits in flight at once (the rest stay pending, coalescing)."""
    parse_mode: str | None = "HTML"
    """Of every message sent and edited."""


@dataclass
class Content:
    """What an edit shows."""

    text: str
    markup: InlineKeyboardMarkup | None
    parse_mode: str | None
    version: str = ""  # the table version it renders ('': none); never shown after a newer


@dataclass
class Pending:
    """The newest content of a message that waits to go out."""

    content: Content
    seq: int
    created: float
    urgency: Urgency
    firing: bool = False
    not_before: float = float("-inf")  # held back for the limiter's headroom
    spaced: float = float("-inf")  # held back for its gap since ANY process's last edit
    gap: float | None = None  # its own gap since the message's last edit (None: its urgency's)


@dataclass
class Slot:
    """One message's delivery state."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    seq: int = 0  # edits asked for
    sent_seq: int = 0  # the newest edit handed to Telegram
    last_sent: float = float("-inf")
    pending: Pending | None = None
    latest: Content | None = None  # the content of edit ``seq`` (the newest asked)
    done_seq: int = 0  # the newest edit that went out (or was found not needed)
    waiters: list[tuple[int, asyncio.Future[bool]]] = field(default_factory=list)

    def settled(self, seq: int) -> asyncio.Future[bool]:
        """Resolved True once edit ``seq`` (or a newer one) of the message went
        out, False when it failed."""
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        if self.done_seq >= seq:
            future.set_result(True)
        else:
            self.waiters.append((seq, future))
        return future

    def finish(self, seq: int, ok: bool) -> None:
        """Edit ``seq`` (and so every older one) went out (``ok``) or failed."""
        if ok:
            self.done_seq = max(self.done_seq, seq)
        keep = []
        for wanted, future in self.waiters:
            if future.done():
                continue
            if wanted <= (self.done_seq if ok else seq):
                future.set_result(ok)
            else:
                keep.append((wanted, future))
        self.waiters = keep

    def due(self, config: DeliveryConfig) -> float:
        """When the pending edit should go out (it must be pending)."""
        assert self.pending is not None
        return max(self.gap_due(config), self.pending.not_before)

    def gap_due(self, config: DeliveryConfig) -> float:
        """When the pending edit (it must be pending) may go out by its coalescing
        gaps alone -- its urgency's delay, the message's gap since its last edit
        here and by any process --, the flood limiter's holds aside (#24)."""
        p = self.pending
        assert p is not None
        due = max(p.created + config.soon_delay, p.spaced)
        if p.gap is not None and p.urgency is not Urgency.SOON:
            due = max(due, self.last_sent + p.gap)
        elif p.urgency is Urgency.TABLE:
            due = max(due, self.last_sent + config.table_delay)
        elif p.urgency is Urgency.LATER:
            due = max(due, self.last_sent + config.later_delay)
        return due
