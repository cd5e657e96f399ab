-- Takes or renews a webhook endpoint's lease. KEYS: the endpoint's hash, its lease. ARGV:
-- owner, time to live (ms). Returns 1 when owner holds it now, 0 when another does, -1 when
-- there is no such endpoint.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local holder = redis.call('GET', KEYS[2])
if holder and holder ~= ARGV[1] then
  return 0
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return 1
