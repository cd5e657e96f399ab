-- Cancels one order atomically: pending becomes cancelled, exactly once across every
-- instance, and the order moves from the pending index to the cancelled one in the same
-- step. The id stays a string: a Lua number is a double and would round an int64.
-- KEYS: status hash, version counter, data hash, generation, by-status:pending,
-- by-status:cancelled.
-- ARGV: order id, a new generation (set with the change), the id's index member (index.go).
-- Returns {outcome, data}: outcome is "cancelled" (this call moved it), "already-cancelled",
-- "shipped", "missing" (neither hash has the id), or "no-data" / "no-status" (one of the two
-- halves of the order is missing: the order does not exist, and nothing is written).
local status = redis.call('HGET', KEYS[1], ARGV[1])
local data = redis.call('HGET', KEYS[3], ARGV[1])
if not status and not data then
  return {'missing', false}
elseif not data then
  return {'no-data', false}
elseif not status then
  return {'no-status', false}
end
if status == 'pending' then
  redis.call('HSET', KEYS[1], ARGV[1], 'cancelled')
  redis.call('ZREM', KEYS[5], ARGV[3])
  redis.call('ZADD', KEYS[6], 0, ARGV[3])
  redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[4], ARGV[2])
  return {'cancelled', data}
elseif status == 'cancelled' then
  return {'already-cancelled', data}
end
return {status, data}
