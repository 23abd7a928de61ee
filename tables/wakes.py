"""What this process's timer loop knows of the timer shards it holds (#39): the
earliest hint of each, so that the loop sleeps until then instead of looking
at Redis every tick (:meth:`tables.timers.Timers.run_timers`).

A hint written by this process (a move's deadline, a timer released, an
arena's wake) is told here in memory (:meth:`TimerWakes.hinted`); one for a
shard another process holds is published on the ``P timers:wake`` channel
(:data:`tables.keys.Keys.timer_wake`, no keyspace notifications), and that
process's loop reads it (:func:`parse`).  The other messages on the channel: a
shard was handed back or a scheduler started (``free``) -- the loops count
the live schedulers and take their share at once rather than at their next
round.  A message lost (no subscription during an outage) only makes a timer
late until the holder's next round (``shard_lease / 3``); so does a hint
written by a process that has no loop (an admin API)."""

from __future__ import annotations

from dataclasses import dataclass

NONE = 2**62
"""The earliest hint of a shard that has none."""
LOOK = 0
"""The earliest hint of a shard not known yet: look at once."""


@dataclass(frozen=True)
class Wake:
    """A message of the ``P timers:wake`` channel: a hint at ``at`` (ms) in
    ``shard``, or (``shard`` None) a shard freed or a scheduler started."""

    shard: int | None
    at: int = 0


FREE = "free"


def hint_message(shard: int, at: int) -> str:
    return f"h {shard} {at}"


def parse(data: object) -> Wake | None:
    raw = data.decode() if isinstance(data, bytes) else str(data)
    if raw == FREE:
        return Wake(None)
    parts = raw.split()
    if len(parts) == 3 and parts[0] == "h":
        try:
            return Wake(int(parts[1]), int(parts[2]))
        except ValueError:
            return None
    return None


class TimerWakes:
    """The held shards and the earliest hint known of each (ms: :data:`NONE`
    when it has none, :data:`LOOK` when unknown).  Shared by the store (which
    tells it the hints it writes) and the timers (which hold the shards)."""

    def __init__(self) -> None:
        self.earliest: dict[int, int] = {}
        # the earliest hint told per held shard since its last look was sent,
        # and the one told before that: a look may reach Redis after a hint
        # told before it was sent, but before that hint's write
        self._noted: dict[int, int] = {}
        self._before: dict[int, int] = {}

    def held(self) -> set[int]:
        return set(self.earliest)

    def hinted(self, shard: int, at: int) -> bool:
        """A hint at ``at`` (ms) was written into ``shard``: True when this
        process holds the shard (its loop looks by then); False when the
        holder is another process (or none), which must be told."""
        if shard not in self.earliest:
            return False
        self.earliest[shard] = min(self.earliest[shard], at)
        self._noted[shard] = min(self._noted.get(shard, NONE), at)
        return True

    def looking(self, shard: int) -> None:
        """A look at ``shard`` (its earliest hint read) is about to be sent."""
        self._before[shard] = self._noted.pop(shard, NONE)

    def looked(self, shard: int, earliest: int | None) -> None:
        """The shard is held; its earliest hint is ``earliest`` (None: none),
        as read by the look -- or a hint told since the look before, if
        earlier (at worst one look more, for a hint already handled)."""
        at = NONE if earliest is None else earliest
        told = min(self._before.pop(shard, NONE), self._noted.pop(shard, NONE))
        self.earliest[shard] = min(at, told)

    def lost(self, shard: int) -> None:
        """The shard is not held (any more)."""
        self.earliest.pop(shard, None)
        self._noted.pop(shard, None)
        self._before.pop(shard, None)

    def due(self, now: int) -> list[int]:
        """The held shards whose earliest hint is due by ``now`` (ms), or unknown."""
        return sorted(s for s, at in self.earliest.items() if at <= now)

    def unknown(self, shard: int) -> None:
        """The shard's look failed: look again at the next pass."""
        if shard in self.earliest:
            self.earliest[shard] = LOOK


__all__ = ["FREE", "LOOK", "NONE", "TimerWakes", "Wake", "hint_message", "parse"]
