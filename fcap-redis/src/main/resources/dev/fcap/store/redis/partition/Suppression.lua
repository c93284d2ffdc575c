-- SUPPRESSION (SuppressionList, RedisSuppressions): hasTime + 32 (RedisRequests.lua strips it) says
-- that the request ends with the message's scope: hasChannel:u8 len:u16 channel hasCategory:u8
-- len:u16 category, then where the recipient's entry would be: len:u16 bucket bit:u8 bit:u8
-- recipient (the rest), then the scope's length:u16. The bucket is a hash in the partition's slot
-- (docs/redis.md, "Suppression lists"); its first field, "", starts with a 256-bit filter, and the
-- recipient's field is read only where both the recipient's bits are set in it (a miss in a
-- listpack compares every field; the filter is found at once). The entry, the recipient's field:
-- varint(expiresAt, 0 never) zigzag-varint(addedAt) varint(n) (varint(len) channel)*n varint(m)
-- (varint(len) category)*m, then who added it and the reason, which only Java reads. An entry that
-- covers the message at the decision's time (its channel among the entry's, or the entry lists
-- none; the same for its category; before its expiry) turns a DECIDE into a CHECK, so nothing is
-- recorded, and the reply ends with the entry (the Java side refuses).
local suppressed = false
if scope then
  local hasch, chlen = unpack('>BI2', scope)
  local hascat, catlen = unpack('>BI2', scope, 4 + chlen)
  local at = 7 + chlen + catlen
  local klen = byte(scope, at) * 256 + byte(scope, at + 1)
  local bucket = sub(scope, at + 2, at + 1 + klen)
  local bit1, bit2 = byte(scope, at + 2 + klen, at + 3 + klen)
  local filter = redis.call('HGET', bucket, '')
  local e = false
  if filter and floor(byte(filter, floor(bit1 / 8) + 1) / 2 ^ (bit1 % 8)) % 2 == 1
      and floor(byte(filter, floor(bit2 / 8) + 1) / 2 ^ (bit2 % 8)) % 2 == 1 then
    e = redis.call('HGET', bucket, sub(scope, at + 4 + klen))
  end
  if e then
    local expires, mul, p, b = 0, 1, 1, 128
    while b > 127 do
      b = byte(e, p)
      expires, mul, p = expires + (b % 128) * mul, mul * 128, p + 1
    end
    b = 128
    while b > 127 do -- addedAt: skipped
      b = byte(e, p)
      p = p + 1
    end
    local channel = hasch == 1 and sub(scope, 4, 3 + chlen)
    local category = hascat == 1 and sub(scope, 7 + chlen, 6 + chlen + catlen)
    local covers = expires == 0 or now < expires
    -- the channels, then the categories: a count, then (len, bytes) each; varints below 2^14
    for pass = 1, 2 do
      local want = pass == 1 and channel or category
      local n = byte(e, p)
      if n > 127 then
        n, p = n - 128 + byte(e, p + 1) * 128, p + 1
      end
      p = p + 1
      local found = n == 0
      for _ = 1, n do
        local len = byte(e, p)
        if len > 127 then
          len, p = len - 128 + byte(e, p + 1) * 128, p + 1
        end
        found = found or (want and sub(e, p + 1, p + len) == want)
        p = p + 1 + len
      end
      covers = covers and found
    end
    if covers then
      suppressed = e
      stamping = false -- the reply ends with the entry, not an incarnation: nothing is recorded
      if op == 0 then
        op = 1
      end
    end
  end
end
