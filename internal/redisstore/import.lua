-- Loads orders without undoing what happened to them: the data of an order is replaced when it
-- differs, its status is set only if the order is new (a cancel must survive a re-import), and
-- a new order enters the indexes (index.go) in the same step, so that a Find sees it as soon
-- as a List does. Running it twice changes nothing, not even the version.
-- KEYS: data hash, status hash, version counter, generation, ids, by-status:pending,
-- by-status:shipped, by-status:cancelled.
-- ARGV: a new generation (set with the change), then id, member, data, status, id, ...
local byStatus = {pending = KEYS[6], shipped = KEYS[7], cancelled = KEYS[8]}
expectType(KEYS[2], 'hash')
for i = 5, 8 do
  expectType(KEYS[i], 'zset')
end
expectCounter(KEYS[3])
local changed = 0
for i = 2, #ARGV, 4 do
  local id, member, data, status = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  if redis.call('HGET', KEYS[1], id) ~= data then
    redis.call('HSET', KEYS[1], id, data)
    changed = changed + 1
  end
  if redis.call('HSETNX', KEYS[2], id, status) == 1 then
    redis.call('ZADD', KEYS[5], 0, member)
    redis.call('ZADD', byStatus[status], 0, member)
    changed = changed + 1
  end
end
if changed > 0 then
  redis.call('INCR', KEYS[3])
  redis.call('SET', KEYS[4], ARGV[1])
end
return changed
