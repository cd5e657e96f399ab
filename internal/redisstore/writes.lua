-- Put before each script that writes several keys: Redis does not undo a script's writes when a
-- later command fails, so each reads what it writes first (WRONGTYPE for another type), and here
-- that INCR can count the version on; bump moves the version (counter, generation).
local function expectCounter(key)
  local n = redis.call('GET', key)
  if n and not string.match(n, '^%-?%d+$') then error({err = 'WRONGTYPE ' .. key .. ' holds ' .. n .. ', not an integer'}) end
end
local function bump(generation) redis.call('INCR', KEYS[3]); redis.call('SET', KEYS[4], generation) end
