-- Put before each script that writes several keys (client.go): Redis does not undo a script's
-- writes when a later command fails, so each reads the keys it writes before its first write
-- (a read fails on a key of another type by itself), and checks here that INCR can count the
-- version on: missing, or a decimal integer. Either fails with WRONGTYPE (a corrupt record).
local function expectCounter(key)
  local n = redis.call('GET', key)
  if n and not string.match(n, '^%-?%d+$') then error({err = 'WRONGTYPE ' .. key .. ' holds ' .. n .. ', not an integer'}) end
end
