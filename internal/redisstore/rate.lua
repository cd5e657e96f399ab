-- One caller's decisions of a pipeline, in order, each as ratelimit.NewMemory would decide it.
-- KEYS[1]: the caller's hash. ARGV: per minute, per day, ban after, ban for (ms), 1 to peek (write
-- nothing), then each request's Unix ms. Returns six numbers each: admitted, minute and day counts,
-- banned until (ms, or 0), the counts' minute and day. All below 2^53; %.0f keeps exponents from Redis.
local per_minute, per_day = tonumber(ARGV[1]), tonumber(ARGV[2])
local ban_after, ban_for, peek = tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5] == '1'
local f = redis.call('HMGET', KEYS[1], 'm', 'mc', 'd', 'dc', 'retry', 'early', 'ban')
local m0, mc0, d0, dc0 = tonumber(f[1]), tonumber(f[2]), tonumber(f[3]), tonumber(f[4])
local retry0, early0, ban0 = tonumber(f[5]), tonumber(f[6]), tonumber(f[7])
local m, mc, d, dc = m0, mc0 or 0, d0, dc0 or 0
local retry, early, ban = retry0 or 0, early0 or 0, ban0 or 0
-- The expiry counts from the last request that moved the day, the ban or the retry time.
local d_before, ban_before, retry_before, expire_from, out = d0, ban0, retry0, nil, {}
for i = 6, #ARGV do
  local now = tonumber(ARGV[i])
  local minute, day = math.floor(now / 60000), math.floor(now / 86400000)
  -- Windows only move forward: a lagging clock cannot reopen an older window.
  if m == nil then m = minute elseif minute > m then m, mc = minute, 0 end
  if d == nil then d = day elseif day > d then d, dc = day, 0 end
  local admitted = 0
  if now < ban then -- banned: nothing counts
  elseif mc < per_minute and dc < per_day then
    admitted = 1
    if not peek then mc, dc = mc + 1, dc + 1 end
  elseif peek then -- never too early, nor a first 429
  elseif now < retry then -- too early: before the Retry-After of the last first 429
    early = early + 1
    if ban_after > 0 and early >= ban_after then ban, retry, early = now + ban_for, 0, 0 end
  else
    -- a first 429: Retry-After ends the window with fewer left (the day on a tie), as Decide
    retry, early = (math.max(0, per_minute - mc) < math.max(0, per_day - dc)) and (m + 1) * 60000 or (d + 1) * 86400000, 0
  end
  if d ~= d_before or ban ~= ban_before or retry ~= retry_before then expire_from = now end
  d_before, ban_before, retry_before = d, ban, retry
  local n = #out
  out[n + 1], out[n + 2], out[n + 3], out[n + 4], out[n + 5], out[n + 6] = admitted, mc, dc, (now < ban) and ban or 0, m, d
end
if peek then return out end
-- Only what changed is written: an admitted request writes two counts.
local changes = {}
local function put(field, value, old)
  if value ~= old then changes[#changes + 1], changes[#changes + 2] = field, string.format('%.0f', value) end
end
put('m', m, m0); put('mc', mc, mc0); put('d', d, d0); put('dc', dc, dc0)
put('retry', retry, retry0); put('early', early, early0); put('ban', ban, ban0)
if #changes > 0 then redis.call('HSET', KEYS[1], unpack(changes)) end
-- Expires a minute after its day, ban and retry end, by the caller's clock like the windows.
if expire_from then
  redis.call('PEXPIRE', KEYS[1], string.format('%.0f', math.max((d + 1) * 86400000, ban, retry) - expire_from + 60000))
end
return out
