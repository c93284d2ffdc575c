-- GroupedKeysCost: what a decision does to a recipient's own key, without the decision's logic:
-- read the value, write it back 4 bytes longer or shorter (an admission grows a log, pruning
-- shrinks it, so the value is reallocated every time) with the key's TTL.
-- KEYS[1] the recipient's key; ARGV[1] the value's base length, ARGV[2] the TTL (ms)
local v = redis.call('GET', KEYS[1])
local base = tonumber(ARGV[1])
if #v < base + 4 then v = v .. 'abcd' else v = string.sub(v, 1, base) end
redis.call('SET', KEYS[1], v, 'PX', ARGV[2])
return 1
