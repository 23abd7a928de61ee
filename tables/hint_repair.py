"""The repair of a timer shard's hints (#40).

A table's deadline is its ``d`` field; the hint in its timer shard only wakes
the shard's holder (:mod:`tables.timers`).  A hint can be lost: Redis
replicates asynchronously, so a hint the shard's master acknowledged but had
not replicated is gone once its replica is promoted; and a process that owed a
hint (its shard did not answer, the table's write went on,
:meth:`tables.store.Store.flush_hints`) may die before writing it.  Without its
hint no timer ever fires for that table: an idle game would be stuck for ever.

So a shard whose hints may be incomplete gets a *repair*, asked for in the
shard's slot (``P timers:<k>:repair``, :meth:`tables.keys.Keys.timer_repair`,
a token) by whoever learns of it: the shard's tick script when another master
serves the shard than at its last tick (a failover), the holder whose ticks of
the shard failed and went through again (an outage of its master), a process
that wrote hints it owed (others may have died owing theirs).  Every tick
returns the token, so the holder -- this one, or the next after a crash --
repairs: it walks the index of tables (:meth:`tables.index.TableIndex.scan`,
``ZSCAN``) :data:`REPAIR_BATCH` entries at a time, at most
:data:`REPAIR_BATCHES` batches a pass of the timer loop, and writes the hint of
every table of the shard that has a deadline from its ``d`` (``ZADD LT``: a
hint may be early, never late).  It walks twice: at once, and again
:data:`REPAIR_AGAIN_MS` later, once the failover has settled -- a write that
owed its hint during the outage, made after the first walk read its table, by
a process that died since, is found by the second.  Then the token goes,
unless another repair was asked for meanwhile (:meth:`tables.store.Store.repaired`).

Nothing of this costs an idle fleet a round trip: the token and the serving
master are read by the tick's own script.  Not repaired: hints without a turn
deadline (a rematch offer's end, a finished game's follow-ups, an arena's
wake), and a table missing from the index.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from tables.index import TableIndex
from tables.model import ServiceUnavailable
from tables.store import Store

REPAIR_BATCH = 500
"""Index entries read a batch (``ZSCAN``'s ``COUNT``): one round trip for them,
one for the deadlines of the shard's tables among them, one for their hints."""
REPAIR_BATCHES = 4
"""Batches at most a pass of the timer loop, per shard: a repair of a large
index never holds the loop up long."""
REPAIR_AGAIN_MS = 10_000
"""The second walk this long after the first ends (the service clock): hints
owed by live processes are written within a second of their shard answering
again (:data:`tables.store.OWED_RETRY_S`); what is left then is a dead one's."""

log = logging.getLogger(__name__)


@dataclass
class Repair:
    """A repair of one shard under way: its token, where the walk is, the
    walks done, not before when the next goes on (ms)."""

    token: str
    cursor: int = 0
    walks: int = 0
    not_before: int = 0
    hinted: int = 0  # hints written by this walk
    failing: bool = False  # a batch failed (logged once)


class HintRepair:
    """The repairs of the timer shards this process holds."""

    def __init__(self, store: Store, index: TableIndex, now_ms: Callable[[], int]) -> None:
        self.store = store
        self.index = index
        self.keys = store.keys
        self.now_ms = now_ms
        self.owed: dict[int, Repair] = {}

    def asked(self, shard: int, token: str) -> None:
        """The tick of held ``shard`` read a repair's ``token``: repair it,
        unless this repair is under way."""
        r = self.owed.get(shard)
        if token and (r is None or r.token != token):
            log.info("timer shard %d: its hints may be incomplete, repairing (%s)", shard, token)
            self.owed[shard] = Repair(token)

    def dropped(self, shard: int) -> None:
        """The shard is not held any more: its next holder repairs it."""
        self.owed.pop(shard, None)

    async def step(self, held: set[int]) -> int:
        """The next batches of each repair of a held shard (at most
        :data:`REPAIR_BATCHES` each); how many hints they wrote.  A batch that
        fails is tried again at the next step (its walk stays where it was)."""
        written = 0
        for shard in sorted(self.owed):
            r = self.owed[shard]
            if shard not in held:
                del self.owed[shard]
                continue
            if self.now_ms() < r.not_before:
                continue
            for _batch in range(REPAIR_BATCHES):
                try:
                    n, done = await self._batch(shard, r)
                    written += n
                    if done:
                        await self._walked(shard, r)
                        break
                except ServiceUnavailable as e:  # the next step goes on from there
                    if not r.failing:
                        log.warning("timer shard %d: repair paused: %s", shard, e)
                    r.failing = True
                    break
        return written

    async def _batch(self, shard: int, r: Repair) -> tuple[int, bool]:
        """One batch: the hints written, and whether the walk is done."""
        cursor, ids = await self.index.scan(r.cursor, REPAIR_BATCH)
        mine = [tid for tid in ids if self.keys.shard_of(tid) == shard]
        hints = await self.index.deadlines(mine)
        await self.store.rehint(shard, hints)
        r.cursor, r.failing = cursor, False
        r.hinted += len(hints)
        return len(hints), cursor == 0

    async def _walked(self, shard: int, r: Repair) -> None:
        if r.walks == 1:
            await self.store.repaired(shard, r.token)  # unless asked for again meanwhile
            del self.owed[shard]
        else:
            r.not_before = self.now_ms() + REPAIR_AGAIN_MS
        r.walks += 1
        log.info("timer shard %d: repair walk %d: %d hint(s) written", shard, r.walks, r.hinted)
        r.hinted = 0
