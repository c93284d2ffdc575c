-- fcap suppression entries (RedisSuppressions): put, read or remove one entry of a suppression list,
-- or list or count the buckets of some hash tags.
-- KEYS[1]  a bucket: the hash of a tenant's entries in the recipients' slot (docs/redis.md,
--          "Suppression lists"); field the recipient, value the entry; the field "" holds the
--          earliest expiry among the bucket's entries, if any expires
-- ARGV[1]  "put": ARGV[2] the recipient, ARGV[3] the entry, ARGV[4] its expiry (epoch ms, "-1"
--            never), ARGV[5] now (epoch ms); the bucket is swept first if its earliest expiry has
--            passed; reply { 1 }
--          "get", "del": ARGV[2] the recipient; reply { entry } or { } (del: the entry it removed)
--          "list", "count": ARGV[2] the tail of the buckets' keys (':' tenant), then per tag walked
--            its head (prefix '{' tag '}' 'S') and a range of subs [from, to): bucket sub of a tag is
--            head .. sub .. tail, all on this master (one slot on a cluster; KEYS[1] is the first);
--            reply per bucket, in order, its HGETALL (list), or { entries } over all of them (count;
--            the field "" is not an entry)
local op, k = ARGV[1], KEYS[1]
local byte = string.byte

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
  local now, expires = tonumber(ARGV[5]), tonumber(ARGV[4])
  local stored = redis.call('HGET', k, '')
  stored = stored and tonumber(stored)
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
    if not first then
      redis.call('HDEL', k, '')
      stored = nil
    end
  end
  redis.call('HSET', k, ARGV[2], ARGV[3])
  if expires ~= -1 and (not first or expires < first) then
    first = expires
  end
  if first and first ~= stored then
    redis.call('HSET', k, '', string.format('%.0f', first))
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
    redis.call('HDEL', k, '') -- only the earliest expiry was left
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
