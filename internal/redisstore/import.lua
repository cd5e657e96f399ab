-- Loads orders without undoing what happened to them: the data of an order is replaced when it
-- differs, its status is set only if the order is new (a cancel must survive a re-import), and
-- a new order enters the indexes (docs/redis-layout.md) in the same step, so that a Find sees it as soon
-- as a List does; an order already there is put where its status says, as reindex.lua does
-- (moves not counted). Each order it creates or whose data it changes has its event in the log
-- (events.go): order.created for an order that was not whole, order.updated for new data; a
-- status alone never changes, so never makes one. Running it twice changes nothing, not even
-- the version, and records nothing. An order whose stored status is no state (a corrupt
-- record) makes the whole run fail, writing nothing, as a key of another type does.
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
for i = 1, n do -- every check before the first write
  if data[i] == '' then data[i] = false end -- an empty half is a missing one (docs/redis-layout.md)
  if status[i] == '' then status[i] = false end
  -- A status another writer left as no state is a corrupt record (docs/redis-layout.md): new
  -- data for it would be a change without its event (which could not be decoded either).
  if status[i] and not byStatus[status[i]] then
    error({err = 'WRONGTYPE order ' .. ARGV[4 * i - 2] .. ': ' .. KEYS[2] .. ' holds "' .. status[i] ..
      '", not pending, shipped or cancelled: repair it, then import again'})
  end
  if not status[i] and not byStatus[ARGV[4 * i + 1]] then
    error('order ' .. ARGV[4 * i - 2] .. ': status ' .. ARGV[4 * i + 1] .. ' is not a state')
  end
end
-- The writes, as HSET and ZADD arguments: field, value, ... and '0', member, ...
local newData, newStatus, inIDs, nd, ns, ni = {}, {}, {}, 0, 0, 0
local add = {pending = {}, shipped = {}, cancelled = {}} -- each state's set's
local added = {pending = 0, shipped = 0, cancelled = 0}
local moved = {pending = {}, shipped = {}, cancelled = {}} -- the members of orders already there
local changed = 0
for i = 1, n do
  local id, member, d = ARGV[4 * i - 2], ARGV[4 * i - 1], ARGV[4 * i]
  local had, s = data[i], status[i]
  if had ~= d then
    nd = nd + 2
    newData[nd - 1], newData[nd] = id, d
    changed = changed + 1
  end
  if not s then
    s = ARGV[4 * i + 1]
    ns = ns + 2
    newStatus[ns - 1], newStatus[ns] = id, s
    changed = changed + 1
  end
  -- s is a state (checked above). The events go first: the other writes follow the loop.
  local list = add[s]
  if not had or not status[i] then
    redis.call('XADD', KEYS[9], '*', 'type', 'order.created', 'id', id, 'data', d, 'status', s)
  elseif had ~= d then
    redis.call('XADD', KEYS[9], '*', 'type', 'order.updated', 'id', id, 'data', d, 'status', s)
  end
  -- Where reindex.lua would put it, so that Reindex after an import has only the orders
  -- the file did not hold (Orders.ImportBatches).
  ni = ni + 2
  inIDs[ni - 1], inIDs[ni] = '0', member
  local k = added[s] + 2
  added[s] = k
  list[k - 1], list[k] = '0', member
  if had or status[i] then
    local m = moved[s]
    m[#m + 1] = member
  end
end
if nd > 0 then
  redis.call('HSET', KEYS[1], unpack(newData))
end
if ns > 0 then
  redis.call('HSET', KEYS[2], unpack(newStatus))
end
-- An entry added or moved changes what v1's list and the finds read (an order that was in no
-- index appears), so it moves the version as a change does; a run that finds the indexes
-- right, as a second one does, moves nothing.
local indexed = 0
if ni > 0 then
  indexed = redis.call('ZADD', KEYS[5], unpack(inIDs))
end
indexed = indexed + putInStates(byStatus, add, moved)
if changed > 0 or indexed > 0 then
  redis.call('INCR', KEYS[3])
  redis.call('SET', KEYS[4], ARGV[1])
end
return changed
