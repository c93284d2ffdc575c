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
--
-- CLEAR. Reading an existing bucket costs a few dependent memory reads (about 1 us of Redis CPU,
-- docs/benchmarks.md, "Suppression lists"), while the partition's value is read anyway. So a
-- write of the value whose decision found no live entry for the recipient marks its time entry
-- CLEAR instead of CLOCK (PartitionTime.lua), later writes keep the mark, and a value so marked
-- says the recipient has no entry: the bucket is not read. Only a PUT can add an entry, and the
-- PUT (suppression.lua) turns the mark back to CLOCK in the same step, in the same slot. A mark
-- that is lost (the value expired, a write without a scope on a value never marked) costs one
-- read of the bucket, never a decision.
local suppressed = false
local clear = value and byte(value, 1) == 0 and byte(value, 2) == CLEAR
if scope and not clear then -- the scope's bytes from req[scope] on (RedisRequests.lua)
  local hasch, chlen = unpack('>BI2', req, scope)
  local hascat, catlen = unpack('>BI2', req, scope + 3 + chlen)
  local at = scope + 6 + chlen + catlen
  local klen = byte(req, at) * 256 + byte(req, at + 1)
  local bucket = sub(req, at + 2, at + 1 + klen)
  local bit1, bit2 = byte(req, at + 2 + klen, at + 3 + klen)
  local filter = redis.call('HGET', bucket, '')
  local e = false
  if filter and floor(byte(filter, floor(bit1 / 8) + 1) / 2 ^ (bit1 % 8)) % 2 == 1
      and floor(byte(filter, floor(bit2 / 8) + 1) / 2 ^ (bit2 % 8)) % 2 == 1 then
    e = redis.call('HGET', bucket, sub(req, at + 4 + klen, #req - 2))
  end
  clear = not e
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
    local channel = hasch == 1 and sub(req, scope + 3, scope + 2 + chlen)
    local category = hascat == 1 and sub(req, scope + 6 + chlen, scope + 5 + chlen + catlen)
    local covers = expires == 0 or now < expires
    clear = not covers -- expired: only a PUT brings an entry back
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
