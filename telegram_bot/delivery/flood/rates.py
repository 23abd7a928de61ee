"""The values of the flood limiter (:mod:`telegram_bot.delivery.flood.limiter`): its windows
and configuration, and what its calls answer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple


@dataclass(frozen=True)
class Window:
    """At most ``limit`` messages in any ``seconds`` (#28: Telegram counts
    windows, not buckets).  ``seconds`` is Telegram's window plus a margin for
    the moment between a message's take and its arrival; ``reserve``: entries
    deferrable messages leave free for urgent ones."""

    limit: int
    seconds: float
    reserve: int = 0

    def __post_init__(self) -> None:
        if self.limit < 1 or self.seconds <= 0:
            raise ValueError(f"bad window {self!r}: limit >= 1 and seconds > 0 needed")
        if not 0 <= self.reserve <= self.limit - 1:
            raise ValueError(f"bad window {self!r}: 0 <= reserve <= limit - 1 needed")

    @property
    def ttl_ms(self) -> int:
        """How long an entry counts (then the key may go)."""
        return math.ceil(self.seconds * 1000) + 1000


@dataclass(frozen=True)
class FloodConfig:
    """Windows of the flood limiter.  Telegram's: 30 in any second per bot, 20
    in any minute per group, about 1 a second per chat (the fake: 3 in any
    3 s); ours are longer -- overall by half a second, a chat's and a group's
    by one -- so the whole fleet stays inside Telegram's (#28): a message
    reaches Telegram at most ``lease_ttl`` + ``prepaid_ttl`` (0.4 s) after its
    overall entry, plus its HTTP call."""

    overall: Window = field(default_factory=lambda: Window(30, 1.5, reserve=8))
    per_chat: Window = field(default_factory=lambda: Window(3, 4.0, reserve=1))
    per_group: Window = field(default_factory=lambda: Window(20, 61.0, reserve=4))
    digest_ttl: float = 3600.0  # seconds a message's last content is remembered (refreshed)
    lease: int = 5  # overall entries a process takes at a time
    lease_ttl: float = 0.2  # seconds a process may keep unused leased entries
    edit_ttl: float = (
        10.0  # seconds a record written by a gap's claim alone lives (>= the longest gap)
    )
    edit_lease: float = 5.0  # seconds an edit in flight may keep its message (a crash: it lapses)
    # A call not answered this many seconds after its take (its process killed
    # on the way?) counts as arriving now in its chat, until ``edit_lease``
    # after its take (#37).  At most the chat windows' margin (1 s).
    answer_margin: float = 1.0
    # A call answered this late has its overall entry moved to its answer
    # (#37: late calls reached Telegram 30 in half a second); within the
    # overall window's margin (0.5 s).
    overall_stamp_after: float = 0.25
    # The same for its chat's windows (#39: moving them cost a command a call);
    # never scaled (a scaled clock's HTTP call takes more of it), at most half
    # the margin.
    chat_stamp_after: float = 0.25
    lease_poll: float = 0.05  # seconds between looks at another call's edit lease
    prepaid_ttl: float = 0.2  # seconds prepaid tokens still count (older: taken again)
    budget_refresh: float = 1.0  # seconds a group's learned budget is reused in a process (#24)

    def __post_init__(self) -> None:
        if not 0 <= self.chat_stamp_after <= self.answer_margin / 2:
            raise ValueError("chat_stamp_after must be within half the windows' margin")

    @classmethod
    def with_overall(cls, limit: int, seconds: float) -> FloodConfig:
        """The default windows with the fleet-wide one set (``FLOOD_OVERALL_LIMIT``
        messages in any ``FLOOD_OVERALL_WINDOW`` seconds): its reserve for urgent
        messages as in the default, within the limit."""
        default = cls()
        reserve = min(default.overall.reserve, limit - 1)
        return replace(default, overall=Window(limit, seconds, reserve=reserve))


NOOP = -1.0  # admit_edit: the message already shows this content
STALE = -2.0  # admit_edit: the message shows a newer table version already
BUSY = -3.0  # admit_edit: another call's edit of the message is in flight (its lease)


@dataclass(frozen=True)
class OverallEntries:
    """A call's entries in the fleet-wide window: its ``key`` and ``seconds``,
    the entries' ``names`` ('<lease>:<j>') and when they were counted (``at``)."""

    key: str
    seconds: float
    names: tuple[str, ...]
    at: float


@dataclass(frozen=True)
class Stamp:
    """Where one call's entries are (``windows``: key and seconds; its entry
    ``<name>:1``), to move them to when Telegram answered.  An entry is
    counted at the take, but Telegram counts the message when it arrives: one
    that spent more than the margin on the way left the window early (a 429,
    #28).  A call never answered counts as arriving now while it may still
    arrive (``unanswered``, #37); a late call's ``overall`` entries move too."""

    windows: tuple[tuple[str, float], ...]
    name: str
    unanswered: str = ""  # the chat's unanswered calls, which the call leaves ("": none)
    at: float | None = None  # when its entries were counted (None: not known)
    # its overall entries: moved too when the answer came late (``overall_stamp_after``)
    overall: OverallEntries | None = None

    @property
    def names(self) -> tuple[str]:
        """Its entry's name in each of its windows."""
        return (f"{self.name}:1",)


class Verdict(NamedTuple):
    """An attempt to take a token: ``wait`` :data:`BUSY`, :data:`STALE`,
    :data:`NOOP`, 0 (taken) or the seconds to wait; ``overall``: the overall
    window is the short one; ``stamp``: the entries taken; ``generation``: the
    group's budget the windows were sized with, which a 429 passes back (#38)."""

    wait: float
    overall: bool = False
    stamp: Stamp | None = None
    generation: int | None = None


class Headroom(NamedTuple):
    """Seconds a deferrable message holds back for the overall and its chat's
    reserves (``wait``: the longer), and until its message's last edit is its
    gap old (``message``)."""

    overall: float
    chat: float
    message: float = 0.0

    @property
    def wait(self) -> float:
        return max(self.overall, self.chat)
