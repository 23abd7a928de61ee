"""The values of the flood limiter (:mod:`telegram_bot.delivery.flood.limiter`): its windows
and configuration, and what its calls answer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple


@dataclass(frozen=True)
class Window:
    """A sliding window: at most ``limit`` messages in any ``seconds`` (#28) --
    Telegram counts windows, not buckets, and a bucket's burst lets more through
    in its first second or minute.  ``seconds`` is Telegram's window plus a
    margin: a message is counted when its tokens are taken and reaches Telegram
    a moment later (a leased or prepaid token waits up to ``lease_ttl`` /
    ``prepaid_ttl``, then the HTTP call), so any window of Telegram's length at
    its end holds only messages counted within ``seconds``.

    ``reserve``: entries that deferrable messages leave free for urgent ones
    (see :meth:`FloodLimiter.headroom`)."""

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
    """Windows of the outgoing flood limiter (keys: under the service's prefix).

    Telegram's: 30 in any second per bot, 20 in any minute per group, about 1 a
    second per chat (the fake Bot API: 3 in any 3 s); ours count each in a
    longer window -- overall by half a second, a chat's and a group's by one
    (a loaded event loop sends a counted message late) -- so the worst case of
    the whole fleet stays inside Telegram's (#28).  A message reaches Telegram
    at most ``lease_ttl`` + ``prepaid_ttl`` (0.4 s) after its overall entry,
    plus its HTTP call: the overall half second leaves 0.1 s for the call
    (the two were 0.25 s: none), a chat's or group's second 0.8 s."""

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
    # A call not answered this many seconds after its take (its process was
    # killed on the way?) counts as taken that long before each later take in
    # its chat, until ``edit_lease`` after its take: it may still reach Telegram
    # at any moment (#37).  At most the chat and group windows' margin (1 s).
    answer_margin: float = 1.0
    # A call answered this many seconds after its overall entry was counted has
    # that entry moved to its answer (one more round trip, to the fleet-wide
    # window: late calls only) -- a loaded process sends a counted message late,
    # and a burst of such late calls reached Telegram 30 in half a second (#37,
    # the soak's 429s).  Well within the overall window's margin (0.5 s): the
    # move lands before the entry would have left the window.
    overall_stamp_after: float = 0.25
    # The same for a call's entries in its chat's windows (#39: moving them
    # cost a command a call): answered sooner, it reached Telegram well within
    # those windows' margin (1 s) of its take, and its entries stay where they
    # were counted; only its record among the chat's unanswered calls goes.
    # Telegram's time, like the windows: never scaled (a scaled clock's HTTP
    # call takes more of it), at most half the margin.
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
    """Where one call's entries are in its chat's windows (``windows``: key and
    seconds; its entry named ``<name>:1``), so that they can be
    moved to the moment Telegram answered the call
    (:meth:`telegram_bot.delivery.flood.limiter.FloodLimiter.stamp`).

    An entry is counted when its tokens are taken, but Telegram counts the
    message when it arrives -- after a wait for the chat's turn, a loaded event
    loop, the network.  Counted from the take alone, a message that spent more
    than the window's margin on the way left the window early: the next ones
    went out while Telegram still counted it (a 429, #28).  Telegram counted it
    no later than it answered, so an entry moved to then covers it.  A call
    never answered (its process was killed on the way) counts as arriving now
    while it may still arrive (``unanswered``; #37).  The same holds for the
    fleet-wide window, whose entries are leased in batches: those of a call
    answered late (``overall``) move to its answer as well."""

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
    """An attempt to take tokens: ``wait`` -3 (BUSY: another call's edit of the
    message is in flight), -2 (STALE: the message shows a newer
    version), -1 (NOOP: the edit changes nothing), 0 (taken) or the seconds to wait (nothing taken); ``overall``: the bucket
    that is short is the overall one (every chat of every process waits on it).
    ``stamp``: where the entries taken are (None: none in a chat's windows).
    ``generation``: the group's learned budget the windows were sized with
    (:attr:`telegram_bot.state.budgets.Budget.generation`; None: none, or not known) --
    what a 429 of the call passes back, so one burst cuts the budget once (#38)."""

    wait: float
    overall: bool = False
    stamp: Stamp | None = None
    generation: int | None = None


class Headroom(NamedTuple):
    """Seconds a deferrable message should hold back: for the overall bucket's
    reserve and for its chat's (and group's) reserve (``wait``: the longer);
    and, asked for one message, until its last edit by any process is its
    coalescing gap old (``message``)."""

    overall: float
    chat: float
    message: float = 0.0

    @property
    def wait(self) -> float:
        return max(self.overall, self.chat)
