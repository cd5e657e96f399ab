-- Loads orders without undoing what happened to them: the data of an order is replaced when it
-- differs, its status is set only if the order is new (a cancel must survive a re-import).
-- Running it twice changes nothing, not even the version.
-- KEYS: data hash, status hash, version counter, generation.
-- ARGV: a new generation (set with the change), then id, data, status, id, data, ...
local changed = 0
for i = 2, #ARGV, 3 do
  local id, data, status = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  if redis.call('HGET', KEYS[1], id) ~= data then
    redis.call('HSET', KEYS[1], id, data)
    changed = changed + 1
  end
  changed = changed + redis.call('HSETNX', KEYS[2], id, status)
end
if changed > 0 then
  redis.call('INCR', KEYS[3])
  redis.call('SET', KEYS[4], ARGV[1])
end
return changed
