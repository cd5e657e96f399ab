-- Where the log stands and a page of it, atomically, so that Events' check of the position holds
-- for the page. ARGV: position ("": none), count. Returns last-generated-id,
-- max-deleted-entry-id, 1 when the position is an entry (else 0), then five strings an entry.
if redis.call('EXISTS', KEYS[1]) == 0 then return {'0-0', '0-0', '0'} end
local info, at = redis.call('XINFO', 'STREAM', KEYS[1]), {} -- WRONGTYPE for a key of another type
for i = 1, #info, 2 do at[info[i]] = info[i + 1] end
local out, start = {at['last-generated-id'], at['max-deleted-entry-id'] or '', '0'}, '-'
if ARGV[1] ~= '' then
  start = '(' .. ARGV[1]
  if #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) > 0 then out[3] = '1' end
end
if ARGV[2] == '0' then return out end
for _, e in ipairs(redis.call('XRANGE', KEYS[1], start, '+', 'COUNT', ARGV[2])) do
  local f = {}
  for i = 1, #e[2], 2 do f[e[2][i]] = e[2][i + 1] end
  for _, v in ipairs({e[1], f.type or '', f.id or '', f.data or '', f.status or ''}) do out[#out + 1] = v end
end
return out
