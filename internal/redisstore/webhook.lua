-- Writes a webhook endpoint's hash if no one wrote it since it was read, and indexes it
-- (Webhooks.Update). KEYS: the hash, the ids' sorted set. ARGV: the revision read ('' for no
-- hash; a hash without one is at '0'), the id, its score (creation, Unix ms), then the fields
-- and values (none: delete the endpoint). Returns 1, or 0 when the hash was written, made or
-- deleted meanwhile.
local revision = redis.call('HGET', KEYS[1], 'revision') or (redis.call('EXISTS', KEYS[1]) == 1 and '0') or ''
if revision ~= ARGV[1] then
  return 0
end
if #ARGV == 3 then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[2])
  return 1
end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('HINCRBY', KEYS[1], 'revision', 1)
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
return 1
