"""Open Mini App pages, fleet-wide (#42 point 6), and a player's page moves
counted fleet-wide (#42 point 9).

**Presence.**  While a player's page is open on a table -- a live WebSocket on
ANY bot process -- his hand message is not edited on every move (the
publisher asks :meth:`PagePresence.open_in`); when his last page there
closes, the hand is brought up to date once.  Each page is a field
``pg:<user>:<page>`` of the table's chat-state hash (``P{t:<id>}:ui``, read
with the table by every render: no round trip of its own) holding the time
(ms) it expires.  Its process renews every page it serves every ``ttl / 3``
(:meth:`PagePresence.beat`); a closing page deletes its own field and learns
in the same script whether it was its user's last live one there
(:meth:`PagePresence.close`: of two pages closing at once, on two processes,
exactly one hears "last").

A process killed with open pages renews them no more: each page is also a
member ``<table>|<user>:<page>`` of a sweep index ``P pages:{p<k>}`` (sorted
set by expiry, ``crc32(table) mod shards``), which every process sweeps with
the pending renders (:meth:`PagePresence.sweep`): a claim takes the members
past their time off the index (one script a shard: one process gets each),
then a script in the table's slot deletes each field that is still expired
(a late renewal of a slow process wins) and names the users left with no
live page -- whose hands the publisher draws again.  A renewal writes the
field first, the index second, so a claim that falls between the two is
undone by the second.

**Moves.**  A player's page moves, whatever process and page they come
through: at most ``moves`` in any ``window`` seconds, by one script on his
sliding window ``P page_moves:{u:<user>}`` (:class:`PageMoves`).

Redis is reached through the table service's key-value API (``svc.kv``); keys
in :class:`telegram_bot.state.keys.PageKeys` and
:class:`telegram_bot.state.keys.ChatStateKeys`."""

from __future__ import annotations

import asyncio
import math
import secrets
import time
import zlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from engine.clock import Clock
from tables import KeyValueStore
from telegram_bot.state.chat_state import TableUi
from telegram_bot.state.keys import ChatStateKeys, PageKeys

PAGE_FIELD = "pg"
"""The kind of a page's field in the chat-state hash: ``pg:<user>:<page>``."""

# KEYS[1] the table's chat state.  ARGV field, expires ms, the hash's ttl ms.
BEAT_LUA = r"""
for i = 3, #ARGV do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[1])
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

# A page closes: KEYS[1] the table's chat state.  ARGV field, now ms, the
# prefix of its user's fields ('pg:<user>:').  1: no live page of his is left.
CLOSE_LUA = r"""
redis.call('HDEL', KEYS[1], ARGV[1])
local now = tonumber(ARGV[2])
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local f = fields[i]
  if string.sub(f, 1, #ARGV[3]) == ARGV[3] and tonumber(fields[i + 1]) and tonumber(fields[i + 1]) > now then
    return 0
  end
end
return 1
"""

# The sweep's claim: KEYS[1] a shard of the index.  ARGV now ms, limit.  The
# members past their time, taken off the index (the caller handles them).
CLAIM_LUA = r"""
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
if #due > 0 then redis.call('ZREM', KEYS[1], unpack(due)) end
return due
"""

# The sweep, in a table's slot: KEYS[1] its chat state.  ARGV now ms, then the
# claimed fields.  Each still expired goes; returns the users of the gone
# fields who have no live page left there.
EXPIRE_LUA = r"""
local now = tonumber(ARGV[1])
local gone = {}
for i = 2, #ARGV do
  local at = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '0')
  if at <= now then
    redis.call('HDEL', KEYS[1], ARGV[i])
    local user = string.match(ARGV[i], '^pg:(%-?%d+):')
    if user then gone[user] = true end
  end
end
local out = {}
if next(gone) == nil then return out end
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  local user = string.match(fields[i], '^pg:(%-?%d+):')
  if user and gone[user] and (tonumber(fields[i + 1]) or 0) > now then gone[user] = nil end
end
for user, _ in pairs(gone) do table.insert(out, user) end
return out
"""

# A page move: KEYS[1] the user's window (zset of moves by ms).  ARGV now ms,
# window ms, moves, a unique member.  1: allowed (and counted), 0: refused.
MOVE_LUA = r"""
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

SCRIPTS = {
    "BEAT_LUA": BEAT_LUA,
    "CLOSE_LUA": CLOSE_LUA,
    "CLAIM_LUA": CLAIM_LUA,
    "EXPIRE_LUA": EXPIRE_LUA,
    "MOVE_LUA": MOVE_LUA,
}


@dataclass(frozen=True)
class OpenPage:
    """One page a process serves: ``user``'s on ``table``, ``page`` its id."""

    table: str
    user: int
    page: str

    @property
    def field(self) -> str:
        return f"{PAGE_FIELD}:{self.user}:{self.page}"


def new_page_id() -> str:
    """A page's id (unique enough among one user's pages of one table)."""
    return secrets.token_hex(6)


def _text(raw: object) -> str:
    return raw.decode() if isinstance(raw, bytes) else str(raw)


class PagePresence:
    """The open pages of every table (see the module docstring); ``ttl``:
    seconds a page lives without its process's renewal; ``ui_ttl``: the chat
    state's (the service's ``game_ttl``)."""

    def __init__(
        self,
        kv: KeyValueStore,
        *,
        ttl: float = 30.0,
        shards: int = 4,
        clock: Clock = time.time,
        ui_ttl: float = 86400.0,
        batch: int = 100,
    ) -> None:
        if ttl <= 0 or shards < 1:
            raise ValueError("ttl > 0 and shards >= 1 needed")
        self.kv = kv
        self.keys = PageKeys(kv)
        self._ui = ChatStateKeys(kv)
        self.ttl = ttl
        self.shards = shards
        self.clock = clock
        self.ui_ttl_ms = math.ceil(ui_ttl * 1000)
        self.batch = batch
        self._beat = kv.script(BEAT_LUA)
        self._close = kv.script(CLOSE_LUA)
        self._claim = kv.script(CLAIM_LUA)
        self._expire = kv.script(EXPIRE_LUA)

    def now_ms(self) -> int:
        return math.floor(float(self.clock()) * 1000)

    def shard_of(self, table_id: str) -> int:
        return zlib.crc32(table_id.encode()) % self.shards

    def open_in(self, ui: TableUi, user: int) -> bool:
        """Has ``user`` a live page on the table whose chat state is ``ui``?"""
        return ui.pages.get(user, 0) > self.now_ms()

    async def beat(self, page: OpenPage) -> None:
        """``page`` is open (opened now, or still): it lives ``ttl`` more
        seconds.  Two round trips: the field, then the index.  Raises
        :class:`tables.ServiceUnavailable`."""
        await self.beat_many([page])

    async def beat_many(self, pages: Sequence[OpenPage]) -> None:
        """:meth:`beat` of every page in ``pages``: one script a table and one
        ``ZADD`` a shard, all at once -- a process's renewal of its 800 pages
        was 1,600 round trips in one burst, and the live pages' updates
        waited behind it (p95 208 ms at 200 tables x 4 pages).  Raises
        :class:`tables.ServiceUnavailable` (after every call was tried)."""
        until = self.now_ms() + math.ceil(self.ttl * 1000)
        fields: dict[str, list[str]] = defaultdict(list)
        members: dict[int, dict[str, int]] = defaultdict(dict)
        for page in pages:
            fields[page.table].append(page.field)
            members[self.shard_of(page.table)][f"{page.table}|{page.user}:{page.page}"] = until
        calls = [
            self._beat([self._ui.table(table)], [until, self.ui_ttl_ms, *names])
            for table, names in fields.items()
        ]
        calls += [self.kv.zadd(self.keys.due(shard), due) for shard, due in members.items()]
        for result in await asyncio.gather(*calls, return_exceptions=True):
            if isinstance(result, BaseException):
                raise result

    async def close(self, page: OpenPage) -> bool:
        """``page`` closed: True when it was its user's last live page on its
        table (his hand is then drawn again).  Raises
        :class:`tables.ServiceUnavailable`."""
        prefix = f"{PAGE_FIELD}:{page.user}:"
        args: list[str | int] = [page.field, self.now_ms(), prefix]
        last = int(await self._close([self._ui.table(page.table)], args)) == 1
        member = f"{page.table}|{page.user}:{page.page}"
        await self.kv.zrem(self.keys.due(self.shard_of(page.table)), member)
        return last

    async def sweep(self, place: tuple[int, int] = (0, 1)) -> dict[str, list[int]]:
        """The pages whose process renewed them no more (it died): gone now;
        by table, the users left with no live page there (to draw their hands
        again) -- of the shards ``k`` with ``k mod n == i`` for this process's
        ``place`` ``(i, n)`` among the live sweepers (the render sweep's, #39:
        idle traffic that does not grow with the processes).  Raises
        :class:`tables.ServiceUnavailable`."""
        now = self.now_ms()
        claimed: dict[str, list[str]] = defaultdict(list)
        me, n = place
        for shard in range(self.shards):
            if shard % n != me:
                continue
            due = await self._claim([self.keys.due(shard)], [now, self.batch])
            for raw in due or ():
                table, sep, page = _text(raw).rpartition("|")
                if sep and table:
                    claimed[table].append(f"{PAGE_FIELD}:{page}")
        out: dict[str, list[int]] = {}
        for table, fields in claimed.items():
            users = await self._expire([self._ui.table(table)], [now, *fields])
            left = sorted(int(_text(u)) for u in users or ())
            if left:
                out[table] = left
        return out


class PageMoves:
    """A player's page moves over the fleet: at most ``moves`` in any
    ``window`` seconds, whichever page and process they come through."""

    def __init__(
        self, kv: KeyValueStore, moves: int, window: float, clock: Clock = time.time
    ) -> None:
        self.kv = kv
        self.keys = PageKeys(kv)
        self.moves = moves
        self.window_ms = max(1, math.ceil(window * 1000))
        self.clock = clock
        self._move = kv.script(MOVE_LUA)

    async def allow(self, user: int) -> bool:
        """Count a move of ``user``'s: False when it is one too many.  One
        round trip; raises :class:`tables.ServiceUnavailable`."""
        now = math.floor(float(self.clock()) * 1000)
        member = f"{now}:{secrets.token_hex(4)}"
        args: list[str | int] = [now, self.window_ms, self.moves, member]
        return int(await self._move([self.keys.moves(user)], args)) == 1
