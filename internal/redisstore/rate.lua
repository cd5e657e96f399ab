-- The rate-limit decisions of one caller's requests, in the order given, atomically: both
-- windows, too-early requests and bans, each decided as a call of its own would, by the rules
-- of ratelimit.NewMemory (the conformance suite holds both to them). One call decides the
-- caller's requests of one pipeline (limiter.go).
-- KEYS[1]: the caller's hash. ARGV: per-minute limit, per-day limit, ban-after, ban-for (ms),
-- then the time of each request (Unix ms, the instance's clock).
-- Returns, for each request: admitted (0/1), minute count, day count, banned-until (Unix ms,
-- 0 if none), and the minute and the day the counts are in (Unix minutes and days).
-- Every number is below 2^53, exact in a double; %.0f keeps exponents from Redis.
local per_minute, per_day = tonumber(ARGV[1]), tonumber(ARGV[2])
local ban_after, ban_for = tonumber(ARGV[3]), tonumber(ARGV[4])
local f = redis.call('HMGET', KEYS[1], 'm', 'mc', 'd', 'dc', 'retry', 'early', 'ban')
local m0, mc0, d0, dc0 = tonumber(f[1]), tonumber(f[2]), tonumber(f[3]), tonumber(f[4])
local retry0, early0, ban0 = tonumber(f[5]), tonumber(f[6]), tonumber(f[7])
local m, mc, d, dc = m0, mc0 or 0, d0, dc0 or 0
local retry, early, ban = retry0 or 0, early0 or 0, ban0 or 0
-- The expiry counts from the last request that moved the day, the ban or the retry time, as
-- that request's call of its own would have set it last.
local d_before, ban_before, retry_before = d0, ban0, retry0
local expire_from
local out = {}
for i = 5, #ARGV do
  local now = tonumber(ARGV[i])
  local minute, day = math.floor(now / 60000), math.floor(now / 86400000)
  -- Windows only move forward: a lagging clock cannot reopen an older window.
  if m == nil then m = minute elseif minute > m then m, mc = minute, 0 end
  if d == nil then d = day elseif day > d then d, dc = day, 0 end
  local admitted = 0
  if now < ban then
    -- banned: nothing counts
  elseif mc < per_minute and dc < per_day then
    mc, dc, admitted = mc + 1, dc + 1, 1
  elseif now < retry then -- too early: before the Retry-After of the last first 429
    early = early + 1
    if ban_after > 0 and early >= ban_after then
      ban, retry, early = now + ban_for, 0, 0
    end
  else
    -- a first 429: Retry-After is the end of the window with fewer requests left (on a tie,
    -- the day), none below 0, as ratelimit.Decide counts them.
    if math.max(0, per_minute - mc) < math.max(0, per_day - dc) then
      retry = (m + 1) * 60000
    else
      retry = (d + 1) * 86400000
    end
    early = 0
  end
  if d ~= d_before or ban ~= ban_before or retry ~= retry_before then expire_from = now end
  d_before, ban_before, retry_before = d, ban, retry
  out[#out + 1] = admitted; out[#out + 1] = mc; out[#out + 1] = dc
  out[#out + 1] = (now < ban) and ban or 0
  out[#out + 1] = m; out[#out + 1] = d
end
-- Only what changed is written: an admitted request writes two counts.
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
-- The hash expires once nothing in it matters, the end of the later of its day and its ban,
-- plus a minute for lagging clocks; counted from the caller's clock, like the windows, so a
-- lagging instance finds the counts of its day rather than an empty hash.
if expire_from then
  redis.call('PEXPIRE', KEYS[1], string.format('%.0f', math.max((d + 1) * 86400000, ban, retry) - expire_from + 60000))
end
return out
