"""One long-polling process at a time (#28): Telegram allows one ``getUpdates``
consumer per token, and a second one gets 409 Conflict (logged by aiogram at
every poll: 197 lines from two processes).  A process polls only while it
holds the fleet's poll lease in Redis (``P poll:lease``, the owner's id,
``ttl`` seconds, renewed every ``ttl / 3``); the others wait quietly and look
again every ``ttl / 3`` -- one takes over when the holder stops (it releases
the lease) or dies (the lease lapses).  Acquire and renew are one script (set
when free or ours), release another (delete only when ours): the check and
the write are one step.  Redis only through ``svc.kv``."""

from __future__ import annotations

import logging
import secrets

from tables import KeyValueStore
from telegram_bot.state.keys import PollKeys

log = logging.getLogger(__name__)

# KEYS the lease; ARGV owner, ttl ms.  Taken (or renewed) when free or ours: 1.
TAKE_LUA = r"""
local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""

# KEYS the lease; ARGV owner.  Deleted only when ours.
RELEASE_LUA = r"""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class PollLease:
    """``await lease.take()``: True while this process may poll (taken or
    renewed); ``await lease.release()`` when it stops.  ``owner``: unique per
    process."""

    def __init__(self, kv: KeyValueStore, ttl: float, owner: str | None = None) -> None:
        self.kv = kv
        self.ttl = ttl
        self.owner = owner or secrets.token_hex(8)
        self.key = PollKeys(kv).lease()
        self._take = kv.script(TAKE_LUA)
        self._release = kv.script(RELEASE_LUA)

    @property
    def every(self) -> float:
        """Seconds between two renewals (or two looks while waiting)."""
        return self.ttl / 3

    async def take(self) -> bool:
        return bool(await self._take([self.key], [self.owner, max(1, round(self.ttl * 1000))]))

    async def release(self) -> None:
        await self._release([self.key], [self.owner])

    async def holder(self) -> str | None:
        return await self.kv.get(self.key)
