-- Reads where the event log stands and a page of it, in one atomic step, so that Events'
-- check of the position (events.go) holds for the page it returns.
-- KEYS: events stream.
-- ARGV: XRANGE's start ("-", or "(" and the position to read after), how many to read (0: none),
-- and a position to confirm ("" for none).
-- Returns {last-generated-id, max-deleted-entry-id, entries, 1 when the position to confirm is
-- an entry of the stream, else 0}: "0-0", "0-0", {}, 0 without a stream.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {'0-0', '0-0', {}, 0}
end
local info = redis.call('XINFO', 'STREAM', KEYS[1]) -- WRONGTYPE for a key of another type
local at = {}
for i = 1, #info, 2 do
  at[info[i]] = info[i + 1]
end
local entries = {}
if ARGV[2] ~= '0' then
  entries = redis.call('XRANGE', KEYS[1], ARGV[1], '+', 'COUNT', ARGV[2])
end
local held = 0
if ARGV[3] ~= '' and #redis.call('XRANGE', KEYS[1], ARGV[3], ARGV[3]) > 0 then
  held = 1
end
return {at['last-generated-id'], at['max-deleted-entry-id'], entries, held}
