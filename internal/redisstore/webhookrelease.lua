-- Gives a webhook endpoint's lease up if its owner is ARGV[1]. KEYS: the lease.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
end
return 1
