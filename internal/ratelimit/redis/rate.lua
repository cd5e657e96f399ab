-- One rate-limit decision for one caller, atomically: both windows, too-early requests and
-- bans. The same rules as ratelimit/memory (callerState.step); the conformance suite holds
-- both to them.
--
-- KEYS[1]: the caller's hash.
-- ARGV: now (Unix ms, from the caller's clock), per-minute limit, per-day limit,
--       ban-after, ban-for (ms).
-- Returns {admitted (0/1), minute count, day count, banned-until (Unix ms, 0 if none)}.
--
-- Every number here is below 2^53, so Lua's doubles hold it exactly; counts are written
-- with %.0f so that Redis never sees an exponent.
local now = tonumber(ARGV[1])
local per_minute, per_day = tonumber(ARGV[2]), tonumber(ARGV[3])
local ban_after, ban_for = tonumber(ARGV[4]), tonumber(ARGV[5])
local minute, day = math.floor(now / 60000), math.floor(now / 86400000)

local f = redis.call('HMGET', KEYS[1], 'm', 'mc', 'd', 'dc', 'retry', 'early', 'ban')
local m, mc = tonumber(f[1]) or minute, tonumber(f[2]) or 0
local d, dc = tonumber(f[3]) or day, tonumber(f[4]) or 0
local retry, early, ban = tonumber(f[5]) or 0, tonumber(f[6]) or 0, tonumber(f[7]) or 0

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

local function s(n) return string.format('%.0f', n) end
redis.call('HSET', KEYS[1], 'm', s(m), 'mc', s(mc), 'd', s(d), 'dc', s(dc),
  'retry', s(retry), 'early', s(early), 'ban', s(ban))
redis.call('PEXPIREAT', KEYS[1], s(math.max((d + 1) * 86400000, ban, retry)))
if now >= ban then ban = 0 end
return {admitted, mc, dc, ban}
