-- fcap store identity (RedisStore.checkIdentity): the mark that tells a Redis that lost its data.
-- KEYS[1]  an identity key of the prefix (one per master in a cluster)
-- ARGV[1]  a fresh identity: random hex '@' epoch milliseconds of its creation
-- reply    the identity held; a missing one is set to ARGV[1] (without a TTL) and answered
local held = redis.call('GET', KEYS[1])
if not held then
  redis.call('SET', KEYS[1], ARGV[1])
  held = ARGV[1]
end
return { held }
