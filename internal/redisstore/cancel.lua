-- Cancels one order atomically: pending becomes cancelled, exactly once across every
-- instance. The id stays a string: a Lua number is a double and would round an int64.
-- KEYS: status hash, version counter, data hash. ARGV: order id.
-- Returns {outcome, data, version}: outcome is "cancelled" (this call moved it),
-- "already-cancelled", "shipped" or "missing"; version is the version after the call (a
-- Redis integer reply: exact).
local status = redis.call('HGET', KEYS[1], ARGV[1])
if not status then
  return {'missing', false, 0}
end
local data = redis.call('HGET', KEYS[3], ARGV[1])
if status == 'pending' then
  redis.call('HSET', KEYS[1], ARGV[1], 'cancelled')
  return {'cancelled', data, redis.call('INCR', KEYS[2])}
elseif status == 'cancelled' then
  return {'already-cancelled', data, 0}
end
return {status, data, 0}
