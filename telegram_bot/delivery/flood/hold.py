"""After a 429: hold the chat's flood windows until Telegram's ``retry_after``
is over (:class:`ChatHold`), so every bot process's later writes to that chat
wait their turn in :class:`telegram_bot.delivery.flood.limiter.FloodLimiter` instead of each
drawing a 429 of its own.  Telegram counted messages our windows did not see
(its limits are not published; another client of the token; a lost window):
the 429 is the one reading of its budget we get.  Same keys and entries as the
limiter's (``P rl:{c:<chat>}:chat``, ``P rl:{c:<chat>}:group``: one slot,
never the fleet-wide window); one round trip."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from telegram_bot.delivery.flood.limiter import FloodLimiter, To
from telegram_bot.delivery.flood.scripts import WINDOW_LUA

# KEYS the chat's window keys; ARGV now, seconds, then per window limit,
# seconds.  Each window gets ``limit`` hold entries ('h:<i>', never given back)
# scored so that they count until ``seconds`` are over: the window has no room
# before (an earlier hold's entries move later, never earlier).
HOLD_LUA = (
    WINDOW_LUA
    + r"""
local now, secs = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 1, #KEYS do
  local b = 2 + (i - 1) * 2
  local limit, win = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2])
  trim(KEYS[i], now, win)
  redis.call('ZADD', KEYS[i], unpack(scored({'GT'}, fmt(now + secs - win), 'h', limit)))
  keep(KEYS[i], now + secs, now)
end
return 0
"""
)


class ChatHold:
    """``await ChatHold(limiter).hold(chat_id, retry_after)``: no flood token for
    ``chat_id`` (its chat window and, for a group, its minute; never the
    overall one) before ``retry_after`` seconds are over."""

    def __init__(self, limiter: FloodLimiter) -> None:
        self.limiter = limiter
        self._script = limiter.kv.script(HOLD_LUA)

    async def hold(self, to: To, seconds: float) -> None:
        """The windows the refused write ``to`` counted in (an ephemeral one's
        while they are not counted with the group's public writes, #24)."""
        limiter = self.limiter
        buckets = (await limiter.windows(to))[1:]  # [0] is the overall bucket
        args: list[str | int | float] = [repr(float(limiter.clock())), repr(float(seconds))]
        for _, window in buckets:
            args += [window.limit, repr(float(window.seconds))]
        limiter.round_trips += 1
        await self._script([key for key, _ in buckets], args)


class ChatTurns:
    """Limited calls to one chat leave this process one at a time, and a 429
    for the chat is seen by the calls admitted before it (#28): two replies
    admitted together into a chat whose budget Telegram says is spent would
    each draw a 429; in turns, the second finds the first's 429
    (:meth:`refusals` moved on since it was admitted) and is admitted again
    -- waiting out the hold -- instead of drawing its own.  A 429 is counted
    here once its hold is in Redis (``Outgoing``): a call that read the count
    before its admission and finds it unchanged in its turn was admitted
    under every hold of the refusals it counted."""

    def __init__(self) -> None:
        self._locks: dict[int, tuple[asyncio.Lock, int]] = {}
        self._refusals: dict[int, int] = {}

    def refusals(self, chat_id: int) -> int:
        """429s this process received for ``chat_id`` so far (a 429 is rare: kept)."""
        return self._refusals.get(chat_id, 0)

    def refused(self, chat_id: int) -> None:
        self._refusals[chat_id] = self.refusals(chat_id) + 1

    @contextlib.asynccontextmanager
    async def turn(self, chat_id: int) -> AsyncIterator[None]:
        """The chat's turn."""
        lock, users = self._locks.get(chat_id, (asyncio.Lock(), 0))
        self._locks[chat_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[chat_id]
            if users <= 1:  # nobody else waits: forget the lock
                del self._locks[chat_id]
            else:
                self._locks[chat_id] = (lock, users - 1)
