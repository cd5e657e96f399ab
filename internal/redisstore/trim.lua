-- Drops the events older than ARGV[1] ms by Redis's clock, then all but the newest ARGV[2]
-- (ARGV[3] is one more; 0 is off). XTRIM does not move max-deleted-entry-id (Redis 7.0), so
-- XSETID sets it to the newest dropped, before which Events refuses positions.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local info, at = redis.call('XINFO', 'STREAM', KEYS[1]), {} -- WRONGTYPE before any write
for i = 1, #info, 2 do at[info[i]] = info[i + 1] end
local dropped, newest = 0, nil
if ARGV[1] ~= '0' then
  local now = redis.call('TIME')
  local cut = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) - tonumber(ARGV[1])
  -- Only when the oldest is older: XREVRANGE from before every entry walks the stream (7.0).
  if at['first-entry'] and tonumber(string.match(at['first-entry'][1], '^%d+')) < cut then
    local minid = string.format('%d-0', cut)
    newest = redis.call('XREVRANGE', KEYS[1], '(' .. minid, '-', 'COUNT', 1)[1][1]
    dropped = redis.call('XTRIM', KEYS[1], 'MINID', '=', minid)
  end
end
-- Trimmed to one more than it keeps, the stream's first entry is the newest to drop.
if ARGV[2] ~= '0' and redis.call('XLEN', KEYS[1]) > tonumber(ARGV[2]) then
  dropped = dropped + redis.call('XTRIM', KEYS[1], 'MAXLEN', '=', ARGV[3])
  newest = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)[1][1]
  dropped = dropped + redis.call('XTRIM', KEYS[1], 'MAXLEN', '=', ARGV[2])
end
local function padded(id) -- stream ids as strings: a Lua number cannot hold 64 bits
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return string.rep('0', 20 - #ms) .. ms .. '-' .. string.rep('0', 20 - #seq) .. seq
end
if newest and padded(newest) > padded(at['max-deleted-entry-id']) then
  redis.call('XSETID', KEYS[1], at['last-generated-id'], 'MAXDELETEDID', newest)
end
return dropped
