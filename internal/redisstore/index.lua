-- Put before import.lua and reindex.lua (scripts.go). putInStates puts each member of
-- of[state] in the set of that state (byStatus[state]) and out of the other two, with one call
-- per set, and returns how many entries it added or removed.
local function putInStates(byStatus, of)
  local moved = 0
  for state, key in pairs(byStatus) do
    local add, remove = {}, {}
    for other, members in pairs(of) do
      for _, member in ipairs(members) do
        if other == state then
          add[#add + 1] = 0
          add[#add + 1] = member
        else
          remove[#remove + 1] = member
        end
      end
    end
    if #add > 0 then
      moved = moved + redis.call('ZADD', key, unpack(add))
    end
    if #remove > 0 then
      moved = moved + redis.call('ZREM', key, unpack(remove))
    end
  end
  return moved
end
