-- Revokes the key with a name. KEYS: by-name hash, by-hash hash, version counter,
-- generation. ARGV: name, a new generation (set with the change).
-- Returns the revoked record, or false when no key has the name.
local hash = redis.call('HGET', KEYS[1], ARGV[1])
if not hash then
  return false
end
local record = redis.call('HGET', KEYS[2], hash)
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], hash)
redis.call('INCR', KEYS[3])
redis.call('SET', KEYS[4], ARGV[2])
return record
