-- Reads the index entries of one Find and the orders they name, in one atomic step: at most
-- ARGV[2] members after ARGV[1] of each index set (ZRANGEBYLEX … LIMIT), merged in id order
-- without repeats and cut to ARGV[2], then both halves of each order by HMGET. Never more than
-- that, however large the sets (docs/redis-layout.md says why the members sort as the ids do).
-- KEYS: data hash, status hash, then one or more index sets.
-- ARGV: the lower bound ("-", or "(" and the member of the id to start after), the limit.
-- Returns {members, data, statuses}, a false (nil) where a hash lacks the id.
local limit = tonumber(ARGV[2])
local members = {}
for i = 3, #KEYS do
  local part = redis.call('ZRANGEBYLEX', KEYS[i], ARGV[1], '+', 'LIMIT', 0, limit)
  for _, m in ipairs(part) do
    members[#members + 1] = m
  end
end
if #KEYS > 3 then
  table.sort(members)
  local merged = {}
  for _, m in ipairs(members) do
    if m ~= merged[#merged] and #merged < limit then
      merged[#merged + 1] = m
    end
  end
  members = merged
end
if #members == 0 then
  return {{}, {}, {}}
end
local ids = {}
for i, m in ipairs(members) do
  ids[i] = string.match(m, '^0*(%d+)$')
end
return {members, redis.call('HMGET', KEYS[1], unpack(ids)), redis.call('HMGET', KEYS[2], unpack(ids))}
