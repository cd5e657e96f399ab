-- Adds a webhook endpoint whose id is unused. KEYS: the endpoint's hash, the ids' sorted set.
-- ARGV: id, score (creation, Unix ms), then the hash's fields and values. Returns 1, or 0
-- when the id is taken.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
return 1
