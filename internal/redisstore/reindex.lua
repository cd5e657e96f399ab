-- Puts orders where the indexes (docs/redis-layout.md) say they belong: each id whose status is one of
-- the three states is in the ids set and in the set of its state only. It reads the status in
-- the same step, so a cancel before or after it is never undone. No order changes, but what
-- v1's list and the finds read does when an entry is added or moved (an order that was in no
-- index appears), so then it moves the version, as a change does. It makes one call per key
-- for all its ids, as import.lua does.
-- KEYS: status hash, ids, by-status:pending, by-status:shipped, by-status:cancelled, version
-- counter, generation.
-- ARGV: a new generation (set when an entry moved), then id, member, id, member, ...
-- Returns how many index entries it added or removed.
local byStatus = {pending = KEYS[3], shipped = KEYS[4], cancelled = KEYS[5]}
for i = 2, 5 do
  expectType(KEYS[i], 'zset')
end
expectCounter(KEYS[6])
local n = (#ARGV - 1) / 2
if n < 1 then
  return 0
end
local ids = {}
for i = 1, n do
  ids[i] = ARGV[2 * i]
end
local status = redis.call('HMGET', KEYS[1], unpack(ids))
local all, k = {}, 0 -- ZADD arguments: '0', member, ...
local add = {pending = {}, shipped = {}, cancelled = {}} -- the same, each state's set's
local moved = {pending = {}, shipped = {}, cancelled = {}} -- each state's members
for i = 1, n do
  local list = status[i] and add[status[i]]
  if list then
    local member = ARGV[2 * i + 1]
    k = k + 2
    all[k - 1], all[k] = '0', member
    list[#list + 1], list[#list + 2] = '0', member
    local m = moved[status[i]]
    m[#m + 1] = member
  end
end
if k == 0 then
  return 0
end
local moves = redis.call('ZADD', KEYS[2], unpack(all)) + putInStates(byStatus, add, moved)
if moves > 0 then
  redis.call('INCR', KEYS[6])
  redis.call('SET', KEYS[7], ARGV[1])
end
return moves
