-- Revokes the key named ARGV[1], else (ARGV[2] 1) the first by name with that prefix, passing
-- over records another writer left that do not decode. KEYS: as addkey.lua. ARGV[3]: a new
-- generation. Returns the revoked record, or false for none.
local name, hash = ARGV[1], redis.call('HGET', KEYS[1], ARGV[1])
if not hash and ARGV[2] == '1' then
  local all, first = redis.call('HGETALL', KEYS[2]), nil
  for i = 1, #all, 2 do
    local ok, k = pcall(cjson.decode, all[i + 1])
    if ok and type(k) == 'table' and k.prefix == ARGV[1] and type(k.name) == 'string' then
      if not first or k.name < first then first, hash = k.name, all[i] end
    end
  end
  name = first
end
local record = hash and redis.call('HGET', KEYS[2], hash)
if not record or redis.call('HGET', KEYS[1], name) ~= hash then return false end
expectCounter(KEYS[3])
redis.call('HDEL', KEYS[1], name)
redis.call('HDEL', KEYS[2], hash)
bump(ARGV[3])
return record
