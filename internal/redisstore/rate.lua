-- One rate-limit decision for one caller, atomically: both windows, too-early requests and
-- bans. The same rules as inmem/limiter.go (callerState.step); the conformance suite holds
-- both to them.
--
-- KEYS[1]: the caller's hash.
-- ARGV: now (Unix ms, from the caller's clock), per-minute limit, per-day limit,
--       ban-after, ban-for (ms).
-- Returns {admitted (0/1), minute count, day count, banned-until (Unix ms, 0 if none)}.
--
-- Every number here is below 2^53, so Lua's doubles hold it exactly; numbers are written
-- with %.0f so that Redis never sees an exponent.
local now = tonumber(ARGV[1])
local per_minute, per_day = tonumber(ARGV[2]), tonumber(ARGV[3])
local ban_after, ban_for = tonumber(ARGV[4]), tonumber(ARGV[5])
local minute, day = math.floor(now / 60000), math.floor(now / 86400000)

local f = redis.call('HMGET', KEYS[1], 'm', 'mc', 'd', 'dc', 'retry', 'early', 'ban')
local m0, mc0, d0, dc0 = tonumber(f[1]), tonumber(f[2]), tonumber(f[3]), tonumber(f[4])
local retry0, early0, ban0 = tonumber(f[5]), tonumber(f[6]), tonumber(f[7])

-- The common case, in short: an admitted request in the windows the hash already counts in,
-- with no ban running. It is the general rule below with nothing moving but the two counts,
-- so it writes those two alone and leaves the expiry where it is.
if m0 and mc0 and d0 and dc0 and minute <= m0 and day <= d0 and now >= (ban0 or 0)
    and mc0 < per_minute and dc0 < per_day then
  redis.call('HSET', KEYS[1], 'mc', string.format('%.0f', mc0 + 1), 'dc', string.format('%.0f', dc0 + 1))
  return {1, mc0 + 1, dc0 + 1, 0}
end

local m, mc = m0 or minute, mc0 or 0
local d, dc = d0 or day, dc0 or 0
local retry, early, ban = retry0 or 0, early0 or 0, ban0 or 0

-- Windows only move forward: an instance whose clock lags counts in the newer window and
-- cannot reopen an older one, so no window ever admits more than its limit.
if minute > m then m, mc = minute, 0 end
if day > d then d, dc = day, 0 end

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
  -- requests left; on a tie, the day)
  if per_minute - mc < per_day - dc then
    retry = (m + 1) * 60000
  else
    retry = (d + 1) * 86400000
  end
  early = 0
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
if d ~= d0 or ban ~= ban0 or retry ~= retry0 then
  local clock_slack = 60000
  redis.call('PEXPIRE', KEYS[1], string.format('%.0f', math.max((d + 1) * 86400000, ban, retry) - now + clock_slack))
end
if now >= ban then ban = 0 end
return {admitted, mc, dc, ban}
