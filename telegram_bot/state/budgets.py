"""Outgoing budgets learned per group from Telegram's own refusals (#24): the
bot's own state (#39: no longer the table service's, which knows nothing of
Telegram), kept through the service's key-value API (``svc.kv``).

A chat platform limits how many messages a bot may write to one group in a
minute (Telegram: "about 20", not documented further), and does not say
whether a message shown to one member alone -- an *ephemeral* one -- counts
against it.  An adapter starts from the documented figure and an assumption
(a setting), and every refusal (Telegram's 429 with ``retry_after``) teaches it
the group's real budget, by AIMD -- as TCP learns a path's capacity:

* **multiplicative decrease**: a refused write halves the budget it counted in
  (``beta``), never below ``floor``;
* **additive increase**: every ``step`` seconds without a refusal gives
  ``step_public`` (``step_ephemeral``) messages a minute back, up to the
  documented ceiling -- computed from the time of that budget's own last
  decrease when read, so no write is needed while nothing is refused (and a
  change of the other budget, or the switch to *counted*, leaves its growth
  alone).

Two budgets per group, learned separately:

* ``public`` -- messages all members see (and, while ephemerals are *counted*,
  ephemeral ones too: one shared minute);
* ``ephemeral`` -- while ephemerals are *not counted* against the group, their
  own minute.  A refusal tells which reading holds: a refusal that one shared
  minute explains -- a public write refused while ephemerals went out in the
  same minute, an ephemeral one refused while the group's public and ephemeral
  writes of the minute together reached the public budget -- or an ephemeral
  budget cut below the public one, switches the group to *counted* (the
  documented-safe reading) for as long as the record lives.
  The other way, nothing is learned: no write is ever sent beyond a budget
  just to see whether it is refused.

One burst, one lesson (#38): the writes in flight together when the platform
refuses them all draw one 429 each, and every one of them says the same thing
-- the budget they were admitted under was too high.  So a refusal carries the
*generation* of the record its write was admitted under (``admitted``: the
:attr:`Budget.generation` the flood limiter sized its windows with), and the
script that changes the record compares it in the same step:

* admitted under the record's generation (or a later one: the record
  expired meanwhile) -- a new reading: the cut (or the switch to *counted*)
  is made and the generation moves on;
* admitted under an older generation -- the burst (or a later one) already
  taught what this refusal says: it is counted (``r_pub``/``r_eph``) and
  changes nothing else -- no cut, no switch, no longer life for the record.

A refusal whose generation is unknown (a write sent without a token, or one
admitted while Redis was down) counts as part of the burst while it arrives
within the last change's ``retry_after`` (``burst``: the seconds the platform
told that refusal to wait, so no write admitted after the cut can have drawn
it); later, or without one, it is a new reading.  Several processes agree:
the comparison and the write are one script on the group's hash.  A real
lower limit still teaches: a write admitted under the cut budget and refused
again cuts again.  So one burst costs one halving (20 -> 10, back to 20 in ten
quiet minutes), where every concurrent 429 used to halve again (20 -> 10 ->
5 -> 4, sixteen minutes).

*counted*, once learned, stays while the record lives -- ``ttl`` after its
last change (a week), however far the budgets grew back meanwhile: it is a
reading of how the platform counts, not of a capacity that quiet minutes give
back; it is the documented-safe side; and learning it back would mean sending
ephemerals beyond the shared minute to see whether they are refused.  Only a
change sets it (a refusal one shared minute explains, or an ephemeral budget
cut below the public one): no longer the second 429 of one burst, which
halved the ephemeral budget a second time (60 -> 30 -> 15, below 20).

Shared fleet-wide: one hash per group, ``P budget:{c:<chat>}`` (fields
``pub``/``pub_at``, ``eph``/``eph_at``: the budget at its last decrease and
when; ``counted`` 0/1; ``gen``: the generation, one more at every change;
``quiet``: until when (ms) a refusal of unknown generation belongs to the last
change's burst; ``r_pub``/``r_eph``: refusals so far; ``why``: the last change
in words), changed only by one atomic script; read through a short in-process
cache by the flood limiter.  The index ``P budgets`` (zset chat -> last change,
ms) lists the groups with a record, for operators (:meth:`Budgets.all`).  A
record lives ``ttl`` seconds after its last change: a quiet group goes back to
the documented figures.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, replace
from typing import Any

from engine.clock import Clock
from tables import KeyValueStore
from telegram_bot.state.keys import BudgetKeys

PUBLIC = "pub"
EPHEMERAL = "eph"

# KEYS[1] the group's hash.  ARGV now ms, kind ('pub' | 'eph'), ceiling public,
# ceiling ephemeral, counted at the start (0/1), beta, floor, step ms, step
# public, step ephemeral, one shared minute explains the refusal (0/1), ttl ms,
# the generation the write was admitted under ('': unknown), its burst ms
# (retry_after).  Applies one refusal (see the module docstring); returns '1',
# or '0' when it was of a burst already learned from (only counted).
REFUSED_LUA = r"""
local now, kind = tonumber(ARGV[1]), ARGV[2]
local cpub, ceph = tonumber(ARGV[3]), tonumber(ARGV[4])
local beta, floor_, step = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local spub, seph = tonumber(ARGV[9]), tonumber(ARGV[10])
local h = {}
local raw = redis.call('HGETALL', KEYS[1])
for i = 1, #raw, 2 do h[raw[i]] = raw[i + 1] end
local gen, admitted = tonumber(h.gen or '0'), tonumber(ARGV[13])
local seen
if admitted then
  seen = admitted < gen
else
  seen = h.quiet ~= nil and now < tonumber(h.quiet)
end
if seen then  -- the burst already taught this: counted, nothing else changes
  redis.call('HINCRBY', KEYS[1], 'r_' .. kind, 1)
  return '0'
end
local function eff(v, at, ceil, inc)
  if not v then return ceil end
  local up = math.floor((now - tonumber(at)) / step) * inc
  return math.min(ceil, tonumber(v) + up)
end
local pub = eff(h.pub, h.pub_at, cpub, spub)
local eph = eff(h.eph, h.eph_at, ceph, seph)
local counted = h.counted or ARGV[5]
local function cut(v) return math.max(floor_, math.floor(v * beta)) end
local why, cut_pub, cut_eph
if kind == 'pub' then
  redis.call('HINCRBY', KEYS[1], 'r_pub', 1)
  if counted == '0' and ARGV[11] == '1' then
    counted = '1'
    why = 'a public write refused while ephemerals went out: ephemerals count'
  else
    pub, cut_pub = cut(pub), true
    why = 'a public write refused'
  end
else
  redis.call('HINCRBY', KEYS[1], 'r_eph', 1)
  if counted == '1' then
    pub, cut_pub = cut(pub), true
    why = 'an ephemeral write refused (counted with the public ones)'
  elseif ARGV[11] == '1' then
    counted = '1'
    why = 'an ephemeral write refused when the minute held the public budget: ephemerals count'
  else
    eph, cut_eph = cut(eph), true
    why = 'an ephemeral write refused'
    if eph < pub then
      counted = '1'
      why = why .. ': below the public budget, so ephemerals count'
    end
  end
end
-- a budget not cut keeps its last cut and the time of it: its growth goes on
if cut_pub then redis.call('HSET', KEYS[1], 'pub', pub, 'pub_at', now) end
if cut_eph then redis.call('HSET', KEYS[1], 'eph', eph, 'eph_at', now) end
redis.call('HSET', KEYS[1], 'counted', counted, 'why', why, 'at', now,
  'gen', math.max(gen, admitted or 0) + 1, 'quiet', now + tonumber(ARGV[14]))
redis.call('PEXPIRE', KEYS[1], ARGV[12])
return '1'
"""


@dataclass(frozen=True)
class BudgetRules:
    """The documented ceilings and how fast a budget moves.  ``public``: a
    group's messages a minute (Telegram: 20); ``ephemeral``: ephemeral ones a
    minute while they are not counted (an assumption: one a second per group);
    ``counted``: the starting assumption for ephemerals (the setting)."""

    public: int = 20
    ephemeral: int = 60
    counted: bool = True
    beta: float = 0.5
    floor: int = 4
    step: float = 60.0
    step_public: int = 1
    step_ephemeral: int = 5
    ttl: float = 7 * 24 * 3600.0

    def __post_init__(self) -> None:
        if not (1 <= self.floor <= min(self.public, self.ephemeral)):
            raise ValueError("1 <= floor <= both ceilings needed")
        if not 0 < self.beta < 1 or self.step <= 0:
            raise ValueError("0 < beta < 1 and step > 0 needed")


@dataclass(frozen=True)
class Budget:
    """A group's budgets now: messages a minute, public and ephemeral (while not
    counted), whether ephemerals count against the public minute; the
    refusals so far and the last change (epoch ms, its reason); ``learned``:
    False while the group has no record (the documented figures);
    ``generation``: the record's, one more at every change (0: no record) --
    a write admitted under it passes it back with its refusal
    (:meth:`Budgets.refused`); ``repeat``: as :meth:`Budgets.refused` answers,
    that refusal was one of a burst already learned from (nothing changed)."""

    chat: int
    public: int
    ephemeral: int
    counted: bool
    refused_public: int = 0
    refused_ephemeral: int = 0
    changed_at: int = 0
    why: str = ""
    learned: bool = False
    generation: int = 0
    repeat: bool = False

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _text(raw: Any) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


class Budgets:
    """The learned budgets (see the module docstring)."""

    def __init__(
        self, kv: KeyValueStore, rules: BudgetRules | None = None, *, clock: Clock = time.time
    ) -> None:
        self.kv = kv
        self.rules = rules or BudgetRules()
        self.clock = clock
        self.keys = BudgetKeys(kv)
        self.index = self.keys.index()
        self._refused = kv.script(REFUSED_LUA)

    def key(self, chat: int) -> str:
        return self.keys.group(chat)

    def default(self, chat: int) -> Budget:
        r = self.rules
        return Budget(chat, r.public, r.ephemeral, r.counted)

    def _effective(self, value: str | None, at: str | None, ceiling: int, step: int) -> int:
        if value is None or at is None:
            return ceiling
        now = float(self.clock()) * 1000
        up = math.floor(max(0.0, now - float(at)) / (self.rules.step * 1000)) * step
        return min(ceiling, int(float(value)) + up)

    def _budget(self, chat: int, h: dict[str, str]) -> Budget:
        if not h:
            return self.default(chat)
        r = self.rules
        return Budget(
            chat,
            self._effective(h.get("pub"), h.get("pub_at"), r.public, r.step_public),
            self._effective(h.get("eph"), h.get("eph_at"), r.ephemeral, r.step_ephemeral),
            h.get("counted", "1" if r.counted else "0") == "1",
            int(h.get("r_pub", 0)),
            int(h.get("r_eph", 0)),
            int(float(h.get("at", 0))),
            h.get("why", ""),
            True,
            int(h.get("gen", 0)),
        )

    async def get(self, chat: int) -> Budget:
        """The group's budgets now (one round trip)."""
        return self._budget(chat, await self.kv.hgetall(self.key(chat)))

    async def refused(
        self,
        chat: int,
        kind: str,
        *,
        shared: bool = False,
        admitted: int | None = None,
        burst: float = 0.0,
    ) -> Budget:
        """A write of ``kind`` (:data:`PUBLIC` or :data:`EPHEMERAL`) to ``chat`` was
        refused: the budget it counted in is cut (one atomic script, then the
        index).  ``shared``: one minute shared by public and ephemeral writes
        explains the refusal (see the module docstring): while ephemerals are
        not counted, they are from now on.  ``admitted``: the
        :attr:`Budget.generation` the write was admitted under (None: unknown);
        ``burst``: the refusal's ``retry_after`` -- a refusal of a burst already
        learned from changes nothing but the count (the module docstring;
        ``repeat`` in the answer)."""
        if kind not in (PUBLIC, EPHEMERAL):
            raise ValueError(f"kind {kind!r}: 'pub' or 'eph'")
        if admitted is not None and admitted < 0:
            raise ValueError(f"admitted {admitted}: a generation is >= 0")
        r = self.rules
        now = math.floor(float(self.clock()) * 1000)
        args: list[str | int | float] = [
            now,
            kind,
            r.public,
            r.ephemeral,
            1 if r.counted else 0,
            r.beta,
            r.floor,
            math.ceil(r.step * 1000),
            r.step_public,
            r.step_ephemeral,
            1 if shared else 0,
            math.ceil(r.ttl * 1000),
            "" if admitted is None else admitted,
            math.ceil(max(0.0, burst) * 1000),
        ]
        changed = _text(await self._refused([self.key(chat)], args)) == "1"
        if not changed:
            return replace(await self.get(chat), repeat=True)
        index = self.index
        await self.kv.zadd(index, {str(chat): now})
        return await self.get(chat)

    async def all(self, limit: int = 100) -> list[Budget]:
        """The groups with a learned record, the most recently changed first
        (records that expired are dropped from the index)."""
        index = self.index
        chats = [int(c) for c in await self.kv.zrevrange(index, 0, max(0, limit - 1))]
        out, gone = [], []
        for chat in chats:
            h = await self.kv.hgetall(self.key(chat))
            if h:
                out.append(self._budget(chat, h))
            else:
                gone.append(str(chat))
        if gone:
            await self.kv.zrem(index, *gone)
        return out


__all__ = ["EPHEMERAL", "PUBLIC", "Budget", "BudgetRules", "Budgets"]
