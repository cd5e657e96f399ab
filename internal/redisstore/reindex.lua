-- Puts orders where the indexes (index.go) say they belong: each id whose status is one of
-- the three states is in the ids set and in the set of its state only. It reads the status in
-- the same step, so a cancel before or after it is never undone. Orders do not change, so
-- neither does the version.
-- KEYS: status hash, ids, by-status:pending, by-status:shipped, by-status:cancelled.
-- ARGV: id, member, id, member, ...
-- Returns how many index entries it added or removed.
local byStatus = {pending = KEYS[3], shipped = KEYS[4], cancelled = KEYS[5]}
for i = 2, 5 do
  expectType(KEYS[i], 'zset')
end
local moved = 0
for i = 1, #ARGV, 2 do
  local id, member = ARGV[i], ARGV[i + 1]
  local status = redis.call('HGET', KEYS[1], id)
  if status and byStatus[status] then
    moved = moved + redis.call('ZADD', KEYS[2], 0, member)
    for state, key in pairs(byStatus) do
      if state == status then
        moved = moved + redis.call('ZADD', key, 0, member)
      else
        moved = moved + redis.call('ZREM', key, member)
      end
    end
  end
end
return moved
