"""The Lua scripts of the table service (run by :mod:`tables.store`).

:data:`CAS_LUA` checks, in this order: a request id seen before (-> duplicate,
the version it produced), the expected version (-> stale, the current version);
then bumps ``v``, sets/deletes hash fields, appends the flushed log chunk to the
stream (exact ``MAXLEN``, id ``<version>-0``, :mod:`tables.eventlog`), sets
both keys' TTL (or deletes both when the TTL is 0), remembers the request id and
publishes the notification.  It only touches keys of one table (one hash tag),
so it runs on Redis Cluster.  Every write it makes is also announced on the
table's live channel (``ARGV[11]``, its version as the message; #42: the Mini
App's pages): ``SPUBLISH`` on a cluster (``ARGV[12]`` = ``S``: a shard channel
in the table's slot), ``PUBLISH`` on one Redis.  The others touch one key or keys of one slot:
a lease, a timer shard's lease and its hints (renewed and claimed in one
round trip), releasing a timer hint, swapping a user's table pointer.
"""

CAS_LUA = r"""
local got = redis.call('HMGET', KEYS[1], 'v', 'r')  -- one command (#39)
local cur = tonumber(got[1] or '0')
local seen = got[2]  -- the request ids seen (false: none)
local rid = ARGV[2]
if rid ~= '' then
  local r = seen
  if r then
    local pos = string.find(r, ';' .. rid .. '=', 1, true)
    if pos then
      return {2, tonumber(string.match(r, '^(%d+)', pos + #rid + 2))}
    end
  end
end
if cur ~= tonumber(ARGV[1]) then return {0, cur} end
local newv = cur + 1
local i = 13
local hs = {'v', newv}
for _ = 1, tonumber(ARGV[5]) do
  hs[#hs + 1] = ARGV[i]; hs[#hs + 1] = ARGV[i + 1]; i = i + 2
end
local hd = {}
for _ = 1, tonumber(ARGV[6]) do hd[#hd + 1] = ARGV[i]; i = i + 1 end
if rid ~= '' then
  local r = ';' .. rid .. '=' .. newv .. (seen or '')
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
if ARGV[11] ~= '' then
  redis.call(ARGV[12] == 'S' and 'SPUBLISH' or 'PUBLISH', ARGV[11], newv)
end
return {1, newv}
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

# KEYS[1]: a lease (a timer shard's, the pruner's).  ARGV: owner, now ms, lease
# until ms, key ttl ms.  Take or renew the lease unless another owner holds it
# beyond now (the times are the service's clock, so a test clock moves leases
# too); returns 0 when another owner holds it.
_TAKE_LEASE = r"""
local v = redis.call('GET', KEYS[1])
if v then
  local owner, untl = string.match(v, '^(.*)|(%d+)$')
  if owner ~= ARGV[1] and tonumber(untl) > tonumber(ARGV[2]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. ARGV[3], 'PX', ARGV[4])
"""

# _TAKE_LEASE alone: 1 = held.
LEASE_LUA = _TAKE_LEASE + "return 1\n"

# A timer tick of one shard in one round trip.  KEYS: the shard's lease, the
# shard's hints (one slot, keys.beside).  ARGV: owner, now ms, lease until ms,
# key ttl ms, the most hints to claim and the score they are pushed to (now +
# timer lease).  The lease's value is ``seen|owner|until``: ``seen`` the time of
# the shard's last tick, by whoever held it (a value ``owner|until`` of an older
# release reads as seen 0; an older release reads ``seen|owner`` as a foreign
# owner, so the lease still excludes it).  Not held (another owner's lease runs
# beyond now): 0.  Held: {since, earliest, due...} -- ``since`` the previous
# holder's last tick when the shard came from another owner (a restart gap
# began then, #28), else 0; ``earliest`` the score of the shard's first hint
# after the claims (-1: none; #39, the loop sleeps until then); then the hints
# due by now (maybe none), each claimed -- pushed into the future, so of
# several processes only one handles it.  An idle shard costs GET, SET and one
# ZRANGE.  ``until`` = now with 0 hints to claim hands the shard back (its next
# holder sees ``seen``).
# Hint repair (#40): KEYS[3] the shard's ``served`` (the cluster node id of the
# master that served its last tick), KEYS[4] its ``repair`` (a repair of its
# hints owed, since the token it holds); ARGV[7] '1' on a cluster.  A master
# other than the one recorded (a failover: the promoted replica may lack the
# hints its master had not replicated) owes a repair (token: now; none
# recorded yet: the first tick, nothing owed); the token is returned after
# ``earliest`` ('' none).  Idle, it
# adds two GETs and a ``CLUSTER MYID``: no write, no round trip.
SHARD_TICK_LUA = r"""
local since = 0
local v = redis.call('GET', KEYS[1])
if v then
  local seen, owner, untl = string.match(v, '^(%d+)|(.*)|(%d+)$')
  if not seen then
    seen = '0'
    owner, untl = string.match(v, '^(.*)|(%d+)$')
  end
  if owner ~= ARGV[1] then
    if tonumber(untl) > tonumber(ARGV[2]) then return 0 end
    since = tonumber(seen)
  end
end
redis.call('SET', KEYS[1], ARGV[2] .. '|' .. ARGV[1] .. '|' .. ARGV[3], 'PX', ARGV[4])
local repair = redis.call('GET', KEYS[4]) or ''
if ARGV[7] == '1' then
  local me = redis.pcall('CLUSTER', 'MYID')
  local was = redis.call('GET', KEYS[3])
  if type(me) == 'string' and was ~= me then
    redis.call('SET', KEYS[3], me, 'PX', ARGV[4])
    if was and repair == '' then
      repair = ARGV[2]
      redis.call('SET', KEYS[4], repair, 'PX', ARGV[4])
    end
  end
end
local out = {since, -1, repair}
if tonumber(ARGV[5]) > 0 then
  local first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  if first[2] and tonumber(first[2]) <= tonumber(ARGV[2]) then
    local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[2], 'LIMIT', 0, ARGV[5])
    for _, m in ipairs(due) do
      redis.call('ZADD', KEYS[2], ARGV[6], m)
      out[#out + 1] = m
    end
    first = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  end
  if first[2] then out[2] = first[2] end
end
return out
"""

# KEYS: the user's pointer, his claim marker.  ARGV: old table ('' = none), new
# table ('' = delete both), pointer ttl ms, claim marker ttl ms (0 = none).
SWAP_LUA = r"""
local cur = redis.call('GET', KEYS[1]) or ''
if cur ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1], KEYS[2])
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  if tonumber(ARGV[4]) > 0 then redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[4]) end
end
return 1
"""

# KEYS: a user's claim marker.  ARGV: the table whose attempt is over.  The
# marker goes only if it names that table: a rival attempt's claim on another
# table (in flight, maybe in another process) stays fresh until its own end.
# (Also a timer shard's repair mark, #40: it goes only if no other repair was
# asked for meanwhile, :meth:`tables.store.Store.repaired`.)
SETTLE_CLAIM_LUA = r"""
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


# Count a finished game in one stats or leaderboard hash, once: KEYS[1] the hash;
# ARGV[1] the game's id (<table>:<game>), ARGV[2] ttl ms, then field/value pairs
# (HINCRBY; a field starting with '=' is set to the value instead).  The hash
# remembers the last game counted in its field '@game': the same game again (a
# command retried after a timeout whose reply was lost) counts nothing.
RECORDED_GAMES = 200
"""How many of the games a stats hash counted it remembers (RECORD_LUA): a
game's follow-up is retried within the hour (#38), and a busy chat's board
counts more games than that meanwhile only if they end every 18 s."""

RECORD_LUA = r"""
if redis.call('HGET', KEYS[1], '@game') == ARGV[1] then return 0 end
local seen = redis.call('HGET', KEYS[1], '@games') or ''
if string.find(' ' .. seen .. ' ', ' ' .. ARGV[1] .. ' ', 1, true) then return 0 end
redis.call('HSET', KEYS[1], '@game', ARGV[1])
seen = ARGV[1] .. ' ' .. seen
local n = 0
for at in string.gmatch(seen, '()%S+') do
  n = n + 1
  if n > tonumber(ARGV[3]) then
    seen = string.sub(seen, 1, at - 2)
    break
  end
end
redis.call('HSET', KEYS[1], '@games', seen)
for i = 4, #ARGV, 2 do
  local f = ARGV[i]
  if string.sub(f, 1, 1) == '=' then
    redis.call('HSET', KEYS[1], string.sub(f, 2), ARGV[i + 1])
  else
    redis.call('HINCRBY', KEYS[1], f, ARGV[i + 1])
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""


# KEYS: an arena's hash, its games list (tables.arenas).  ARGV: the version
# read, the new JSON, its ttl (ms), a game scored by this write ('' = none: a
# JSON entry appended to the list).  Returns {1, new version}, or {0, the
# version there} when stale.
ARENA_CAS_LUA = r"""
local v = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if v ~= tonumber(ARGV[1]) then return {0, v} end
redis.call('HSET', KEYS[1], 'v', v + 1, 'a', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[4] ~= '' then
  redis.call('RPUSH', KEYS[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return {1, v + 1}
"""

# KEYS: a group's current-arena pointer.  ARGV: the arena it must name ('' =
# none), the new one, its ttl (ms).
CHAT_SWAP_LUA = r"""
local cur = redis.call('GET', KEYS[1]) or ''
if cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
"""


# A finished game's follow-ups all went through (#38, :meth:`tables.tables.Tables.follow_up`):
# KEYS[1] the table's hash; ARGV[1] the game.  The hash's ``fin`` rises to it
# (never back); a table gone meanwhile is not brought back.  Not a CAS: the
# table's version stays, and a move made meanwhile is no conflict.
FOLLOWED_UP_LUA = r"""
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local cur = tonumber(redis.call('HGET', KEYS[1], 'fin') or '0')
if tonumber(ARGV[1]) > cur then redis.call('HSET', KEYS[1], 'fin', ARGV[1]) end
return 1
"""


# A rated game's voluntary leave was charged (#38, :meth:`tables.tables.Tables.charge_leave`):
# KEYS[1] the table's hash; ARGV[1] the game, ARGV[2] the user.  The hash's
# ``lc`` is ``<game>|,<user>,<user>,`` -- the leaves of that game charged; a
# newer game starts it anew.  Not a CAS (the version stays, a move made
# meanwhile is no conflict); a table gone meanwhile is not brought back.
LEAVE_CHARGED_LUA = r"""
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local cur = redis.call('HGET', KEYS[1], 'lc') or ''
local head = ARGV[1] .. '|,'
if string.sub(cur, 1, #head) ~= head then cur = head end
if not string.find(cur, ',' .. ARGV[2] .. ',', #head, true) then
  redis.call('HSET', KEYS[1], 'lc', cur .. ARGV[2] .. ',')
end
return 1
"""
