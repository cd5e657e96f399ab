-- Put before import.lua and reindex.lua (scripts.go). putInStates puts the members of
-- add[state] (ZADD's arguments: '0', member, ...) in the set of that state (byStatus[state]),
-- and each member of moved[state] out of the other two, with one call per set, and returns
-- how many entries it added or removed. An order that was in neither hash can be in no set by
-- the layout, so import.lua leaves it out of moved: a removal is a lookup in a set of millions.
-- The scripts count with locals: #t costs a search of the table each time.
local function putInStates(byStatus, add, moved)
  local n = 0
  for state, key in pairs(byStatus) do
    if #add[state] > 0 then
      n = n + redis.call('ZADD', key, unpack(add[state]))
    end
    local remove, k = {}, 0
    for other, members in pairs(moved) do
      if other ~= state then
        for j = 1, #members do
          k = k + 1
          remove[k] = members[j]
        end
      end
    end
    if k > 0 then
      n = n + redis.call('ZREM', key, unpack(remove))
    end
  end
  return n
end
