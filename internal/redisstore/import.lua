-- Loads orders without undoing what happened to them: the data of an order is replaced when it
-- differs, its status is set only if the order is new (a cancel must survive a re-import), and
-- a new order enters the indexes (docs/redis-layout.md) in the same step, so that a Find sees it as soon
-- as a List does; an order already there is put where its status says, as reindex.lua does
-- (moves not counted). Each order it creates or whose data it changes has its event in the log
-- (events.go): order.created for an order that was not whole, order.updated for new data; a
-- status alone never changes, so never makes one. Running it twice changes nothing, not even
-- the version, and records nothing.
-- It makes one call per key for all its orders, not one per order: the calls are most of the
-- cost (an import of a million orders made five million). The ids of one run are distinct.
-- KEYS: data hash, status hash, version counter, generation, ids, by-status:pending,
-- by-status:shipped, by-status:cancelled, events stream.
-- ARGV: a new generation (set with the change), then id, member, data, status, id, ...
local byStatus = {pending = KEYS[6], shipped = KEYS[7], cancelled = KEYS[8]}
expectType(KEYS[2], 'hash')
expectType(KEYS[9], 'stream')
for i = 5, 8 do
  expectType(KEYS[i], 'zset')
end
expectCounter(KEYS[3])
local n = (#ARGV - 1) / 4
if n < 1 then
  return 0
end
local ids = {}
for i = 1, n do
  ids[i] = ARGV[4 * i - 2]
end
local data = redis.call('HMGET', KEYS[1], unpack(ids))
local status = redis.call('HMGET', KEYS[2], unpack(ids))
-- The writes, as HSET and ZADD arguments: field, value, ... and score, member, ...
local newData, newStatus, inIDs, events = {}, {}, {}, {}
local of = {pending = {}, shipped = {}, cancelled = {}} -- each state's members
local changed = 0
for i = 1, n do
  local id, member, d, s = ARGV[4 * i - 2], ARGV[4 * i - 1], ARGV[4 * i], ARGV[4 * i + 1]
  local kind -- of the order's event, if it has one
  if not data[i] or not status[i] then
    kind = 'order.created'
  elseif data[i] ~= d then
    kind = 'order.updated'
  end
  if data[i] ~= d then
    newData[#newData + 1] = id
    newData[#newData + 1] = d
    changed = changed + 1
  end
  if not status[i] then
    newStatus[#newStatus + 1] = id
    newStatus[#newStatus + 1] = s
    if not of[s] then -- no state: an error before the first write
      error('order ' .. id .. ': status ' .. s .. ' is not a state')
    end
    status[i] = s
    changed = changed + 1
  end
  -- An order whose status another writer left as no state is not served (a corrupt record);
  -- its event would be unreadable too, and stop every reader of the log at it.
  if kind and of[status[i]] then
    events[#events + 1] = {kind, id, d, status[i]}
  end
  -- Each order whose status is a state goes where reindex.lua would put it, so that Reindex
  -- after an import has only the orders the file did not hold (Orders.ImportBatches).
  local list = of[status[i]]
  if list then
    inIDs[#inIDs + 1] = 0
    inIDs[#inIDs + 1] = member
    list[#list + 1] = member
  end
end
for _, e in ipairs(events) do
  redis.call('XADD', KEYS[9], '*', 'type', e[1], 'id', e[2], 'data', e[3], 'status', e[4])
end
if #newData > 0 then
  redis.call('HSET', KEYS[1], unpack(newData))
end
if #newStatus > 0 then
  redis.call('HSET', KEYS[2], unpack(newStatus))
end
if #inIDs > 0 then
  redis.call('ZADD', KEYS[5], unpack(inIDs))
end
putInStates(byStatus, of)
if changed > 0 then
  redis.call('INCR', KEYS[3])
  redis.call('SET', KEYS[4], ARGV[1])
end
return changed
