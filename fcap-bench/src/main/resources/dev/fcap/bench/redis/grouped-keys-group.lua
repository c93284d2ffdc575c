-- GroupedKeysCost: the same access as grouped-keys-string.lua, to a recipient's field of a hash
-- that holds a group of recipients; the group's TTL is pushed out by every write (a field has no
-- TTL of its own before Redis 7.4). With ARGV[4] = '1' it also reads a random member with its
-- value, as a sweep of expired members would on every write (deleting none: all are live here).
-- KEYS[1] the group's key; ARGV[1] the recipient's field, ARGV[2] the value's base length,
-- ARGV[3] the TTL (ms), ARGV[4] '1' to sweep, '0' not
local v = redis.call('HGET', KEYS[1], ARGV[1])
local base = tonumber(ARGV[2])
if #v < base + 4 then v = v .. 'abcd' else v = string.sub(v, 1, base) end
redis.call('HSET', KEYS[1], ARGV[1], v)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
if ARGV[4] == '1' then
  redis.call('HRANDFIELD', KEYS[1], 1, 'WITHVALUES')
end
return 1
