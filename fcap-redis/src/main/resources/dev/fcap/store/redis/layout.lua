-- fcap layout check (RedisStore.checkLayout): the layout a key prefix's state is stored in.
-- KEYS[1]  the prefix's layout marker, held only by grouped state; ARGV[1] the starting store's
--          layout: "keys" (a key per partition, the default) or "groups=N"
-- reply    the layout held: the marker's, else "keys"; a grouped store finding no marker sets it
--          (without a TTL) and answers its own
local held = redis.call('GET', KEYS[1])
if not held and ARGV[1] ~= 'keys' then
  redis.call('SET', KEYS[1], ARGV[1])
  held = ARGV[1]
end
return { held or 'keys' }
