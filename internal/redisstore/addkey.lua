-- Adds a key whose name is unused. KEYS: by-name hash, by-hash hash, version counter,
-- generation. ARGV: name, hash, record, a new generation. Returns 0 when the name is taken.
redis.call('HEXISTS', KEYS[2], ARGV[2])
expectCounter(KEYS[3])
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
bump(ARGV[4])
return 1
