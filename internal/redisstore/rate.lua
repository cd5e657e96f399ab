-- The rate-limit decisions of one caller's requests, in the order given, atomically: both
-- windows, too-early requests and bans. Each request is decided as if it had a call of its
-- own, one after the other, by the same rules as inmem/limiter.go (callerState.step); the
-- conformance suite holds both to them. One call decides every request of the caller that
-- shares a pipeline (batch.go), so a burst from one caller costs Redis one script call, not
-- one per request.
--
-- KEYS[1]: the caller's hash.
-- ARGV: per-minute limit, per-day limit, ban-after, ban-for (ms), then the time of each
--       request (Unix ms, from the instance's clock), one or more.
-- Returns, for each request in turn: admitted (0/1), minute count, day count, banned-until
-- (Unix ms, 0 if none), and the minute and the day the counts are in (Unix minutes and days,
-- later than the request's own after a clock stepped back, or from an instance behind).
--
-- Every number here is below 2^53, so Lua's doubles hold it exactly; numbers are written
-- with %.0f so that Redis never sees an exponent.
local per_minute, per_day = tonumber(ARGV[1]), tonumber(ARGV[2])
local ban_after, ban_for = tonumber(ARGV[3]), tonumber(ARGV[4])
local n = #ARGV - 4

local f = redis.call('HMGET', KEYS[1], 'm', 'mc', 'd', 'dc', 'retry', 'early', 'ban')
local m0, mc0, d0, dc0 = tonumber(f[1]), tonumber(f[2]), tonumber(f[3]), tonumber(f[4])
local retry0, early0, ban0 = tonumber(f[5]), tonumber(f[6]), tonumber(f[7])
local out = {}

-- The common case, in short: every request admitted in the windows the hash already counts
-- in, with no ban running. It is the general rule below with nothing moving but the two
-- counts, so it writes those two alone and leaves the expiry where it is.
if m0 and mc0 and d0 and dc0 and mc0 + n <= per_minute and dc0 + n <= per_day then
  -- Times come in the order the requests were queued, which on one instance is nearly but
  -- not always the order of their clocks: every one must be in the windows and past the ban.
  local first = tonumber(ARGV[5])
  local lo, hi = first, first
  for i = 6, 4 + n do
    local t = tonumber(ARGV[i])
    if t < lo then lo = t elseif t > hi then hi = t end
  end
  if math.floor(hi / 60000) <= m0 and math.floor(hi / 86400000) <= d0 and lo >= (ban0 or 0) then
    redis.call('HSET', KEYS[1], 'mc', string.format('%.0f', mc0 + n), 'dc', string.format('%.0f', dc0 + n))
    for i = 1, n do
      out[#out + 1] = 1; out[#out + 1] = mc0 + i; out[#out + 1] = dc0 + i; out[#out + 1] = 0
      out[#out + 1] = m0; out[#out + 1] = d0
    end
    return out
  end
end

local m, mc = m0, mc0 or 0
local d, dc = d0, dc0 or 0
local retry, early, ban = retry0 or 0, early0 or 0, ban0 or 0
-- What the hash held before each request (as read, for the first), and the time of the last
-- request that moved the day, the ban or the retry time: the expiry counts from it, as that
-- request's call of its own would have set it last.
local d_before, ban_before, retry_before = d0, ban0, retry0
local expire_from

for i = 5, 4 + n do
  local now = tonumber(ARGV[i])
  local minute, day = math.floor(now / 60000), math.floor(now / 86400000)
  -- Windows only move forward: an instance whose clock lags counts in the newer window and
  -- cannot reopen an older one, so no window ever admits more than its limit.
  if m == nil then m = minute elseif minute > m then m, mc = minute, 0 end
  if d == nil then d = day elseif day > d then d, dc = day, 0 end

  local admitted = 0
  if now < ban then
    -- banned: nothing counts
  elseif mc < per_minute and dc < per_day then
    mc, dc, admitted = mc + 1, dc + 1, 1
  elseif now < retry then
    -- too early: sent before the Retry-After of the caller's last first 429 had passed
    early = early + 1
    if ban_after > 0 and early >= ban_after then
      ban, retry, early = now + ban_for, 0, 0
    end
  else
    -- a first 429: Retry-After points at the end of the binding window (the one with fewer
    -- requests left; on a tie, the day). None is below 0, as ratelimit.Decide counts them:
    -- with limits lowered under the counts both have 0 left, and the day binds there too.
    if math.max(0, per_minute - mc) < math.max(0, per_day - dc) then
      retry = (m + 1) * 60000
    else
      retry = (d + 1) * 86400000
    end
    early = 0
  end
  -- A decision that moves what the expiry depends on sets it (the first on an empty hash
  -- does).
  if d ~= d_before or ban ~= ban_before or retry ~= retry_before then expire_from = now end
  d_before, ban_before, retry_before = d, ban, retry
  out[#out + 1] = admitted; out[#out + 1] = mc; out[#out + 1] = dc
  out[#out + 1] = (now < ban) and ban or 0
  out[#out + 1] = m; out[#out + 1] = d
end

-- Only what changed is written, and the expiry only when what it depends on moved: an
-- admitted request, the common case, writes two counts.
local changes = {}
local function put(field, value, old)
  if value ~= old then
    changes[#changes + 1] = field
    changes[#changes + 1] = string.format('%.0f', value)
  end
end
put('m', m, m0); put('mc', mc, mc0); put('d', d, d0); put('dc', dc, dc0)
put('retry', retry, retry0); put('early', early, early0); put('ban', ban, ban0)
if #changes > 0 then
  redis.call('HSET', KEYS[1], unpack(changes))
end
-- The hash expires once nothing in it matters: at the end of the later of its day and its
-- ban (a Retry-After never outlasts the day), plus a minute for instances whose clocks lag.
-- The time to live is counted from the caller's clock, like the windows, not from Redis's:
-- a lagging instance then finds the counts of the day it is still in rather than an empty
-- hash, which it would fill from zero.
if expire_from then
  local clock_slack = 60000
  redis.call('PEXPIRE', KEYS[1], string.format('%.0f', math.max((d + 1) * 86400000, ban, retry) - expire_from + clock_slack))
end
return out
