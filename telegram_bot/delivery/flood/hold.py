"""After a 429: hold the chat's flood buckets until Telegram's ``retry_after``
is over (:class:`ChatHold`), so every bot process's later writes to that chat
wait their turn in :class:`telegram_bot.delivery.flood.limiter.FloodLimiter` instead of each
drawing a 429 of its own.  Telegram counted messages our budget did not see
(its limits are not published; another client of the token; a lost bucket):
the 429 is the one reading of its budget we get.  Same keys and bucket format
as the limiter's (``P rl:{c:<chat>}:chat``, ``P rl:{c:<chat>}:group``: one slot,
never the fleet-wide bucket); one round trip."""

from __future__ import annotations

import math

from telegram_bot.delivery.flood.limiter import FloodLimiter

# KEYS the chat's bucket keys; ARGV now, seconds, then per bucket rate, capacity,
# ttl ms.  Each bucket is refilled to now and left with at most
# ``1 - seconds * rate`` tokens: its next token comes when ``seconds`` are over.
HOLD_LUA = r"""
local now, secs = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 1, #KEYS do
  local b = 2 + (i - 1) * 3
  local rate, cap = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2])
  local h = redis.call('HMGET', KEYS[i], 't', 's')
  local t, s = tonumber(h[1]), tonumber(h[2])
  if t == nil or s == nil then t = cap; s = now end
  if now > s then
    t = math.min(cap, t + (now - s) * rate)
    s = now
  end
  t = math.min(t, 1 - secs * rate)
  redis.call('HSET', KEYS[i], 't', string.format('%.17g', t), 's', string.format('%.17g', s))
  redis.call('PEXPIRE', KEYS[i], ARGV[b + 3])
end
return 0
"""


class ChatHold:
    """``await ChatHold(limiter).hold(chat_id, retry_after)``: no flood token for
    ``chat_id`` (its chat bucket and, for a group, its per-minute bucket; never
    the overall one) before ``retry_after`` seconds are over."""

    def __init__(self, limiter: FloodLimiter) -> None:
        self.limiter = limiter
        self._script = limiter.kv.script(HOLD_LUA)

    async def hold(self, chat_id: int, seconds: float) -> None:
        limiter = self.limiter
        buckets = limiter.buckets(chat_id)[1:]  # [0] is the overall bucket
        args: list[str | int | float] = [repr(float(limiter.clock())), repr(float(seconds))]
        for _, rate in buckets:
            ttl = rate.ttl_ms + math.ceil(seconds * 1000)
            args += [repr(rate.per_second), repr(float(rate.burst)), ttl]
        limiter.round_trips += 1
        await self._script([key for key, _ in buckets], args)
