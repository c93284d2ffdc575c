-- WHERE THE VALUE LIVES. One string per partition (key), or, in the GROUPED LAYOUT, a field of a
-- hash shared by a group of partitions (RedisKeys: the group is a hash of the partition key), so a
-- small partition pays for no key, dict entry or expiry entry of its own (docs/redis.md, "Several
-- partitions per key"). A field has no TTL (Redis < 7.4): its value starts with expires:i4, the
-- Redis TIME second (from EPOCH_MS, rounded up) at which a key of its own would have expired, and
-- the hash's TTL covers its longest-lived field. That expiry only reclaims memory (a write deletes
-- the dead fields among two sampled): a value is read as it is, dead or not, as a key within its
-- TTL's slack is, since everything in it carries its own expiry in the decision's clock. Real time,
-- not the decision's: callers' clocks differ (caller times, replays), and one caller's future must
-- not delete what another's present still counts. The partition's other keys (entries hash,
-- large-log blocks) derive from NAME: the key, or in the grouped layout the group's key and the
-- field, length-prefixed, so that no two partitions' names meet.
local name = field and key .. '\0' .. pack('>I4', #field) .. field or key
if op == 4 then -- DELETE: the partition's value and its entries hash (both in the same slot)
  local existed
  if field then
    local v = redis.call('HGET', key, field)
    existed = v and redis.call('HDEL', key, field) == 1 and EPOCH_MS + unpack('>i4', v) * 1000 > realnow
  else
    existed = redis.call('DEL', key) == 1
  end
  existed = redis.call('DEL', name .. '\0M') == 1 or existed
  return pack('>B', existed and 1 or 0)
end
local ttlfloor = hastime == 2 and OWN_TIME_TTL_MS or 0
local value
if field then
  value = redis.call('HGET', key, field)
  value = value and sub(value, 5)
else
  value = redis.call('GET', key)
end
