-- Revokes a key by its name, if the name still names the key the caller found. KEYS: by-name
-- hash, by-hash hash, version counter, generation. ARGV: name, the key's hash, a new
-- generation (set with the change).
-- Returns the revoked record, or false, writing nothing, when the name names no key or
-- another one (the key found was revoked since, and the name perhaps given to a new key).
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return false end
local record = redis.call('HGET', KEYS[2], ARGV[2])
if not record then return false end
expectCounter(KEYS[3])
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('INCR', KEYS[3])
redis.call('SET', KEYS[4], ARGV[3])
return record
