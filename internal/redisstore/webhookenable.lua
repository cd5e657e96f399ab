-- Makes a failing or disabled webhook endpoint active again (Webhooks.Enable). KEYS: the
-- endpoint's hash. ARGV: the position checked, the new one. Returns 1, -1 when there is no
-- such endpoint, 0 when it is active, -2 when its position is no longer ARGV[1].
local h = redis.call('HMGET', KEYS[1], 'status', 'position')
if not h[1] then
  return -1
end
if h[1] == 'active' then
  return 0
end
if h[2] ~= ARGV[1] then
  return -2
end
redis.call('HSET', KEYS[1], 'status', 'active', 'position', ARGV[2], 'attempts', 0,
  'first_failure', 0, 'next_attempt', 0, 'last_error', '')
return 1
