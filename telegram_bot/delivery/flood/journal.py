"""This process's own entries in the flood windows (#28), in memory: every entry
it counted in Redis or in its fallback while Redis was down.  The fallback
counts against them (its windows start with what was sent just before, not
empty), and after the outage they are charged to the shared windows
(:meth:`telegram_bot.delivery.flood.limiter.FloodLimiter.charge`), so what was
counted meanwhile or lost by a restarted Redis counts again."""

from __future__ import annotations

import itertools
import secrets
from bisect import bisect_left, insort
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.clock import Clock
from telegram_bot.delivery.flood.rates import Headroom, OverallEntries, Stamp, Verdict, Window

SWEEP_EVERY = 1000
"""Entries recorded between two sweeps of keys whose entries all left their window."""


@dataclass
class Journal:
    """Per window key: its seconds and its entries ``(score, name)``, sorted;
    ``name()``: a call's name, unique in the fleet (never a hold's ``h:``)."""

    prefix: str = field(default_factory=lambda: secrets.token_hex(5))
    entries: dict[str, list[tuple[float, str]]] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    _names: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _since_sweep: int = 0

    def name(self) -> str:
        return f"{self.prefix}{next(self._names):x}"

    def count(self, key: str, seconds: float, now: float) -> int:
        """Entries of ``key`` that count at ``now`` (older ones go)."""
        found = self.entries.get(key)
        if not found:
            return 0
        cut = bisect_left(found, (now - seconds, "\uffff"))  # scores <= now - seconds left
        if cut:
            del found[:cut]
        return len(found)

    def wait(
        self,
        key: str,
        limit: int,
        seconds: float,
        now: float,
        need: int,
        since: float = float("-inf"),
    ) -> float:
        """Seconds until ``need`` more entries fit under ``limit`` (0: now);
        ``since``: only the entries counted after it are looked at."""
        n = self.count(key, seconds, now)
        found = self.entries.get(key, [])
        older = bisect_left(found, (since, "\uffff")) if n else 0
        over = n - older + need - limit
        if over <= 0:
            return 0.0
        return max(found[older + over - 1][0] + seconds - now, 1e-6)

    def record(self, key: str, seconds: float, now: float, name: str, n: int = 1) -> None:
        """``n`` entries counted at ``now``, named ``<name>:<i>`` as in Redis."""
        found = self.entries.setdefault(key, [])
        self.seconds[key] = seconds
        for j in range(1, n + 1):
            insort(found, (now, f"{name}:{j}"))
        self._since_sweep += n
        if self._since_sweep >= SWEEP_EVERY:
            self.sweep(now)

    def restamp(self, key: str, seconds: float, names: Sequence[str], now: float) -> None:
        """Entries ``names`` of ``key`` count from ``now`` (Telegram answered
        their call: :class:`telegram_bot.delivery.flood.rates.Stamp`); never back,
        and one given back meanwhile stays gone."""
        found = self.entries.get(key)
        if not found:
            return
        wanted = set(names)
        moved = [(at, n) for at, n in found if n in wanted and at < now]
        if not moved:
            return
        found[:] = [entry for entry in found if entry not in moved]
        for _at, n in moved:
            insort(found, (now, n))
        self.seconds[key] = seconds

    def discard(self, key: str, names: Sequence[str]) -> None:
        """Entries given back by name (a lease's unused ones)."""
        found = self.entries.get(key)
        if found and names:
            gone = set(names)
            found[:] = [entry for entry in found if entry[1] not in gone]

    def refund(self, key: str, paid: float) -> None:
        """An entry given back: the newest counted at or before ``paid``."""
        found = self.entries.get(key)
        if found:
            end = bisect_left(found, (paid, "\uffff"))
            del found[max(0, end - 1) : end]

    def sweep(self, now: float) -> None:
        """Forget the keys none of whose entries counts any more."""
        self._since_sweep = 0
        for key in list(self.entries):
            if not self.count(key, self.seconds.get(key, 0.0), now):
                del self.entries[key]
                self.seconds.pop(key, None)

    def live(self, now: float) -> dict[str, list[tuple[float, str]]]:
        """Every key's entries that still count at ``now``."""
        self.sweep(now)
        return {key: list(found) for key, found in self.entries.items()}


class LocalWindows:
    """Sliding windows over a :class:`Journal` (the limiter's answers while Redis
    is unreachable, #28), as the scripts count them; ``buckets`` as
    :meth:`telegram_bot.delivery.flood.limiter.FloodLimiter.buckets`."""

    def __init__(self, journal: Journal, clock: Clock) -> None:
        self.journal = journal
        self.clock = clock

    def take(self, buckets: list[tuple[str, Window]]) -> Verdict:
        now = float(self.clock())
        wait, short = 0.0, -1
        for i, (key, window) in enumerate(buckets):
            w = self.journal.wait(key, window.limit, window.seconds, now, 1)
            if w > wait:
                wait, short = w, i
        if wait > 0:
            return Verdict(wait, short == 0)
        name = self.journal.name()
        for key, window in buckets:
            self.journal.record(key, window.seconds, now, name)
        chats = tuple((key, float(window.seconds)) for key, window in buckets[1:])
        if not chats:
            return Verdict(0.0, False, None)
        key, window = buckets[0]  # the overall window's entries move on the answer too
        overall = OverallEntries(key, float(window.seconds), (f"{name}:1",), now)
        return Verdict(0.0, False, Stamp(chats, name, overall=overall))

    def stamp(self, stamp: Stamp) -> None:
        """Telegram answered: the call's entries count from now (:class:`Stamp`)."""
        now = float(self.clock())
        for key, seconds in stamp.windows:
            self.journal.restamp(key, seconds, stamp.names, now)
        if stamp.overall is not None:  # cheap here: always (#37)
            o = stamp.overall
            self.journal.restamp(o.key, o.seconds, o.names, now)

    def refund(
        self, buckets: list[tuple[str, Window]], held: float, now: float | None = None
    ) -> None:
        """The newest entry counted ``held`` seconds ago goes, in each of
        ``buckets`` that still counts it."""
        now = float(self.clock()) if now is None else now
        paid = now - held + 1e-6
        for key, window in buckets:
            if paid > now - window.seconds:
                self.journal.refund(key, paid)

    def headroom(self, buckets: list[tuple[str, Window]]) -> Headroom:
        now = float(self.clock())
        first, rest = 0.0, 0.0
        for i, (key, window) in enumerate(buckets):
            w = self.journal.wait(key, window.limit, window.seconds, now, 1 + window.reserve)
            if i == 0:
                first = w
            else:
                rest = max(rest, w)
        return Headroom(first, rest)
