-- Cancels one order atomically: pending becomes cancelled, exactly once across every
-- instance, and its order.cancelled event is appended to the log (events.go) in the same step.
-- The id stays a string: a Lua number is a double and would round an int64.
-- KEYS: status hash, version counter, data hash, generation, events stream.
-- ARGV: order id, a new generation (set with the change).
-- Returns {outcome, data}: outcome is "cancelled" (this call moved it), "already-cancelled",
-- "shipped", "missing" (neither hash has the id), or "no-data" / "no-status" (one of the two
-- halves of the order is missing: the order does not exist, and nothing is written).
local status = redis.call('HGET', KEYS[1], ARGV[1])
local data = redis.call('HGET', KEYS[3], ARGV[1])
if status == '' then status = false end -- an empty half is a missing one (docs/redis-layout.md)
if data == '' then data = false end
local outcome
if not status and not data then
  outcome = 'missing'
elseif not data then
  outcome = 'no-data'
elseif not status then
  outcome = 'no-status'
elseif status == 'pending' then
  expectCounter(KEYS[2])
  -- The first write: a stream key of another type fails it, and the script, before any other.
  redis.call('XADD', KEYS[5], '*', 'type', 'order.cancelled', 'id', ARGV[1], 'data', data, 'status', 'cancelled')
  redis.call('HSET', KEYS[1], ARGV[1], 'cancelled')
  redis.call('INCR', KEYS[2])
  redis.call('SET', KEYS[4], ARGV[2])
  outcome = 'cancelled'
elseif status == 'cancelled' then
  outcome = 'already-cancelled'
else
  outcome = status
end
return {outcome, data or ''}
