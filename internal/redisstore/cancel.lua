-- Cancels one pending order with its event. KEYS: data hash, status hash, version counter,
-- generation, events stream. ARGV: order id (a string: a Lua number rounds an int64), a new
-- generation. Returns {status found, data}, or {"", the half missing ("" for both)}.
local data = redis.call('HGET', KEYS[1], ARGV[1])
local status = redis.call('HGET', KEYS[2], ARGV[1])
if (data or '') == '' then return {'', (status or '') ~= '' and 'data' or ''} end
if (status or '') == '' then return {'', 'status'} end
if status ~= 'pending' then return {status, data} end
expectCounter(KEYS[3])
-- The first write: a stream key of another type fails it, and the script, before any other.
redis.call('XADD', KEYS[5], '*', 'type', 'order.cancelled', 'id', ARGV[1], 'data', data, 'status', 'cancelled')
redis.call('HSET', KEYS[2], ARGV[1], 'cancelled')
bump(ARGV[2])
return {status, data}
