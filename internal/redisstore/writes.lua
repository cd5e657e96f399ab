-- Put before each script that writes more than one key (scripts.go). Redis does not undo a
-- script's writes when a later command of it fails, so such a script first checks the keys
-- whose form another writer could have got wrong, and fails before its first write, not
-- between two: a change is written whole, with its new version, or not at all. The error is
-- a WRONGTYPE reply, which the service reports as a corrupt record (errors.go).
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
