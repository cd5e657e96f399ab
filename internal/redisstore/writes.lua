-- Put before each script that writes several keys (client.go): Redis does not undo a script's
-- writes when a later command fails, so it checks the keys another writer could have got wrong
-- first, failing with WRONGTYPE (a corrupt record) before its first write, not between two.
local function expectType(key, kind)
  local t = redis.call('TYPE', key).ok
  if t ~= kind and t ~= 'none' then
    error({err = 'WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. kind})
  end
end
-- expectCounter checks that INCR can count key on: missing, or a decimal integer.
local function expectCounter(key)
  local n = redis.call('GET', key)
  if n and not string.match(n, '^%-?%d+$') then
    error({err = 'WRONGTYPE ' .. key .. ' holds ' .. n .. ', not an integer'})
  end
end
