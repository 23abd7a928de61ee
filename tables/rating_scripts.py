"""The ratings part's Lua scripts (#25, #38): one script per write, each on the
``{rt}`` keys :mod:`tables.ratings` describes.  :data:`SETTLE_LUA` settles a
game, :data:`CHARGE_LUA` charges a leave at once; both start with
:data:`RECOOL_LUA`'s function, the one rule that sets a cooldown from the
stored offences."""

from __future__ import annotations

RECOOL_LUA = r"""
local function recool(offk, coolk, now, window, first, factor, maxms)
  -- his cooldown from the offences in offk: each one sets, from its own time,
  -- the cooldown of its rank among those of the 72 h before it; the latest end
  -- counts (the same figures as when each was written, #38: one rule whether
  -- an offence came, was confirmed or was undone)
  local all = redis.call('ZRANGE', offk, 0, -1, 'WITHSCORES')
  local best, bestn = 0, 0
  for j = 2, #all, 2 do
    local t = tonumber(all[j])
    local k = 0
    for m = 2, #all, 2 do
      local s = tonumber(all[m])
      if s > t - window and s <= t then k = k + 1 end
    end
    if k >= 2 then
      local ms = math.floor(math.min(first * factor ^ (k - 2), maxms))
      if t + ms > best then best, bestn = t + ms, k end
    end
  end
  if best > now then
    redis.call('SET', coolk, '{"until":' .. best .. ',"n":' .. bestn .. '}', 'PX', best - now)
  else
    redis.call('DEL', coolk)
  end
end
"""
"""A Lua function the scripts below begin with: ``recool(off key, cool key, now
ms, window ms, first ms, factor, max ms)`` writes (or deletes) the cooldown
the offences in the key set."""


SETTLE_LUA = (
    RECOOL_LUA
    + r"""
local gkey, logkey = KEYS[1], KEYS[2]
if redis.call('EXISTS', gkey) == 1 then return {'dup', unpack(redis.call('HGETALL', gkey))} end
local n, np = tonumber(ARGV[7]), tonumber(ARGV[8])
local A = 20
for i = 1, n do
  local rev = redis.call('HGET', KEYS[2 + (i - 1) * 6 + 1], 'rev') or '0'
  if rev ~= ARGV[A + (i - 1) * 8 + 2] then return {'stale'} end
end
local now, variant = tonumber(ARGV[2]), ARGV[10]
local counted = ARGV[4] == '1'
local pk = 2 + n * 6
if counted then
  for j = 1, np do
    local key = KEYS[pk + j]
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - tonumber(ARGV[6]))
    if redis.call('ZCARD', key) >= tonumber(ARGV[5]) then counted = false end
  end
end
local top, new = KEYS[pk + np + 1], KEYS[pk + np + 2]
local offences = {}
for i = 1, n do
  local b = 2 + (i - 1) * 6
  local rk, relk, offk, coolk, hk = KEYS[b + 1], KEYS[b + 2], KEYS[b + 3], KEYS[b + 4], KEYS[b + 5]
  local pendk = KEYS[b + 6]
  local pending = redis.call('HGET', pendk, ARGV[1])
  local a = A + (i - 1) * 8
  local user = ARGV[a + 1]
  redis.call('HINCRBY', rk, 'rev', 1)
  redis.call('HSET', rk, 'name', ARGV[a + 8])
  if counted and ARGV[a + 3] ~= '' then
    redis.call('HSET', rk, variant, ARGV[a + 3])
    if ARGV[a + 5] == '1' then
      redis.call('ZADD', new, ARGV[a + 4], user)
      redis.call('ZREM', top, user)
    else
      redis.call('ZADD', top, ARGV[a + 4], user)
      redis.call('ZREM', new, user)
    end
    redis.call('LPUSH', hk, ARGV[a + 7])
    redis.call('LTRIM', hk, 0, tonumber(ARGV[16]) - 1)
  end
  redis.call('LPUSH', relk, ARGV[a + 6])
  redis.call('LTRIM', relk, 0, tonumber(ARGV[15]) - 1)
  local window, first = tonumber(ARGV[11]), tonumber(ARGV[12])
  local factor, maxms = tonumber(ARGV[13]), tonumber(ARGV[14])
  if ARGV[19] ~= '' and string.find(ARGV[19], ',' .. user .. ',', 1, true) then
    -- he walked away from a rated game: an offence, and the cooldown it sets
    local ms = 0
    if pending then
      -- charged when he left (#38): confirmed, not a second offence; its
      -- time and cooldown stay those of the leave
      redis.call('HDEL', pendk, ARGV[1])
      ms = tonumber(pending)
    else
      redis.call('ZREMRANGEBYSCORE', offk, '-inf', now - window)
      redis.call('ZADD', offk, now, ARGV[1])
      redis.call('PEXPIRE', offk, window)
      local k = redis.call('ZCARD', offk)
      if k >= 2 then ms = math.floor(math.min(first * factor ^ (k - 2), maxms)) end
      recool(offk, coolk, now, window, first, factor, maxms)
    end
    table.insert(offences, 'o:' .. user)
    table.insert(offences, ms)
  elseif pending then
    -- charged when he left, but the game brings him no offence (he took his
    -- seat back and played to the end, everyone walked away, not rated):
    -- undone, and his cooldown is what his other offences set (#38)
    redis.call('HDEL', pendk, ARGV[1])
    redis.call('ZREM', offk, ARGV[1])
    recool(offk, coolk, now, window, first, factor, maxms)
  end
end
if counted then
  for j = 1, np do
    redis.call('ZADD', KEYS[pk + j], now, ARGV[1])
    redis.call('PEXPIRE', KEYS[pk + j], ARGV[6])
  end
  redis.call('XADD', logkey, '*', 'g', ARGV[9])
end
local outcome = ARGV[18]
if ARGV[4] == '1' and not counted then outcome = ARGV[20] end
redis.call('HSET', gkey, 's', outcome, unpack(offences))
redis.call('PEXPIRE', gkey, ARGV[3])
return {'ok', unpack(redis.call('HGETALL', gkey))}
"""
)
"""Settle one game (:meth:`Ratings.settle`).  KEYS: the game's key, the log,
six keys per human (rating, reliability, offences, cooldown, history, pending
leaves), the
pair keys, the two boards.  ARGV: 1 game, 2 now ms, 3 game ttl ms, 4 counted
unless the pair guard says no, 5 pair limit, 6 day ms, 7 humans, 8 pairs,
9 the log entry, 10 variant, 11 offence window ms, 12 first cooldown ms, 13
factor, 14 max ms, 15 reliability games, 16 history kept, 17 rated, 18 the
settlement if counted, 19 ``,<user>,...,`` who walked away, 20 the settlement
if not counted by the pair guard; then 8 per human from 21: user, rev read,
new rating JSON, shown, provisional, clean (1/0), history entry, name."""


CHARGE_LUA = (
    RECOOL_LUA
    + r"""
local gkey, offk, pendk, coolk = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
if redis.call('EXISTS', gkey) == 1 then return {'settled'} end
local had = redis.call('HGET', pendk, ARGV[1])
if had then return {'dup', had} end
local now, window = tonumber(ARGV[2]), tonumber(ARGV[3])
local first, factor, maxms = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
redis.call('ZREMRANGEBYSCORE', offk, '-inf', now - window)
redis.call('ZADD', offk, now, ARGV[1])
redis.call('PEXPIRE', offk, window)
local k = redis.call('ZCARD', offk)
local ms = 0
if k >= 2 then ms = math.floor(math.min(first * factor ^ (k - 2), maxms)) end
redis.call('HSET', pendk, ARGV[1], ms)
redis.call('PEXPIRE', pendk, window)
recool(offk, coolk, now, window, first, factor, maxms)
return {'ok', ms}
"""
)
"""Charge a voluntary leave of a rated game at once (:meth:`Ratings.charge_leave`,
#38).  KEYS: the game's key, his offences, his pending leaves, his cooldown.
ARGV: 1 the game (``<table>:<game>``), 2 now ms, 3 offence window ms, 4 first
cooldown ms, 5 factor, 6 max ms.  A game already settled (``settled``: its
settlement decided) or a leave already charged (``dup``, the cooldown it set)
changes nothing: once, however often it is retried."""
