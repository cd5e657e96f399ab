-- Writes a webhook endpoint's delivery state while owner holds its lease. KEYS: the
-- endpoint's hash, its lease. ARGV: owner, then the fields and values. Returns 1, 0 when the
-- lease is not owner's (expired, or taken), -1 when there is no such endpoint.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
