-- Takes or renews a webhook endpoint's lease. KEYS: the endpoint's hash, its lease. ARGV:
-- owner, time to live (ms), and 'renew' to renew only (an expired lease is gone from Redis,
-- so owner no longer holds it). Returns 1 when owner holds it now, 0 when it does not (another
-- does, or a renewal found none), -1 when there is no such endpoint.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local holder = redis.call('GET', KEYS[2])
if (holder and holder ~= ARGV[1]) or (not holder and ARGV[3] == 'renew') then
  return 0
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return 1
