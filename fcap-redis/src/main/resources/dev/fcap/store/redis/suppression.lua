-- fcap suppression entry (RedisSuppressions): put, read or remove one entry of a suppression list.
-- KEYS[1]  the entry's key: the recipient partition's name then "\0S", in the partition's slot
--          (partition.lua reads it in the decision's step: Suppression.lua)
-- ARGV[1]  "put", "get" or "del"; for "put" ARGV[2] the entry (docs/redis.md, "Suppression lists")
--          and ARGV[3] its expiry (epoch ms) or "-1": the key then has no TTL
-- reply    put: { 1 }; get: { entry } or { }; del: { existed }
local op = ARGV[1]
if op == 'put' then
  redis.call('SET', KEYS[1], ARGV[2])
  if ARGV[3] ~= '-1' then
    redis.call('PEXPIREAT', KEYS[1], ARGV[3])
  end
  return { 1 }
elseif op == 'get' then
  local v = redis.call('GET', KEYS[1])
  return v and { v } or {}
end
return { redis.call('DEL', KEYS[1]) }
