-- Reads where the event log stands and a page of it, in one atomic step, so that Events'
-- check of the position (events.go) holds for the page it returns.
-- KEYS: events stream. ARGV: the position to read after ("": from the first), how many to read.
-- Returns {last-generated-id, max-deleted-entry-id, entries, 1 when the position is an entry
-- of the stream, else 0}: "0-0", "0-0", {}, 0 without a stream.
if redis.call('EXISTS', KEYS[1]) == 0 then return {'0-0', '0-0', {}, 0} end
local info, at = redis.call('XINFO', 'STREAM', KEYS[1]), {} -- WRONGTYPE for a key of another type
for i = 1, #info, 2 do at[info[i]] = info[i + 1] end
local start, entries, held = '-', {}, 0
if ARGV[1] ~= '' then
  start = '(' .. ARGV[1]
  if #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) > 0 then held = 1 end
end
if ARGV[2] ~= '0' then
  entries = redis.call('XRANGE', KEYS[1], start, '+', 'COUNT', ARGV[2])
end
return {at['last-generated-id'], at['max-deleted-entry-id'], entries, held}
