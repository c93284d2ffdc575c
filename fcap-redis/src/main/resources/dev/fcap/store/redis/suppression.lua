-- fcap suppression entries (RedisSuppressions): put, read or remove one entry of a suppression list,
-- or list or count the buckets of some hash tags.
-- KEYS[1]  a bucket: the hash of a tenant's entries in the recipients' slot (docs/redis.md,
--          "Suppression lists"); field the recipient, value the entry; the field "", the bucket's
--          first, holds a 256-bit filter of its recipients (two bits each), then the earliest
--          expiry among its entries (decimal epoch ms), if any expires
-- ARGV[1]  "put": ARGV[2] the recipient, ARGV[3] the entry, ARGV[4] its expiry (epoch ms, "-1"
--            never), ARGV[5] now (epoch ms), ARGV[6] the recipient's two bits (u8 each); the
--            bucket is swept first if its earliest expiry has passed; ARGV[7] the key of the
--            recipient's partition and, in the grouped layout, ARGV[8] its field there (same slot):
--            its value's time entry loses the mark CLEAR (partition/Suppression.lua), which says the
--            recipient has no entry and spares decisions the bucket; reply { 1 }
--          "get", "del": ARGV[2] the recipient; reply { entry } or { } (del: the entry it removed)
--          "list", "count": ARGV[2] the tail of the buckets' keys (':' tenant), then per tag walked
--            its head (prefix '{' tag '}' 'S') and a range of subs [from, to): bucket sub of a tag is
--            head .. sub .. tail, all on this master (one slot on a cluster; KEYS[1] is the first);
--            reply per bucket, in order, its HGETALL (list), or { entries } over all of them (count;
--            the field "" is not an entry)
local op, k = ARGV[1], KEYS[1]
local byte = string.byte
local CLOCK, CLEAR = 120, 119 -- the kinds of a partition's time entry (partition/PartitionTime.lua)

-- the expiry an entry starts with: varint, 0 never
local function expiry(v)
  local x, mul, p = 0, 1, 1
  repeat
    local b = byte(v, p)
    x = x + (b % 128) * mul
    mul, p = mul * 128, p + 1
  until b < 128
  return x
end

if op == 'put' then
  local now, expires, bits = tonumber(ARGV[5]), tonumber(ARGV[4]), ARGV[6]
  local head = redis.call('HGET', k, '')
  local filter = head and string.sub(head, 1, 32) or string.rep('\0', 32)
  local stored = head and #head > 32 and tonumber(string.sub(head, 33)) or nil
  local first = stored
  if first and first <= now then -- sweep: drop what has expired, keep the next expiry
    first = nil
    local all = redis.call('HGETALL', k)
    for i = 1, #all, 2 do
      if all[i] ~= '' then
        local e = expiry(all[i + 1])
        if e ~= 0 and e <= now then
          redis.call('HDEL', k, all[i])
        elseif e ~= 0 and (not first or e < first) then
          first = e
        end
      end
    end
  end
  for i = 1, 2 do -- the recipient's two bits in the filter
    local bit = byte(bits, i)
    local at, mask = math.floor(bit / 8) + 1, 2 ^ (bit % 8)
    local b = byte(filter, at)
    if math.floor(b / mask) % 2 == 0 then
      filter = string.sub(filter, 1, at - 1) .. string.char(b + mask) .. string.sub(filter, at + 1)
    end
  end
  if expires ~= -1 and (not first or expires < first) then
    first = expires
  end
  local written = filter .. (first and string.format('%.0f', first) or '')
  if written ~= head then -- before the entry: a new bucket's first field, searched first
    redis.call('HSET', k, '', written)
  end
  redis.call('HSET', k, ARGV[2], ARGV[3])
  local partition, field = ARGV[7], ARGV[8]
  if field then -- the field's value starts with expires:i4
    local v = redis.call('HGET', partition, field)
    if v and byte(v, 5) == 0 and byte(v, 6) == CLEAR then
      redis.call('HSET', partition, field, string.sub(v, 1, 5) .. string.char(CLOCK) .. string.sub(v, 7))
    end
  else
    local v = redis.call('GETRANGE', partition, 0, 1)
    if byte(v, 1) == 0 and byte(v, 2) == CLEAR then
      redis.call('SETRANGE', partition, 1, string.char(CLOCK)) -- keeps the key's TTL
    end
  end
  return { 1 }
elseif op == 'get' then
  local v = redis.call('HGET', k, ARGV[2])
  return v and { v } or {}
elseif op == 'del' then
  local v = redis.call('HGET', k, ARGV[2])
  if not v then
    return {}
  end
  redis.call('HDEL', k, ARGV[2])
  if redis.call('HLEN', k) == 1 then
    redis.call('DEL', k) -- only the filter was left
  end
  return { v }
elseif op == 'list' then
  local tail, out = ARGV[2], {}
  for i = 3, #ARGV, 3 do
    for sub = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]) - 1 do
      out[#out + 1] = redis.call('HGETALL', ARGV[i] .. sub .. tail)
    end
  end
  return out
end
local tail, n = ARGV[2], 0
for i = 3, #ARGV, 3 do
  for sub = tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2]) - 1 do
    local b = ARGV[i] .. sub .. tail
    local len = redis.call('HLEN', b)
    if len > 0 and redis.call('HEXISTS', b, '') == 1 then
      len = len - 1
    end
    n = n + len
  end
end
return { n }
