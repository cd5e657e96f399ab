-- Cancels one order atomically: pending becomes cancelled, once across every instance, with
-- its order.cancelled event. The id stays a string: a Lua number would round an int64.
-- KEYS: data hash, status hash, version counter, generation, events stream.
-- ARGV: order id, a new generation (set with the change).
-- Returns {outcome, data}: outcome is "cancelled" (this call moved it), "already-cancelled",
-- "shipped", "missing", or "no-data" / "no-status" (a half is missing: no order, no write).
local data = redis.call('HGET', KEYS[1], ARGV[1])
local status = redis.call('HGET', KEYS[2], ARGV[1])
if status == '' then status = false end -- an empty half is a missing one (docs/redis-layout.md)
if data == '' then data = false end
if not status and not data then return {'missing', ''} end
if not data then return {'no-data', ''} end
if not status then return {'no-status', data} end
if status == 'cancelled' then return {'already-cancelled', data} end
if status ~= 'pending' then return {status, data} end
expectCounter(KEYS[3])
-- The first write: a stream key of another type fails it, and the script, before any other.
redis.call('XADD', KEYS[5], '*', 'type', 'order.cancelled', 'id', ARGV[1], 'data', data, 'status', 'cancelled')
redis.call('HSET', KEYS[2], ARGV[1], 'cancelled')
redis.call('INCR', KEYS[3])
redis.call('SET', KEYS[4], ARGV[2])
return {'cancelled', data}
