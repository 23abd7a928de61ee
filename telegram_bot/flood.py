"""Telegram's flood limits as token buckets in Redis, shared by every bot process.

Telegram allows about one message a second in a chat (short bursts allowed),
20 a minute in a group and about 30 a second overall; edits count like sends.
An :meth:`FloodLimiter.acquire` is ONE round trip: a Lua script refills every
bucket the message needs (overall, its chat, and for a group its per-minute
bucket) and either takes one token from each of them or -- when any is short
-- takes nothing and answers how long to wait.  Never a partial take.

Urgent first: each bucket keeps a ``reserve`` that deferrable messages (the
coalesced updates of players who did not just act) leave alone --
:meth:`FloodLimiter.headroom` tells them how long to hold back -- so a press's own
answer finds a token even when the bot is busy, and the deferred updates coalesce
while they wait.

The time comes from Python (``clock``, default :func:`time.time`) and is passed
into the script, so tests drive the buckets with a fake clock and processes on
one host agree (Redis ``TIME`` is never read).

The same script can first compare what a message shows -- two digests, of its
text and of its keyboard, stored as ``<text>:<keyboard>`` -- with an edit
(:meth:`FloodLimiter.acquire_edit`; a keyboard-only edit compares the keyboard
and keeps the text): an edit that would change nothing takes no token and is
reported as :data:`NOOP`; an allowed edit records the new digests in the same
round trip.  Keys: :class:`FloodKeys`, all under the hash tag ``{rl}``.

Redis is reached only through the table service's generic key-value API
(:class:`engine.live.KeyValueStore`, ``svc.kv``): the scripts and key names
live here, its failures surface as :class:`engine.live.ServiceUnavailable`.

The default rates are a little stricter than the fake Bot API's buckets (per
chat 1/s burst 3, group 20 refilling 20/min, overall 30/s burst 30): one token
of slack in each capacity absorbs the time between our acquire and the server
taking its own token, so a bot that waits here gets no 429 there.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from engine.clock import Clock
from engine.live import KeyValueStore

Sleep = Callable[[float], Awaitable[Any]]

# KEYS: the n bucket keys, then (optionally) the digest key.
# ARGV: now, n, markup digest ('' = no digest check), text digest ('*' = the
# text stays as it is: a markup-only edit), digest ttl ms, then per bucket rate,
# capacity, cost, ttl ms.  The digest key holds '<text digest>:<markup digest>'.
# Returns '-1' (the message already shows this: nothing taken), '0' (taken; the
# digest recorded) or '<wait in seconds>;<index of the bucket that is short>'
# (nothing taken).
ACQUIRE_LUA = r"""
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local md, td = ARGV[3], ARGV[4]
local shown
if md ~= '' then
  local cur = redis.call('GET', KEYS[n + 1]) or '?:?'
  local ct, cm = string.match(cur, '^([^:]*):(.*)$')
  if td == '*' then td = ct or '?' end
  if td == ct and md == cm then return '-1' end
  shown = td .. ':' .. md
end
local tok, stamp = {}, {}
local wait, short = 0, 0
for i = 1, n do
  local b = 5 + (i - 1) * 4
  local rate, cap, cost = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
  local h = redis.call('HMGET', KEYS[i], 't', 's')
  local t, s = tonumber(h[1]), tonumber(h[2])
  if t == nil or s == nil then t = cap; s = now end
  if now > s then
    t = math.min(cap, t + (now - s) * rate)
    s = now
  end
  tok[i], stamp[i] = t, s
  if t < cost then
    local w = (cost - t) / rate
    if w > wait then wait = w; short = i end
  end
end
if wait > 0 then return string.format('%.6f;%d', math.max(wait, 0.000001), short) end
for i = 1, n do
  local b = 5 + (i - 1) * 4
  redis.call('HSET', KEYS[i], 't', string.format('%.17g', tok[i] - tonumber(ARGV[b + 3])),
    's', string.format('%.17g', stamp[i]))
  redis.call('PEXPIRE', KEYS[i], ARGV[b + 4])
end
if shown then redis.call('SET', KEYS[n + 1], shown, 'PX', ARGV[5]) end
return '0'
"""


# A dry run of the same buckets: KEYS the bucket keys; ARGV now, then per bucket
# rate, capacity, tokens needed.  Returns '<overall wait>;<wait of the others>',
# the seconds until the first bucket and until all the others hold what is
# needed ('0;0': now).  Takes and writes nothing.
HEADROOM_LUA = r"""
local now = tonumber(ARGV[1])
local first, wait = 0, 0
for i = 1, #KEYS do
  local b = 1 + (i - 1) * 3
  local rate, cap, need = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
  local h = redis.call('HMGET', KEYS[i], 't', 's')
  local t, s = tonumber(h[1]), tonumber(h[2])
  if t == nil or s == nil then t = cap; s = now end
  if now > s then t = math.min(cap, t + (now - s) * rate) end
  if t < need then
    local w = (need - t) / rate
    if i == 1 then first = w elseif w > wait then wait = w end
  end
end
return string.format('%.6f;%.6f', first, wait)
"""


@dataclass(frozen=True)
class Rate:
    """A token bucket: ``per_second`` refill, ``burst`` capacity (starts full).

    ``reserve``: tokens that deferrable messages leave in the bucket for urgent
    ones (see :meth:`FloodLimiter.headroom`)."""

    per_second: float
    burst: float
    reserve: float = 0.0

    def __post_init__(self) -> None:
        if self.per_second <= 0 or self.burst < 1:
            raise ValueError(f"bad rate {self!r}: per_second > 0 and burst >= 1 needed")
        if not 0 <= self.reserve <= self.burst - 1:
            raise ValueError(f"bad rate {self!r}: 0 <= reserve <= burst - 1 needed")

    @property
    def ttl_ms(self) -> int:
        """How long until an empty bucket is full again (then the key may go)."""
        return math.ceil(self.burst / self.per_second * 1000) + 1000


@dataclass(frozen=True)
class FloodConfig:
    """Rates of the outgoing flood limiter (keys: under the service's prefix)."""

    overall: Rate = field(default_factory=lambda: Rate(25.0, 20, reserve=8))
    per_chat: Rate = field(default_factory=lambda: Rate(1.0, 2, reserve=1))
    per_group: Rate = field(default_factory=lambda: Rate(19 / 60, 18, reserve=4))
    digest_ttl: float = 48 * 3600.0  # seconds a message's last content is remembered


NOOP = -1.0  # acquire_edit: the message already shows this content


class Verdict(NamedTuple):
    """An attempt to take tokens: ``wait`` -1 (NOOP: the edit changes nothing),
    0 (taken) or the seconds to wait (nothing taken); ``overall``: the bucket
    that is short is the overall one (every chat of every process waits on it)."""

    wait: float
    overall: bool = False


class Headroom(NamedTuple):
    """Seconds a deferrable message should hold back: for the overall bucket's
    reserve and for its chat's (and group's) reserve."""

    overall: float
    chat: float

    @property
    def wait(self) -> float:
        return max(self.overall, self.chat)


# Give tokens back: KEYS the bucket keys; ARGV now, then per bucket rate,
# capacity, cost, ttl ms.  Each bucket is refilled to now, gets ``cost`` back
# and never holds more than its capacity.
REFUND_LUA = r"""
local now = tonumber(ARGV[1])
for i = 1, #KEYS do
  local b = 1 + (i - 1) * 4
  local rate, cap, cost = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
  local h = redis.call('HMGET', KEYS[i], 't', 's')
  local t, s = tonumber(h[1]), tonumber(h[2])
  if t ~= nil and s ~= nil then
    if now > s then
      t = t + (now - s) * rate
      s = now
    end
    redis.call('HSET', KEYS[i], 't', string.format('%.17g', math.min(cap, t + cost)),
      's', string.format('%.17g', s))
    redis.call('PEXPIRE', KEYS[i], ARGV[b + 4])
  end
end
return 0
"""


class FloodKeys:
    """The flood limiter's keys, all under ONE hash tag ``{rl}``: an acquire checks
    the overall bucket anyway, so one slot costs nothing and lets a single script
    touch several buckets (and a message's digest) on Redis Cluster.

    ``P{rl}:all`` (hash ``t`` tokens, ``s`` stamp: the bot's overall bucket),
    ``P{rl}:chat:<chat>`` (one chat's bucket), ``P{rl}:group:<chat>`` (a group's
    per-minute bucket), ``P{rl}:msg:<chat>:<message>`` (string: digest of the
    content last sent).  Buckets expire when they would be full again; digests
    after a TTL."""

    def __init__(self, kv: KeyValueStore) -> None:
        self.kv = kv

    def rate_all(self) -> str:
        return self.kv.key("{rl}:all")

    def rate_chat(self, chat_id: int) -> str:
        return self.kv.key(f"{{rl}}:chat:{chat_id}")

    def rate_group(self, chat_id: int) -> str:
        return self.kv.key(f"{{rl}}:group:{chat_id}")

    def sent_digest(self, chat_id: int, message_id: int) -> str:
        return self.kv.key(f"{{rl}}:msg:{chat_id}:{message_id}")


class FloodLimiter:
    """Shared token buckets for outgoing messages (see the module docstring).

    ``FloodLimiter(svc.kv, config, clock=time.time)``; ``round_trips`` counts
    its Redis round trips.
    """

    def __init__(
        self, kv: KeyValueStore, config: FloodConfig | None = None, *, clock: Clock = time.time
    ) -> None:
        self.kv = kv
        self.config = config or FloodConfig()
        self.keys = FloodKeys(kv)
        self.clock = clock
        self.round_trips = 0
        self._script = kv.script(ACQUIRE_LUA)
        self._headroom = kv.script(HEADROOM_LUA)
        self._refund = kv.script(REFUND_LUA)
        self._digest_ttl_ms = math.ceil(self.config.digest_ttl * 1000)

    # ------------------------------------------------------------ buckets
    def buckets(self, chat_id: int | None) -> list[tuple[str, Rate]]:
        """The buckets one message to ``chat_id`` takes from (groups: negative ids)."""
        c, k = self.config, self.keys
        out = [(k.rate_all(), c.overall)]
        if chat_id is not None:
            out.append((k.rate_chat(chat_id), c.per_chat))
            if chat_id < 0:
                out.append((k.rate_group(chat_id), c.per_group))
        return out

    async def _run(
        self,
        buckets: list[tuple[str, Rate]],
        cost: float,
        digest_key: str = "",
        text_digest: str = "*",
        markup_digest: str = "",
    ) -> Verdict:
        for _, rate in buckets:
            if cost > rate.burst:
                raise ValueError(f"cost {cost} exceeds the burst of {rate!r}")
        args: list[str | int | float] = [
            repr(float(self.clock())),
            len(buckets),
            markup_digest,
            text_digest,
            self._digest_ttl_ms,
        ]
        for _, rate in buckets:
            args += [repr(rate.per_second), repr(float(rate.burst)), repr(float(cost)), rate.ttl_ms]
        keys = [key for key, _ in buckets]
        if markup_digest:
            keys.append(digest_key)
        self.round_trips += 1
        out = await self._script(keys, args)
        wait, _sep, short = (out.decode() if isinstance(out, bytes) else str(out)).partition(";")
        return Verdict(float(wait), short == "1")

    async def acquire(self, chat_id: int | None = None, *, cost: float = 1) -> float:
        """Take ``cost`` tokens for a message to ``chat_id`` (``None``: only the
        overall bucket): 0 when taken, else the seconds to wait (nothing taken)."""
        return (await self.take(chat_id, cost=cost)).wait

    async def take(self, chat_id: int | None = None, *, cost: float = 1) -> Verdict:
        """:meth:`acquire`, also telling whether the overall bucket is short."""
        return await self._run(self.buckets(chat_id), cost)

    async def refund(self, chat_id: int | None = None, *, cost: float = 1) -> None:
        """Give back the tokens a :meth:`take` took for a message that did not go
        out after all (an edit found to change nothing, or overtaken by a newer
        one); a bucket never exceeds its capacity.  One round trip."""
        buckets = self.buckets(chat_id)
        args: list[str | int | float] = [repr(float(self.clock()))]
        for _, rate in buckets:
            args += [repr(rate.per_second), repr(float(rate.burst)), repr(float(cost)), rate.ttl_ms]
        self.round_trips += 1
        await self._refund([key for key, _ in buckets], args)

    async def headroom(self, chat_id: int | None = None) -> Headroom:
        """Priority for urgent messages: how long until a message to ``chat_id``
        could take its token and still leave the reserve of the overall bucket
        and of its chat's buckets (0 and 0: now).
        A deferrable message (another player's coalesced update) waits for this
        first, so the acting player's own updates keep finding tokens when the
        bot is busy -- and the deferred ones coalesce meanwhile.  Takes nothing."""
        buckets = self.buckets(chat_id)
        args: list[str | float] = [repr(float(self.clock()))]
        for _, rate in buckets:
            args += [repr(rate.per_second), repr(float(rate.burst)), repr(1.0 + rate.reserve)]
        self.round_trips += 1
        out = await self._headroom([key for key, _ in buckets], args)
        first, _sep, rest = (out.decode() if isinstance(out, bytes) else str(out)).partition(";")
        return Headroom(float(first), float(rest))

    async def acquire_edit(
        self, chat_id: int, message_id: int, text_digest: str | None, markup_digest: str
    ) -> float:
        """Like :meth:`acquire` for an edit of a message to the content digests
        given (``text_digest=None``: a markup-only edit, the text stays):
        :data:`NOOP` (-1) when the message already shows exactly that (nothing
        taken); 0 when taken (and the new content remembered); else the wait."""
        return (await self.take_edit(chat_id, message_id, text_digest, markup_digest)).wait

    async def take_edit(
        self, chat_id: int, message_id: int, text_digest: str | None, markup_digest: str
    ) -> Verdict:
        """:meth:`acquire_edit`, also telling whether the overall bucket is short."""
        _check_digest(text_digest, markup_digest)
        key = self.keys.sent_digest(chat_id, message_id)
        td = "*" if text_digest is None else text_digest
        return await self._run(self.buckets(chat_id), 1, key, td, markup_digest)

    async def check_edit(
        self, chat_id: int, message_id: int, text_digest: str | None, markup_digest: str
    ) -> bool:
        """The digest half of :meth:`take_edit` alone, for an edit whose tokens were
        already taken (:meth:`take`): False when the message already shows this
        content, else True and the new content remembered.  One round trip."""
        _check_digest(text_digest, markup_digest)
        key = self.keys.sent_digest(chat_id, message_id)
        td = "*" if text_digest is None else text_digest
        return (await self._run([], 1, key, td, markup_digest)).wait != NOOP

    async def wait(
        self, chat_id: int | None = None, *, sleep: Sleep = asyncio.sleep, max_wait: float = 300.0
    ) -> float:
        """Acquire, sleeping as told until the tokens are taken; the seconds slept.
        Raises :class:`TimeoutError` past ``max_wait`` seconds of waiting."""
        slept = 0.0
        while (delay := await self.acquire(chat_id)) > 0:
            if slept + delay > max_wait:
                raise TimeoutError(f"flood limit: would wait over {max_wait} s")
            await sleep(delay)
            slept += delay
        return slept

    # ------------------------------------------------------------ digests
    async def remember(
        self, chat_id: int, message_id: int, text_digest: str, markup_digest: str
    ) -> None:
        """Record what a message shows now (after a send, or a "not modified")."""
        _check_digest(text_digest, markup_digest)
        self.round_trips += 1
        await self.kv.set(
            self.keys.sent_digest(chat_id, message_id),
            f"{text_digest}:{markup_digest}",
            ttl_ms=self._digest_ttl_ms,
        )

    async def forget(self, chat_id: int, message_id: int) -> None:
        """Drop the record (an edit failed: the message's content is unknown)."""
        self.round_trips += 1
        await self.kv.delete(self.keys.sent_digest(chat_id, message_id))

    async def last_digest(self, chat_id: int, message_id: int) -> str | None:
        self.round_trips += 1
        return await self.kv.get(self.keys.sent_digest(chat_id, message_id))


def _check_digest(text_digest: str | None, markup_digest: str) -> None:
    for d in (text_digest, markup_digest):
        if d is not None and (not d or ":" in d or d in ("*", "?")):
            raise ValueError(f"bad content digest {d!r}: non-empty, no ':', not '*' or '?'")
