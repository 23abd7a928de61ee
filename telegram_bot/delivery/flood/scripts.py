"""The Lua scripts of the flood limiter (:mod:`telegram_bot.delivery.flood.limiter`).

Every script names the keys of ONE hash slot (a Cluster runs a script on one
node): a chat's own keys (``rl:{c:<chat>}:...``), or the fleet-wide window
(``rl:{all}``) alone.  A window (#28) is a sorted set of entries '<name>:<i>'
(a 429's hold: 'h:<i>') scored by when they were counted, the time from ARGV."""

from __future__ import annotations

# Shared by the window scripts (prepended to each).  Every redis.call counts as
# one command of the server (``INFO commandstats``), so each helper spends as
# few as it can (#39): a window is counted with ZCOUNT (its stale entries go
# at one add in eight), a TTL is raised with one PEXPIRE ... GT on Redis 7.
WINDOW_LUA = r"""
local function fmt(x) return string.format('%.17g', x) end
local GT = (redis.REDIS_VERSION_NUM or 0) >= 0x070000
-- the key lives as long as an entry scored ``til`` - window may count (never
-- shorter than it was: a hold's entries count longer); ``fresh``: no entry of
-- the key counted before this script's (a TTL it had may go)
local function keep(key, til, now, fresh)
  local ms = math.ceil((til - now) * 1000) + 1000
  if fresh then
    redis.call('PEXPIRE', key, ms)
  elseif GT then
    if redis.call('PEXPIRE', key, ms, 'GT') == 0 and redis.call('PTTL', key) == -1 then
      redis.call('PEXPIRE', key, ms)  -- a key without a TTL (GT never sets one)
    end
  elseif redis.call('PTTL', key) < ms then
    redis.call('PEXPIRE', key, ms)
  end
end
local function since(now, win) return '(' .. fmt(now - win) end
-- the entries of window ``key`` that count at ``now`` (stale ones stay, see add)
local function count(key, now, win)
  return redis.call('ZCOUNT', key, since(now, win), '+inf')
end
-- the stale entries of window ``key`` go (never a record scored below 0:
-- the chat's unanswered calls and '~', kept in its first window, #39)
local function trim(key, now, win)
  redis.call('ZREMRANGEBYSCORE', key, 0, fmt(now - win))
end
-- seconds until ``need`` more fit under ``limit`` with ``n`` counted (0: now)
local function wait_for(key, n, now, win, limit, need)
  local over = n + need - limit
  if over <= 0 then return 0 end
  local e = redis.call(
    'ZRANGEBYSCORE', key, since(now, win), '+inf', 'WITHSCORES', 'LIMIT', over - 1, 1)
  return math.max(tonumber(e[2]) + win - now, 0.000001)
end
-- the ZADD arguments ``head`` (its options), then a call's ``cost`` entries
-- '<name>:<i>' scored ``at``: one ZADD for them all
local function scored(head, at, name, cost)
  for j = 1, cost do
    head[#head + 1] = at
    head[#head + 1] = name .. ':' .. j
  end
  return head
end
-- one add in eight trims its window (#39: a command an add; a stale entry
-- never counts, ZCOUNT and wait_for look within the window only), by the
-- millisecond of ``now``: every key is trimmed now and then, whatever its calls
local function trims(now)
  return math.floor(now * 1000) % 8 == 0
end
-- count ``cost`` entries at ``now`` named '<name>:<i>' (``n`` counted before);
-- the stale entries go at one add in eight (``trims``)
local function add(key, now, win, cost, name, n)
  if trims(now) then trim(key, now, win) end
  redis.call('ZADD', key, unpack(scored({}, fmt(now), name, cost)))
  keep(key, now + win, now, n == 0)
end
-- remove up to ``cost`` of the newest entries counted at or before ``til``
-- (a refund: the message's own entry, or an older one -- never a newer
-- message's, which would undercount; never a hold's)
local function refund(key, til, cost)
  local got = redis.call('ZREVRANGEBYSCORE', key, fmt(til), 0)
  local k = 0
  for _, m in ipairs(got) do
    if k >= cost then break end
    if string.sub(m, 1, 2) ~= 'h:' then
      redis.call('ZREM', key, m)
      k = k + 1
    end
  end
  return k
end
"""

# A message's record (its digest key): '<digest>' or, while a call's edit of
# it is in flight, '<digest>|<owner>@<until>' -- the message's edit lease, kept
# with what it shows so that taking it, and giving it back, costs no command
# of its own (#39) -- then '~<time>', when it was last edited (HEADROOM_LUA
# spaces edits by it; #39: no key of its own, no SET an edit).  ``record``
# splits it, the last part whole ('~<time>', '' none); ``others`` is the
# lease to keep when the record is rewritten by a call that does not own it
# (a live one).
RECORD_LUA = r"""
local function record(raw)
  if not raw then return nil, nil, nil, '' end
  local body, at = string.match(raw, '^(.*)(~[^~|@]*)$')
  if body then raw = body else at = '' end
  local d, o, t = string.match(raw, '^([^|]*)|(.*)@([^@|]*)$')
  if d then return d, o, t, at end
  return raw, nil, nil, at
end
local function others(o, t, owner, now)
  if o and o ~= owner and tonumber(t) > now then return '|' .. o .. '@' .. t end
  return ''
end
"""

# KEYS: the n window keys of one chat, then (optionally) the message's digest
# key (its record, RECORD_LUA).  ARGV: now, n, markup digest ('' = no digest
# check), text digest ('*' = a markup-only edit), digest ttl ms, version
# ('<table id>#<n>', '' = none), the ttl ms of a record written by a take
# with a gap (none was),
# lease owner ('' = no lease), lease ttl ms, the call's entry name, then per
# window limit, seconds, cost.  Returns '-2' (older than the version of the
# same table the message shows), '-1' (it shows this already; the ttl
# refreshed), '-3;<s>' (another call's lease lasts <s> more -- judged after the
# digest), '0' (counted in every window, the digest recorded, the lease taken,
# ``now`` the message's last edit for HEADROOM_LUA) or '<wait>;<index of the
# full window>'.  An edit under a lease is recorded pending,
# '!<text>:<markup>:<version>', until RELEASE_EDIT_LUA confirms it: a call whose
# process was killed before the answer leaves a digest that equals no content
# (#28: a SIGKILL once left a hand one version behind for good).
#
# Then ARGV: how long an unanswered call may still reach Telegram (0: none
# kept), the windows' margin, and whether this call joins them ('1': its
# caller stamps the answer).  The chat's unanswered calls are kept in its first
# window scored below 0 (#39: no key of their own), 'o:<name>|<cost>' at minus
# its take; before counting, those taken more than the margin ago move to now -
# margin (#37: a killed process's call may still arrive, and counts as arriving
# now).  The window also holds '~' at minus the time its key expires: set again
# only when fewer than ``OUT_SLACK`` s remain (#39: one PEXPIRE a minute, not
# one a call).  Last, ARGV: the seconds the windows are known full ('' = ask
# them, #39) -- then only an edit's digest and lease are judged, and
# '<seconds>;0' answered.  Last, ARGV: a deferrable message's gap ('' = a plain
# take): the HEADROOM_LUA look and the take in one script (#39 point 1) --
# each window's limit is what it leaves free of its reserve, and with a gap
# > 0 the message's record (KEYS[n + 1]) is read for its last edit (once,
# with an edit's digest: the edit judged in the same script).  Nothing to
# wait for: counted, and ``now`` recorded its last edit, as HEADROOM_LUA
# claims it; else nothing counted, '<wait>;<index>;<edit wait>' answered.
ACQUIRE_LUA = (
    WINDOW_LUA
    + RECORD_LUA
    + r"""
local OUT_LIFE, OUT_SLACK = 60, 10
local now = tonumber(ARGV[1])
local n = tonumber(ARGV[2])
local md, td = ARGV[3], ARGV[4]
local vt, vn = string.match(ARGV[6], '^(.*)#(%d+)$')
-- a deferrable message's look at its room and gap, and its take (#39): its
-- record read once, for its last edit and what it shows
local gap = ARGV[15 + n * 3]
local room = gap ~= nil and gap ~= ''
gap = room and tonumber(gap) or 0
local raw, rat, edit = false, '', 0
if md ~= '' or gap > 0 then
  raw = redis.call('GET', KEYS[n + 1])
  local _d, _o, _t
  _d, _o, _t, rat = record(raw)
  local last = tonumber(string.sub(rat, 2))
  if gap > 0 and last and last + gap > now then edit = last + gap - now end
end
local shown, lease
if md ~= '' then
  local dk = KEYS[n + 1]
  local cur, lo, lt, at = record(raw)
  cur = cur or '?:?:'
  lease = others(lo, lt, '', now)  -- a live lease stays (an edit without one)
  local ct, cm, cv = string.match(cur, '^([^:]*):([^:]*):?(.*)$')
  local ctag, cnum = string.match(cv or '', '^(.*)#(%d+)$')
  if vt and vt == ctag and tonumber(vn) < tonumber(cnum) then return '-2' end
  local pending = string.sub(ct or '', 1, 1) == '!'
  if pending then ct = string.sub(ct, 2) end
  if td == '*' then td = ct or '?' end
  local v = cv or ''
  if vt and (vt ~= ctag or tonumber(vn) > tonumber(cnum)) then v = ARGV[6] end
  if td == ct and md == cm and not pending then
    redis.call('SET', dk, td .. ':' .. md .. ':' .. v .. lease .. at, 'PX', ARGV[5])
    return '-1'
  end
  shown = td .. ':' .. md .. ':' .. v
  if ARGV[8] ~= '' then
    shown = '!' .. shown
    if lo and lo ~= ARGV[8] and tonumber(lt) > now then
      return string.format('-3;%.6f', tonumber(lt) - now)
    end
    lease = '|' .. ARGV[8] .. '@' .. string.format('%.6f', now + tonumber(ARGV[9]) / 1000)
  end
end
-- the chat's windows are known full (the caller was refused a moment ago,
-- #39): what the message shows was judged, nothing is counted
local refused = ARGV[14 + n * 3]
if refused and refused ~= '' then return refused .. ';0' end
local age, margin = tonumber(ARGV[11 + n * 3]), tonumber(ARGV[12 + n * 3])
local out = age > 0 and n > 0 and KEYS[1]
local lives  -- until when the first window's key lives ('~', #39)
-- the first window read whole, once (#39: one command for its records, its
-- count and its wait): the scores of its entries that count now, ascending
local first
if out then
  local til = now - margin
  local got, gone, moved, scores = redis.call('ZRANGE', out, 0, -1, 'WITHSCORES'), {}, {}, {}
  for k = 1, #got, 2 do
    local m, s = got[k], tonumber(got[k + 1])
    if s >= 0 then
      scores[#scores + 1] = {m, s}
    elseif m == '~' then
      lives = -s
    elseif -s <= now - age then
      gone[#gone + 1] = m  -- it can no longer arrive
    elseif -s < til then
      local who, c = string.match(m, '^o:(.*)|(%d+)$')
      local zargs = scored({'XX', 'GT', 'CH'}, fmt(til), who, tonumber(c))
      for i = 1, n do
        if redis.call('ZADD', KEYS[i], unpack(zargs)) > 0 then
          keep(KEYS[i], now + tonumber(ARGV[10 + (i - 1) * 3 + 2]), now)
        end
      end
      moved[who] = true
    end
  end
  if #gone > 0 then redis.call('ZREM', out, unpack(gone)) end
  -- what counts now, the moved calls' entries at ``til`` (as the ZADD ... GT)
  local since1 = now - tonumber(ARGV[12])
  first = {}
  for _, e in ipairs(scores) do
    local s = e[2]
    if s < til and moved[string.match(e[1], '^(.*):%d+$') or ''] then s = til end
    if s > since1 then first[#first + 1] = s end
  end
  table.sort(first)
end
local wait, short, counted = 0, 0, {}
for i = 1, n do
  local b = 10 + (i - 1) * 3
  local limit, win, cost = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
  local w
  if i == 1 and first then
    counted[1] = #first
    local over = #first + cost - limit
    w = over > 0 and math.max(first[over] + win - now, 0.000001) or 0
  else
    counted[i] = count(KEYS[i], now, win)
    w = wait_for(KEYS[i], counted[i], now, win, limit, cost)
  end
  if w > wait then wait = w; short = i end
end
if room and (wait > 0 or edit > 0) then
  return string.format('%.6f;%d;%.6f', wait, short, edit)
end
if wait > 0 then return string.format('%.6f;%d', wait, short) end
for i = 1, n do
  local b = 10 + (i - 1) * 3
  local win, cost = tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
  if i == 1 and out then
    -- one ZADD: the entries, the call's record among the unanswered ones
    -- (tracked), and '~' when the key's TTL is set again (#39: once a minute)
    if trims(now) then trim(out, now, win) end
    local zargs = scored({}, fmt(now), ARGV[10], cost)
    if ARGV[13 + n * 3] == '1' then
      zargs[#zargs + 1] = fmt(-now)
      zargs[#zargs + 1] = 'o:' .. ARGV[10] .. '|' .. cost
    end
    local life = math.max(win, age)  -- what its entries and records need
    if lives and lives > now + life + OUT_SLACK then
      redis.call('ZADD', out, unpack(zargs))
    else
      zargs[#zargs + 1] = fmt(-(now + life + OUT_LIFE))
      zargs[#zargs + 1] = '~'
      redis.call('ZADD', out, unpack(zargs))
      -- nothing counted and no '~': a new key (or one of no entry that counts)
      keep(out, now + life + OUT_LIFE, now, counted[1] == 0 and not lives)
    end
  else
    add(KEYS[i], now, win, cost, ARGV[10], counted[i])
  end
end
if shown then  -- what it shows, and now its last edit
  redis.call('SET', KEYS[n + 1], shown .. lease .. '~' .. ARGV[1], 'PX', ARGV[5])
elseif gap > 0 then  -- now its last edit (HEADROOM_LUA's claim)
  if raw then  -- the record as it is
    redis.call('SET', KEYS[n + 1], string.sub(raw, 1, #raw - #rat) .. '~' .. ARGV[1], 'KEEPTTL')
  else  -- nothing known of what it shows
    redis.call('SET', KEYS[n + 1], '?:?:~' .. ARGV[1], 'PX', ARGV[7])
  end
end
return '0'
"""
)

# The fleet-wide window, leased to a process in small batches.  KEYS[1] the
# overall window; ARGV now, seconds, limit, want, need, the lease's entry name,
# the seconds the key is to live from now ('': the caller knows it lives long
# enough, #39), then the names of entries to remove first (a process's leased
# entries it did not use, #28: by name, never another process's).  Then it
# lends max(need, min(want, free)) entries when ``need`` fit.  The key's TTL
# is only ever raised (every process leases and keeps it the same way), so a
# process that set it knows it lives until then at least; a key found without
# one (lost and written again) gets it.  Returns '<granted>;<free left>;<wait>'
# (granted 0: wait seconds).
LEASE_LUA = (
    WINDOW_LUA
    + r"""
local now, win, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local want, need = tonumber(ARGV[4]), tonumber(ARGV[5])
if #ARGV >= 8 then redis.call('ZREM', KEYS[1], unpack(ARGV, 8)) end
local n = count(KEYS[1], now, win)
local free = limit - n
local k, wait = 0, 0
if free < need then
  wait = wait_for(KEYS[1], n, now, win, limit, need)
else
  k = math.max(need, math.min(want, free))
  if trims(now) then trim(KEYS[1], now, win) end
  redis.call('ZADD', KEYS[1], unpack(scored({}, fmt(now), ARGV[6], k)))
  if ARGV[7] ~= '' then keep(KEYS[1], now + tonumber(ARGV[7]), now) end
end
return string.format('%d;%d;%.6f', k, free - k, wait)
"""
)

# A dry run of one chat's windows: KEYS the window keys, then (when ``gap`` >
# 0) the message's digest key (its record, RECORD_LUA: its last edit).  ARGV
# now, gap, claim, the ttl ms of a record written here (none was), then
# per window limit, seconds, entries needed free.  Returns '<wait>;<edit wait>':
# the seconds until every window has what is needed free, and until the
# message's last edit (by any process) is ``gap`` seconds old ('0;0': now).
# Counts nothing; with ``claim`` 1 and nothing to wait for, it records ``now``
# as the message's last edit -- the edit goes out now, and another process's
# edit of the same message waits its ``gap`` (the record's TTL kept).
HEADROOM_LUA = (
    WINDOW_LUA
    + RECORD_LUA
    + r"""
local now, gap = tonumber(ARGV[1]), tonumber(ARGV[2])
local nb = #KEYS
if gap > 0 then nb = nb - 1 end
local wait = 0
for i = 1, nb do
  local b = 4 + (i - 1) * 3
  local limit, win, need = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3])
  local w = wait_for(KEYS[i], count(KEYS[i], now, win), now, win, limit, need)
  if w > wait then wait = w end
end
local edit = 0
if gap > 0 then
  local raw = redis.call('GET', KEYS[nb + 1])
  local _d, _o, _t, at = record(raw)
  local last = tonumber(string.sub(at, 2))
  if last and last + gap > now then edit = last + gap - now end
  if edit == 0 and wait == 0 and ARGV[3] == '1' then
    if raw then  -- the record as it is, its last edit now
      raw = string.sub(raw, 1, #raw - #at) .. '~' .. ARGV[1]
      redis.call('SET', KEYS[nb + 1], raw, 'KEEPTTL')
    else  -- nothing known of what it shows
      redis.call('SET', KEYS[nb + 1], '?:?:~' .. ARGV[1], 'PX', ARGV[4])
    end
  end
end
return string.format('%.6f;%.6f', wait, edit)
"""
)

# Give entries back: KEYS one chat's window keys; ARGV now, paid (when the
# message's tokens were taken: its entry was counted just before), then per
# window seconds, cost.  In each window the ``cost`` newest entries counted at
# or before ``paid`` go (its own, or older: never a later message's, which
# would undercount) -- none when that is out of the window already.
REFUND_LUA = (
    WINDOW_LUA
    + r"""
local now, paid = tonumber(ARGV[1]), tonumber(ARGV[2])
for i = 1, #KEYS do
  local b = 2 + (i - 1) * 2
  local win, cost = tonumber(ARGV[b + 1]), tonumber(ARGV[b + 2])
  if paid > now - win then refund(KEYS[i], paid, cost) end
end
return 0
"""
)

# Count entries a process took without Redis (the in-process fallback while
# Redis was down, or ones a restarted Redis lost) in a window again, #28: KEYS[1]
# the window; ARGV now, seconds, the seconds the key is to live from now at
# least (the fleet-wide window's KEY_LIFE, #39: a process leases without
# setting its TTL while it knows it lives that long; else 0), then pairs of
# score and entry name.  Entries still within the window are added unless
# there already (the same name).
CHARGE_LUA = (
    WINDOW_LUA
    + r"""
local now, win = tonumber(ARGV[1]), tonumber(ARGV[2])
trim(KEYS[1], now, win)
local til, added = now + tonumber(ARGV[3]), 0
for i = 4, #ARGV, 2 do
  local at = tonumber(ARGV[i])
  if at > now - win then
    added = added + redis.call('ZADD', KEYS[1], 'NX', ARGV[i], ARGV[i + 1])
    if at + win > til then til = at + win end
  end
end
if added > 0 then keep(KEYS[1], til, now) end
return added
"""
)

# A group's ephemerals turn out to count with its public writes (#24): the
# entries of its ephemeral minute (KEYS[2]) join its public minute (KEYS[1]),
# so the writes Telegram counted there are counted here too.  ARGV ttl ms.
MERGE_LUA = r"""
redis.call('ZUNIONSTORE', KEYS[1], 2, KEYS[1], KEYS[2], 'AGGREGATE', 'MAX')
-- the ephemeral minute's records below 0 (its unanswered calls and '~', #39)
-- are no entries: they stay behind there
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(0')
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return redis.call('ZCARD', KEYS[1])
"""

# An edit failed: what the message shows is unknown, but the highest table
# version it was asked to show stays (a retry, or another process's older
# render, must not go back behind it).  KEYS[1] the digest key (its record,
# RECORD_LUA); ARGV digest ttl ms, lease owner ('': none), a version the
# message may show since ('' none: #40, a render sent while the chat's shared
# state was down) -- kept when newer than the recorded one of the same table,
# or of another table -- and now.  '<text>:<markup>:<version>' becomes
# '?:?:<version>' (no digest equals '?'); without a version the key goes.
# The owner's lease goes (another's live one stays).
FORGET_LUA = (
    RECORD_LUA
    + r"""
local cur, lo, lt, at = record(redis.call('GET', KEYS[1]))
local lease = others(lo, lt, ARGV[2], tonumber(ARGV[4]))
local v = cur and string.match(cur, '^[^:]*:[^:]*:(.+)$')
local floor = ARGV[3] or ''
if floor ~= '' then
  local ft, fn = string.match(floor, '^(.*)#(%d+)$')
  local ct, cn = string.match(v or '', '^(.*)#(%d+)$')
  if ft and (ft ~= ct or tonumber(fn) > tonumber(cn)) then v = floor end
end
if not cur and not v then return 0 end
if v or lease ~= '' then  -- (its last edit kept; alone it goes: nothing showed)
  redis.call('SET', KEYS[1], '?:?:' .. (v or '') .. lease .. at, 'PX', ARGV[1])
else
  redis.call('DEL', KEYS[1])
end
return 1
"""
)

# Telegram answered a call (#28): its entries in one chat's windows move to
# ``now``, when Telegram had counted the message at the latest (never back;
# an entry given back meanwhile stays gone), and the call leaves the chat's
# unanswered calls.  ARGV[base] now, then the entries' name and cost, then
# each window's seconds (0: its TTL covers them already, #39); KEYS[first..]
# the windows, then (optionally) the chat's unanswered calls.  A call answered
# within ``chat_stamp_after`` of its take names no window (#39: its entries
# stay where they were counted): only its unanswered record goes.
STAMP_FN_LUA = r"""
local function stamp(first, base)
  local now, name, cost = tonumber(ARGV[base]), ARGV[base + 1], tonumber(ARGV[base + 2])
  local last = first + #ARGV - base - 3
  local zargs = scored({'XX', 'GT', 'CH'}, fmt(now), name, cost)
  for i = first, last do
    local win = tonumber(ARGV[base + 3 + i - first])
    if redis.call('ZADD', KEYS[i], unpack(zargs)) > 0 and win > 0 then
      keep(KEYS[i], now + win, now)
    end
  end
  -- answered: off the chat's unanswered calls (ACQUIRE_LUA)
  if #KEYS > last then redis.call('ZREM', KEYS[last + 1], 'o:' .. name .. '|' .. cost) end
end
"""

# A call's entries move to when Telegram answered it (STAMP_FN_LUA): KEYS the
# chat's windows; ARGV now, name, cost, then each window's seconds.
STAMP_LUA = (
    WINDOW_LUA
    + STAMP_FN_LUA
    + r"""
stamp(1, 1)
return 0
"""
)

# A call answered late (#37): its entries in the fleet-wide window move to its
# answer.  KEYS[1] the window (``rl:{all}``); ARGV now, the seconds its key is
# to live from now at least (its KEY_LIFE, #39: past the window's), then the
# entries' names.  Never back (GT); an entry that already left the
# window (the call took longer than the window) counts again: its message went
# out, and Telegram counts it until a window after it arrived.
OVERALL_STAMP_LUA = (
    WINDOW_LUA
    + r"""
local now = tonumber(ARGV[1])
local zargs = {'GT'}
for i = 3, #ARGV do
  zargs[#zargs + 1] = fmt(now)
  zargs[#zargs + 1] = ARGV[i]
end
if #zargs > 1 then redis.call('ZADD', KEYS[1], unpack(zargs)) end
keep(KEYS[1], now + tonumber(ARGV[2]), now)
return 0
"""
)

# An edit went out: KEYS[1] the message's digest key (its record,
# RECORD_LUA), then (optionally) the chat's windows its entries are in; ARGV
# owner, digest ttl ms, now, then (with windows) what STAMP_LUA takes -- the
# same round trip moves them to now.  The owner's lease goes and its pending
# digest is confirmed ('!' dropped) (1).  A lease lost meanwhile (the call
# outlived it and another call took it: another edit may have gone out before
# this one landed) leaves the content unknown -- '?:?:<version>', as
# FORGET_LUA -- so the next edit or repair is not dropped as a no-op (0).
RELEASE_EDIT_LUA = (
    WINDOW_LUA
    + STAMP_FN_LUA
    + RECORD_LUA
    + r"""
if #KEYS > 1 then stamp(2, 4) end
local cur, lo, lt, at = record(redis.call('GET', KEYS[1]))
if cur and lo == ARGV[1] then
  if string.sub(cur, 1, 1) == '!' then cur = string.sub(cur, 2) end
  redis.call('SET', KEYS[1], cur .. at, 'PX', ARGV[2])
  return 1
end
local lease = others(lo, lt, ARGV[1], tonumber(ARGV[3]))
local v = cur and string.match(cur, '^[^:]*:[^:]*:(.+)$')
if v or (cur and (lease ~= '' or at ~= '')) then  -- (its last edit kept)
  redis.call('SET', KEYS[1], '?:?:' .. (v or '') .. lease .. at, 'PX', ARGV[2])
elseif cur then
  redis.call('DEL', KEYS[1])
end
return 0
"""
)

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
