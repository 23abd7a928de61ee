"""Redis access of the table service: loading a table and the compare-and-set
write, each ONE round trip, plus the small single-key scripts for timers and
user pointers.  ``round_trips`` counts every round trip made (the benchmark
reads it).

The CAS script (:data:`CAS_LUA`) checks, in this order: a request id seen before
(-> ``duplicate``, the version it produced), the expected version (-> ``stale``,
the current version); then bumps ``v``, sets/deletes hash fields, appends the
flushed log chunk to the stream (exact ``MAXLEN``, id ``<version>-0``,
:mod:`engine.live.eventlog`), sets both keys' TTL (or deletes both when
the TTL is 0), remembers the request id and publishes the notification.  It only
touches keys of one table (one hash tag), so it runs on Redis Cluster.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import redis.asyncio as aredis
from redis.exceptions import NoScriptError, ResponseError

from engine.live.keys import Keys

CAS_LUA = r"""
local cur = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
local rid = ARGV[2]
if rid ~= '' then
  local r = redis.call('HGET', KEYS[1], 'r')
  if r then
    local pos = string.find(r, ';' .. rid .. '=', 1, true)
    if pos then
      return {2, tonumber(string.match(r, '^(%d+)', pos + #rid + 2))}
    end
  end
end
if cur ~= tonumber(ARGV[1]) then return {0, cur} end
local newv = cur + 1
local i = 11
local hs = {'v', newv}
for _ = 1, tonumber(ARGV[5]) do
  hs[#hs + 1] = ARGV[i]; hs[#hs + 1] = ARGV[i + 1]; i = i + 2
end
local hd = {}
for _ = 1, tonumber(ARGV[6]) do hd[#hd + 1] = ARGV[i]; i = i + 1 end
if rid ~= '' then
  local r = ';' .. rid .. '=' .. newv .. (redis.call('HGET', KEYS[1], 'r') or '')
  local n, at = 0, 0
  while true do
    local p = string.find(r, ';', at + 1, true)
    if not p then break end
    n = n + 1
    if n > tonumber(ARGV[10]) then r = string.sub(r, 1, p - 1); break end
    at = p
  end
  hs[#hs + 1] = 'r'; hs[#hs + 1] = r
end
redis.call('HSET', KEYS[1], unpack(hs))
if #hd > 0 then redis.call('HDEL', KEYS[1], unpack(hd)) end
if ARGV[7] ~= '' then
  redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[4], newv .. '-0', 'z', ARGV[7])
end
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], ttl)
else
  redis.call('DEL', KEYS[1], KEYS[2])
end
if ARGV[8] ~= '' then
  redis.call('PUBLISH', ARGV[8], '{"version":' .. newv .. ',' .. ARGV[9])
end
return {1, newv}
"""

CLAIM_LUA = r"""
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
for _, m in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[3], m) end
return due
"""

RELEASE_LUA = r"""
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) == tonumber(ARGV[2]) then
  if ARGV[3] == '' then redis.call('ZREM', KEYS[1], ARGV[1])
  else redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1]) end
  return 1
end
return 0
"""

SWAP_LUA = r"""
local cur = redis.call('GET', KEYS[1]) or ''
if cur ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1])
else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return 1
"""


def _sha(script: str) -> str:
    return hashlib.sha1(script.encode()).hexdigest()


@dataclass
class CasOutcome:
    status: str  # "ok" | "stale" | "duplicate"
    version: int


class Store:
    """Round-trip-counted Redis operations on one client."""

    def __init__(self, client: aredis.Redis, keys: Keys) -> None:
        self.r = client
        self.keys = keys
        self.round_trips = 0
        self._claim = client.register_script(CLAIM_LUA)
        self._release = client.register_script(RELEASE_LUA)
        self._swap = client.register_script(SWAP_LUA)
        self._cas_sha = _sha(CAS_LUA)

    # ------------------------------------------------------------------ tables
    async def load(self, table_id: str) -> dict[bytes, bytes]:
        """Every field of the table hash (empty if there is no such table)."""
        self.round_trips += 1
        data: dict[bytes, bytes] = cast(
            "dict[bytes, bytes]", await self.r.hgetall(self.keys.table(table_id))
        )
        return data

    async def cas(
        self,
        table_id: str,
        expected: int,
        *,
        set_fields: dict[str, str | bytes | int],
        del_fields: Sequence[str] = (),
        flush: bytes = b"",
        ttl_ms: int,
        maxlen: int,
        request_id: str = "",
        recent: int = 16,
        notify: str = "",
        timer_hint: int | None = None,
    ) -> CasOutcome:
        """One round trip: the CAS script, pipelined with ``ZADD LT`` of the
        timer hint when there is one (a hint may be early, never late)."""
        k = self.keys
        args: list[str | bytes | int] = [
            expected,
            request_id,
            ttl_ms,
            maxlen,
            len(set_fields),
            len(del_fields),
            flush,
            k.notify if notify else "",
            notify,
            recent,
        ]
        for f, val in set_fields.items():
            args += [f, val]
        args += list(del_fields)
        tkeys = [k.table(table_id), k.events(table_id)]
        for _attempt in range(2):
            self.round_trips += 1
            async with self.r.pipeline(transaction=False) as pipe:
                pipe.evalsha(self._cas_sha, 2, *tkeys, *args)
                if timer_hint is not None:
                    pipe.zadd(k.timers, {table_id: timer_hint}, lt=True)
                res = await pipe.execute(raise_on_error=False)
            out = res[0]
            if isinstance(out, NoScriptError) or (
                isinstance(out, ResponseError) and "NOSCRIPT" in str(out)
            ):
                self.round_trips += 1
                await self.r.script_load(CAS_LUA)
                continue
            if isinstance(out, Exception):
                raise out
            code, version = int(out[0]), int(out[1])
            status = {0: "stale", 1: "ok", 2: "duplicate"}[code]
            return CasOutcome(status, version)
        raise RuntimeError("CAS script could not be loaded")  # pragma: no cover

    async def read_log(self, table_id: str, after_version: int) -> tuple[list[bytes], str]:
        """The flushed chunks that may hold versions above ``after_version`` and
        the open chunk (one round trip)."""
        self.round_trips += 1
        async with self.r.pipeline(transaction=False) as pipe:
            pipe.xrange(self.keys.events(table_id), f"{after_version + 1}-0", "+")
            pipe.hget(self.keys.table(table_id), "e")
            rows, open_chunk = await pipe.execute()
        return [fields[b"z"] for _, fields in rows], _s(open_chunk or b"")

    # ------------------------------------------------------------------ timers
    async def claim_timers(self, now_ms: int, limit: int, lease_ms: int) -> list[str]:
        self.round_trips += 1
        due: list[bytes] = await self._claim(
            keys=[self.keys.timers], args=[now_ms, limit, now_ms + lease_ms]
        )
        return [_s(m) for m in due]

    async def release_timer(self, table_id: str, lease_score: int, new_score: int | None) -> bool:
        self.round_trips += 1
        done = await self._release(
            keys=[self.keys.timers],
            args=[table_id, lease_score, "" if new_score is None else new_score],
        )
        return bool(done)

    # ------------------------------------------------------------- user pointers
    async def swap_user(self, user: int, old: str, new: str, ttl_ms: int) -> bool:
        """Set the user's table pointer to ``new`` ('' deletes it) if it is ``old``
        ('' = absent)."""
        self.round_trips += 1
        done = await self._swap(keys=[self.keys.user(user)], args=[old, new, ttl_ms])
        return bool(done)

    async def get_user(self, user: int) -> str:
        self.round_trips += 1
        raw = cast("bytes | None", await self.r.get(self.keys.user(user)))
        return _s(raw) if raw else ""


def _s(b: bytes | str) -> str:
    return b.decode() if isinstance(b, bytes) else b
