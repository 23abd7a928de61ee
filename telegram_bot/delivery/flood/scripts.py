"""The Lua scripts of the flood limiter (:mod:`telegram_bot.delivery.flood.limiter`).

Every script names the keys of ONE hash slot only (Redis Cluster runs a script
on one node): the chat scripts take a chat's own keys (``rl:{c:<chat>}:...``),
the lease script the fleet-wide bucket (``rl:{all}``) alone.  Buckets are
hashes ``t`` (tokens) and ``s`` (stamp); the time comes from Python (ARGV)."""

from __future__ import annotations

# KEYS: the n bucket keys of one chat, then (optionally) the message's digest
# key, its last-edit key and its in-flight lease key.  ARGV: now, n, markup
# digest ('' = no digest check), text digest ('*' = the text stays as it is: a
# markup-only edit), digest ttl ms, version ('<table id>#<n>', '' = none),
# last-edit ttl ms, lease owner ('' = no lease), lease ttl ms, then per bucket
# rate, capacity, cost, ttl ms.  With an owner, an edit of a message whose
# lease ('<owner>@<until>') another call holds takes nothing and answers
# '-3;<seconds the lease may last>' -- AFTER the digest check, so an older or
# same content is dropped at once; an edit taken takes the lease.  An edit taken records ``now`` as
# the message's last edit (:data:`HEADROOM_LUA` spaces edits by it).  The
# digest key holds '<text digest>:<markup digest>:<version>' (the highest
# version of the last table shown).  Returns '-2' (older than the version of
# the same table the message shows: nothing taken), '-1'
# (the message already shows this: nothing taken; the ttl refreshed), '0'
# (taken; the digest recorded) or '<wait in seconds>;<index of the short
# bucket>' (nothing taken).
ACQUIRE_LUA = r"""
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local md, td = ARGV[3], ARGV[4]
local vt, vn = string.match(ARGV[6], '^(.*)#(%d+)$')
local shown
if md ~= '' then
  local dk = KEYS[n + 1]
  local cur = redis.call('GET', dk) or '?:?:'
  local ct, cm, cv = string.match(cur, '^([^:]*):([^:]*):?(.*)$')
  local ctag, cnum = string.match(cv or '', '^(.*)#(%d+)$')
  if vt and vt == ctag and tonumber(vn) < tonumber(cnum) then return '-2' end
  if td == '*' then td = ct or '?' end
  local v = cv or ''
  if vt and (vt ~= ctag or tonumber(vn) > tonumber(cnum)) then v = ARGV[6] end
  if td == ct and md == cm then
    redis.call('SET', dk, td .. ':' .. md .. ':' .. v, 'PX', ARGV[5])
    return '-1'
  end
  shown = td .. ':' .. md .. ':' .. v
  if ARGV[8] ~= '' then
    local lease = redis.call('GET', KEYS[n + 3])
    local owner, til = string.match(lease or '', '^(.*)@([^@]*)$')
    if owner and owner ~= ARGV[8] and tonumber(til) > now then
      return string.format('-3;%.6f', tonumber(til) - now)
    end
  end
end
local tok, stamp = {}, {}
local wait, short = 0, 0
for i = 1, n do
  local b = 9 + (i - 1) * 4
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
  local b = 9 + (i - 1) * 4
  redis.call('HSET', KEYS[i], 't', string.format('%.17g', tok[i] - tonumber(ARGV[b + 3])),
    's', string.format('%.17g', stamp[i]))
  redis.call('PEXPIRE', KEYS[i], ARGV[b + 4])
end
if shown then
  redis.call('SET', KEYS[n + 1], shown, 'PX', ARGV[5])
  redis.call('SET', KEYS[n + 2], ARGV[1], 'PX', ARGV[7])
  if ARGV[8] ~= '' then
    local til = string.format('%.6f', now + tonumber(ARGV[9]) / 1000)
    redis.call('SET', KEYS[n + 3], ARGV[8] .. '@' .. til, 'PX', ARGV[9])
  end
end
return '0'
"""

# The fleet-wide bucket, leased to a process in small batches.  KEYS[1] the
# overall bucket; ARGV now, rate, capacity, want, need, give back, ttl ms.  The
# bucket is refilled to now, gets ``give back`` (a process's expired, unused
# lease) back, then lends max(need, min(want, floor(tokens))) when it holds
# ``need``.  Returns '<granted>;<tokens left>;<wait>' (granted 0: wait seconds).
LEASE_LUA = r"""
local now, rate, cap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local want, need, back = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local h = redis.call('HMGET', KEYS[1], 't', 's')
local t, s = tonumber(h[1]), tonumber(h[2])
if t == nil or s == nil then t = cap; s = now end
if now > s then
  t = math.min(cap, t + (now - s) * rate)
  s = now
end
t = math.min(cap, t + back)
local k, wait = 0, 0
if t < need then
  wait = math.max((need - t) / rate, 0.000001)
else
  k = math.max(need, math.min(want, math.floor(t)))
  t = t - k
end
if k > 0 or back > 0 then
  redis.call('HSET', KEYS[1], 't', string.format('%.17g', t), 's', string.format('%.17g', s))
  redis.call('PEXPIRE', KEYS[1], ARGV[7])
end
return string.format('%.17g;%.17g;%.6f', k, t, wait)
"""

# A dry run of one chat's buckets: KEYS the bucket keys, then (when ``gap`` >
# 0) the message's last-edit key.  ARGV now, gap, claim, last-edit ttl ms, then
# per bucket rate, capacity, tokens needed.  Returns '<wait>;<edit wait>': the
# seconds until every bucket holds what is needed, and until the message's
# last edit (by any process) is ``gap`` seconds old ('0;0': now).  Takes no
# token; with ``claim`` 1 and nothing to wait for, it records ``now`` as the
# message's last edit -- the edit goes out now, and another process's edit of
# the same message waits its ``gap``.
HEADROOM_LUA = r"""
local now, gap = tonumber(ARGV[1]), tonumber(ARGV[2])
local nb = #KEYS
if gap > 0 then nb = nb - 1 end
local wait = 0
for i = 1, nb do
  local b = 4 + (i - 1) * 3
  local rate, cap, need = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
  local h = redis.call('HMGET', KEYS[i], 't', 's')
  local t, s = tonumber(h[1]), tonumber(h[2])
  if t == nil or s == nil then t = cap; s = now end
  if now > s then t = math.min(cap, t + (now - s) * rate) end
  if t < need then
    local w = (need - t) / rate
    if w > wait then wait = w end
  end
end
local edit = 0
if gap > 0 then
  local last = tonumber(redis.call('GET', KEYS[nb + 1]))
  if last and last + gap > now then edit = last + gap - now end
  if edit == 0 and wait == 0 and ARGV[3] == '1' then
    redis.call('SET', KEYS[nb + 1], ARGV[1], 'PX', ARGV[4])
  end
end
return string.format('%.6f;%.6f', wait, edit)
"""

# Give tokens back: KEYS one chat's bucket keys; ARGV now, held, then per bucket
# rate, capacity, cost, ttl ms.  Each bucket is refilled to now, gets ``cost``
# back and never holds more than its capacity -- unless the tokens were taken
# ``held`` seconds ago and the bucket may have refilled to its capacity since
# (held * rate >= cost): then what it holds already forgot them (the caller
# takes fresh tokens; keeping the old ones counted errs on the safe side).
REFUND_LUA = r"""
local now, held = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 1, #KEYS do
  local b = 2 + (i - 1) * 4
  local rate, cap, cost = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
  local h = redis.call('HMGET', KEYS[i], 't', 's')
  local t, s = tonumber(h[1]), tonumber(h[2])
  if t ~= nil and s ~= nil and held * rate < cost then
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

# An edit failed: what the message shows is unknown, but the highest table
# version it was asked to show stays (a retry, or another process's older
# render, must not go back behind it).  KEYS[1] the digest key, KEYS[2]
# (optional) the message's lease key; ARGV digest ttl ms, lease owner.
# '<text>:<markup>:<version>' becomes '?:?:<version>' (no digest equals
# '?'); without a version the key goes.  The owner's lease goes.
FORGET_LUA = r"""
if KEYS[2] and string.match(redis.call('GET', KEYS[2]) or '', '^(.*)@') == ARGV[2] then
  redis.call('DEL', KEYS[2])
end
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
local v = string.match(cur, '^[^:]*:[^:]*:(.+)$')
if v then
  redis.call('SET', KEYS[1], '?:?:' .. v, 'PX', ARGV[1])
else
  redis.call('DEL', KEYS[1])
end
return 1
"""

# An edit went out: KEYS[1] the message's lease key, KEYS[2] its digest key;
# ARGV owner, digest ttl ms.  The owner's lease goes (1).  A lease lost meanwhile
# (the call outlived it: another edit may have gone out before this one landed)
# leaves the content unknown -- '?:?:<version>', as FORGET_LUA -- so the next
# edit or repair is not dropped as a no-op (0).
RELEASE_EDIT_LUA = r"""
if string.match(redis.call('GET', KEYS[1]) or '', '^(.*)@') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
local cur = redis.call('GET', KEYS[2])
local v = cur and string.match(cur, '^[^:]*:[^:]*:(.+)$')
if v then
  redis.call('SET', KEYS[2], '?:?:' .. v, 'PX', ARGV[2])
elseif cur then
  redis.call('DEL', KEYS[2])
end
return 0
"""
