-- Loads orders without undoing what happened to them: data replaced when it differs, status set
-- only for a new order (a cancel survives a re-import), each with its event; twice changes
-- nothing. KEYS: as cancel.lua. ARGV: a new generation, then id, data, status, id, ...
local n, ids = (#ARGV - 1) / 3, {}
for i = 1, n do ids[i] = ARGV[3 * i - 1] end
local data = redis.call('HMGET', KEYS[1], unpack(ids))
local status = redis.call('HMGET', KEYS[2], unpack(ids))
local states = {pending = true, shipped = true, cancelled = true}
for i = 1, n do -- every check before the first write; an empty half is a missing one
  if status[i] == '' then status[i] = false end
  if data[i] == '' then data[i] = false end
  if status[i] and not states[status[i]] then
    error({err = 'WRONGTYPE order ' .. ids[i] .. ': ' .. KEYS[2] .. ' holds "' .. status[i] ..
      '", not pending, shipped or cancelled: repair it, then import again'})
  end
end
expectCounter(KEYS[3])
local newData, newStatus = {}, {} -- HSET arguments: field, value, ...
for i = 1, n do
  local id, d, s = ids[i], ARGV[3 * i], status[i] or ARGV[3 * i + 1]
  if data[i] ~= d then table.insert(newData, id); table.insert(newData, d) end
  if not status[i] then table.insert(newStatus, id); table.insert(newStatus, s) end
  -- The events go first: a stream key of another type fails the first, before other writes.
  local typ = (not data[i] or not status[i]) and 'order.created' or (data[i] ~= d and 'order.updated')
  if typ then redis.call('XADD', KEYS[5], '*', 'type', typ, 'id', id, 'data', d, 'status', s) end
end
if #newData > 0 then redis.call('HSET', KEYS[1], unpack(newData)) end
if #newStatus > 0 then redis.call('HSET', KEYS[2], unpack(newStatus)) end
if #newData + #newStatus > 0 then bump(ARGV[1]) end
return (#newData + #newStatus) / 2
