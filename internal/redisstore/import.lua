-- Loads orders without undoing what happened to them: data replaced when it differs, status
-- set only for a new order (a cancel survives a re-import), each with its event (order.created
-- for an order that was not whole, order.updated for new data); twice changes nothing. A stored
-- status that is no state fails the run before any write. Ids distinct, at least one.
-- KEYS: data hash, status hash, version counter, generation, events stream.
-- ARGV: a new generation (set with the change), then id, data, status, id, ...
local n, ids = (#ARGV - 1) / 3, {}
for i = 1, n do ids[i] = ARGV[3 * i - 1] end
local data = redis.call('HMGET', KEYS[1], unpack(ids))
local status = redis.call('HMGET', KEYS[2], unpack(ids))
local states = {pending = true, shipped = true, cancelled = true}
for i = 1, n do -- every check before the first write
  if status[i] == '' then status[i] = false end -- an empty half is a missing one (docs/redis-layout.md)
  if status[i] and not states[status[i]] then
    error({err = 'WRONGTYPE order ' .. ids[i] .. ': ' .. KEYS[2] .. ' holds "' .. status[i] ..
      '", not pending, shipped or cancelled: repair it, then import again'})
  end
end
expectCounter(KEYS[3])
-- The writes, as HSET arguments: field, value, ...
local newData, newStatus, nd, ns = {}, {}, 0, 0
for i = 1, n do
  local id, d, s = ids[i], ARGV[3 * i], status[i]
  local had = data[i] ~= '' and data[i]
  if had ~= d then newData[nd + 1], newData[nd + 2], nd = id, d, nd + 2 end
  if not s then
    s = ARGV[3 * i + 1]
    newStatus[ns + 1], newStatus[ns + 2], ns = id, s, ns + 2
  end
  -- The events go first: a stream key of another type fails the first, before other writes.
  local typ = (not had or not status[i]) and 'order.created' or (had ~= d and 'order.updated')
  if typ then redis.call('XADD', KEYS[5], '*', 'type', typ, 'id', id, 'data', d, 'status', s) end
end
if nd > 0 then redis.call('HSET', KEYS[1], unpack(newData)) end
if ns > 0 then redis.call('HSET', KEYS[2], unpack(newStatus)) end
if nd + ns > 0 then
  redis.call('INCR', KEYS[3])
  redis.call('SET', KEYS[4], ARGV[1])
end
return (nd + ns) / 2
