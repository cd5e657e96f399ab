-- Revokes the key named ARGV[1], else, when ARGV[2] is 1 (it looks like a shown prefix), the
-- first by name whose record has that prefix, passing over records that do not decode: a bad
-- record another writer left never stops the revoke of a good key. KEYS: by-name hash,
-- by-hash hash, version counter, generation. ARGV: name or prefix, 1 or 0, a new generation
-- (set with the change). Returns the revoked record, or false, writing nothing, for none.
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
redis.call('INCR', KEYS[3])
redis.call('SET', KEYS[4], ARGV[3])
return record
