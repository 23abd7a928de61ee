"""The ratings part's Lua scripts (#25, #38), each on the keys
:mod:`tables.ratings` describes.  #38: each player's data is in his own slot,
so a game is settled in steps (:meth:`tables.ratings.Ratings.settle`):
:data:`GAME_LUA` (the game's own key: begin, abort, yield, commit, finish),
:data:`CLAIM_LUA` (hold a player), :data:`APPLY_LUA` (a player's part),
:data:`BOARD_LUA` (the leaderboards); :data:`CHARGE_LUA` charges a leave at
once; :data:`OPPONENTS_LUA` fills a player's opponents on upgrade
(``migrate-ratings``).  :data:`APPLY_LUA` and :data:`CHARGE_LUA` start with
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


CLAIM_LUA = r"""
-- KEYS: 1 his rating hash, 2 his settled games (hash), 3.. his pair keys
-- ARGV: 1 game id, 2 attempt, 3 variant, 4 since (ms: the pair window), 5 the
-- lock to take over ('' none)
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return {'done'} end
local lock = redis.call('HGET', KEYS[1], 'lock')
if lock and lock ~= ARGV[5] and string.sub(lock, 1, #ARGV[1] + 1) ~= ARGV[1] .. '|' then
  return {'busy', lock}
end
redis.call('HSET', KEYS[1], 'lock', ARGV[1] .. '|' .. ARGV[2])
local out = {'ok', redis.call('HGET', KEYS[1], 'rev') or '0',
             redis.call('HGET', KEYS[1], ARGV[3]) or ''}
for j = 3, #KEYS do
  table.insert(out, redis.call('ZCOUNT', KEYS[j], '(' .. ARGV[4], '+inf'))
end
return out
"""
"""Hold one player for a game's settlement (:meth:`Ratings.settle`): nothing
moves his rating until that game's part of him is applied (or the game's
attempt is given up and another takes him over: ``ARGV[5]``); his rev, his
rating, and his pairs' counted games in the window."""

GAME_LUA = r"""
-- KEYS: 1 the game's key, 2 the log (same slot).  ARGV: 1 op, 2 attempt, then per op
local k = KEYS[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local st = redis.call('HGET', k, 'st') or ''
local op = ARGV[1]
if st == '' and redis.call('HEXISTS', k, 's') == 1 then st = 'settled' end
if op == 'begin' then  -- 3 lease ms, 4 ttl ms
  if st == 'settled' then return {'settled'} end
  if st == 'committed' then return {'committed', redis.call('HGET', k, 'plan')} end
  if st == 'planning' and redis.call('HGET', k, 'lt') ~= ARGV[2]
     and tonumber(redis.call('HGET', k, 'lu')) > now then return {'busy'} end
  redis.call('HSET', k, 'st', 'planning', 'lt', ARGV[2], 'lu', now + tonumber(ARGV[3]))
  redis.call('PEXPIRE', k, ARGV[4])
  return {'go'}
elseif op == 'abort' then  -- another game holds a player of ours: may we take him?
  if st == 'committed' then return {'committed', redis.call('HGET', k, 'plan')} end
  if st == 'planning' then
    if redis.call('HGET', k, 'lt') == ARGV[2] and tonumber(redis.call('HGET', k, 'lu')) > now then
      return {'busy'}
    end
    if redis.call('HGET', k, 'lt') == ARGV[2] then redis.call('HSET', k, 'st', 'aborted') end
  end
  return {'free'}
elseif op == 'yield' then  -- give our attempt up now
  if st == 'planning' and redis.call('HGET', k, 'lt') == ARGV[2] then
    redis.call('HSET', k, 'lu', 0)
  end
  return {'ok'}
elseif op == 'commit' then  -- 3 the plan
  if st ~= 'planning' or redis.call('HGET', k, 'lt') ~= ARGV[2] then return {'lost'} end
  redis.call('HSET', k, 'st', 'committed', 'plan', ARGV[3])
  return {'ok'}
elseif op == 'finish' then  -- 3 log entry or '', 4 maxlen, 5 ttl ms, 6.. the settlement
  if st == 'settled' then return {'settled'} end
  if st ~= 'committed' then return {'lost'} end
  if ARGV[3] ~= '' then
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*', 'g', ARGV[3])
  end
  redis.call('HDEL', k, 'plan', 'lt', 'lu')
  redis.call('HSET', k, 'st', 'settled', unpack(ARGV, 6))
  redis.call('PEXPIRE', k, ARGV[5])
  return {'settled'}
end
return redis.error_reply('unknown op ' .. op)
"""
"""A game's settlement, in the game's own slot (:meth:`Ratings.settle`):
``begin`` an attempt (one at a time, leased), ``abort`` another game's attempt
whose lease ran out, ``yield`` ours, ``commit`` the plan (what each player's
part is: then it is applied whatever happens, by anyone), ``finish``: the log
entry appended and the settlement written, once."""

APPLY_LUA = (
    RECOOL_LUA
    + r"""
-- KEYS: 1 rating hash, 2 reliability, 3 offences, 4 cooldown, 5 history,
-- 6 settled games (hash game -> '<cooldown ms>|<rev>'), 7 the same by time
-- (zset), 8 pending leaves, 9 his opponents (zset user -> ms), 10.. the pairs
-- to count (his slot)
-- ARGV: 1 game, 2 now (the game's clock), 3 attempt, 4 moves (1/0), 5 rev
-- read, 6 variant, 7 new rating, 8 clean (1/0), 9 history entry, 10 name,
-- 11 offence (1/0), 12 window ms, 13 first cooldown ms, 14 factor, 15 max ms,
-- 16 reliability games, 17 history kept, 18 game ttl ms, 19 day ms,
-- 20 opponents kept ms (0: none), 21 opponents kept at most, 22.. the people
-- he finished this game with
local gid, now = ARGV[1], tonumber(ARGV[2])
local prev = redis.call('HGET', KEYS[6], gid)
if prev then return {'dup', prev} end
local rk = KEYS[1]
local mine = redis.call('HGET', rk, 'lock') == gid .. '|' .. ARGV[3]
local rev = tonumber(redis.call('HGET', rk, 'rev') or '0')
if ARGV[4] == '1' then
  if not mine then return {'lost'} end
  if tostring(rev) ~= ARGV[5] then return {'stale'} end
  rev = rev + 1
  redis.call('HSET', rk, ARGV[6], ARGV[7], 'rev', rev)
  redis.call('LPUSH', KEYS[5], ARGV[9])
  redis.call('LTRIM', KEYS[5], 0, tonumber(ARGV[17]) - 1)
  for j = 10, #KEYS do
    redis.call('ZREMRANGEBYSCORE', KEYS[j], '-inf', now - tonumber(ARGV[19]))
    redis.call('ZADD', KEYS[j], now, gid)
    redis.call('PEXPIRE', KEYS[j], ARGV[19])
  end
end
if mine then redis.call('HDEL', rk, 'lock') end
redis.call('HSET', rk, 'name', ARGV[10])
redis.call('HSETNX', rk, 'first', now)
redis.call('HINCRBY', rk, 'played', 1)
redis.call('LPUSH', KEYS[2], ARGV[8])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[16]) - 1)
local keepms = tonumber(ARGV[20] or '0')
if keepms > 0 then
  -- #38, the opponent-diversity guard: whom he finished games with, each at
  -- his latest such game; trimmed by age and to the latest ARGV[21], expiring
  local oppk = KEYS[9]
  for j = 22, #ARGV do
    local had = redis.call('ZSCORE', oppk, ARGV[j])
    if not had or tonumber(had) < now then redis.call('ZADD', oppk, now, ARGV[j]) end
  end
  redis.call('ZREMRANGEBYSCORE', oppk, '-inf', now - keepms)
  local n, most = redis.call('ZCARD', oppk), tonumber(ARGV[21])
  if n > most then redis.call('ZREMRANGEBYRANK', oppk, 0, n - most - 1) end
  if n > 0 then redis.call('PEXPIRE', oppk, keepms) end
end
local offk, coolk, pendk = KEYS[3], KEYS[4], KEYS[8]
local window, first = tonumber(ARGV[12]), tonumber(ARGV[13])
local factor, maxms = tonumber(ARGV[14]), tonumber(ARGV[15])
local pending = redis.call('HGET', pendk, gid)
local ms = -1
if ARGV[11] == '1' then
  -- he walked away from a game rated for him: an offence, and its cooldown
  if pending then
    -- charged when he left (#38): confirmed, not a second offence; its
    -- time and cooldown stay those of the leave
    redis.call('HDEL', pendk, gid)
    ms = tonumber(pending)
  else
    redis.call('ZREMRANGEBYSCORE', offk, '-inf', now - window)
    redis.call('ZADD', offk, now, gid)
    redis.call('PEXPIRE', offk, window)
    local k = redis.call('ZCARD', offk)
    ms = 0
    if k >= 2 then ms = math.floor(math.min(first * factor ^ (k - 2), maxms)) end
    recool(offk, coolk, now, window, first, factor, maxms)
  end
elseif pending then
  -- charged when he left, but the game brings him no offence (he took his
  -- seat back and played to the end, everyone walked away, not rated for
  -- him): undone, and his cooldown is what his other offences set (#38)
  redis.call('HDEL', pendk, gid)
  redis.call('ZREM', offk, gid)
  recool(offk, coolk, now, window, first, factor, maxms)
end
local ttl = tonumber(ARGV[18])
for _, old in ipairs(redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', now - ttl)) do
  redis.call('HDEL', KEYS[6], old)
end
redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', now - ttl)
local part = ms .. '|' .. rev
redis.call('HSET', KEYS[6], gid, part)
redis.call('ZADD', KEYS[7], now, gid)
return {'ok', part}
"""
)
"""One player's part of a committed settlement, in his own slot, once (his
settled games remember it: a second call answers the first's part); a leave
of his charged at once (:data:`CHARGE_LUA`) is confirmed or undone here; the
people he finished the game with are added to his opponents (#38, the
opponent-diversity guard) in the same step, so a retry adds nothing twice."""

BOARD_LUA = r"""
-- KEYS: 1 established board, 2 provisional board, 3 rev of each member
-- ARGV: 1 user, 2 his rev after the move, 3 shown rating, 4 provisional (1/0)
local seen = tonumber(redis.call('HGET', KEYS[3], ARGV[1]) or '-1')
if seen >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
if ARGV[4] == '1' then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
  redis.call('ZREM', KEYS[1], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
end
return 1
"""
"""A player's place on a leaderboard after a move of his rating: a late
write of an older move never overwrites a newer one (his rev)."""


CHARGE_LUA = (
    RECOOL_LUA
    + r"""
-- KEYS (his slot): 1 his settled games, 2 offences, 3 pending leaves, 4 cooldown
local donek, offk, pendk, coolk = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
if redis.call('HEXISTS', donek, ARGV[1]) == 1 then return {'settled'} end
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
#38), in his own slot.  KEYS: his settled games, offences, pending leaves,
cooldown.  ARGV: 1 the game (``<table>:<game>``), 2 now ms, 3 offence window
ms, 4 first cooldown ms, 5 factor, 6 max ms.  A game whose part of him is
already settled (``settled``: its settlement decided) or a leave already
charged (``dup``, the cooldown it set) changes nothing: once, however often
it is retried."""


OPPONENTS_LUA = r"""
-- KEYS: 1 his opponents (zset user -> ms).  ARGV: 1 now ms, 2 opponents kept
-- ms, 3 kept at most, 4.. pairs of user and the ms of his latest game with him
local k, now = KEYS[1], tonumber(ARGV[1])
local keepms, most = tonumber(ARGV[2]), tonumber(ARGV[3])
local wrote = {}
for j = 4, #ARGV - 1, 2 do
  local ms = tonumber(ARGV[j + 1])
  local had = redis.call('ZSCORE', k, ARGV[j])
  if ms > now - keepms and (not had or tonumber(had) < ms) then
    redis.call('ZADD', k, ms, ARGV[j])
    table.insert(wrote, ARGV[j])
  end
end
redis.call('ZREMRANGEBYSCORE', k, '-inf', now - keepms)
local n = redis.call('ZCARD', k)
if n > most then redis.call('ZREMRANGEBYRANK', k, 0, n - most - 1) end
if n == 0 then return 0 end
local newest = redis.call('ZRANGE', k, -1, -1, 'WITHSCORES')
local ttl = tonumber(newest[2]) + keepms - now
if redis.call('PTTL', k) < ttl then redis.call('PEXPIRE', k, ttl) end
local kept = 0
for _, u in ipairs(wrote) do
  if redis.call('ZSCORE', k, u) then kept = kept + 1 end
end
return kept
"""
"""#38, ``migrate-ratings``: a player's opponents filled from the games
recorded before the guard kept them (:mod:`tables.migrate`), by
:data:`APPLY_LUA`'s rules -- each opponent at his latest game with him (never
moved back: a later game written since stays), none older than the window,
the latest ``ARGV[3]`` kept, the key expiring when its newest entry leaves
the window (never sooner than it did).  How many of the entries it wrote are
kept: 0 when run again."""
