-- SUPPRESSION (SuppressionList, RedisSuppressions): hasTime + 32 (RedisRequests.lua strips it) says
-- that the request ends with the message's scope: hasChannel:u8 len:u16 channel hasCategory:u8
-- len:u16 category, then the scope's length:u16. The recipient's entry, if any, is the string at
-- NAME .. "\0S" (NAME: RedisKeys.lua's, so the same slot): expiresAt:i64 (-1 never) addedAt:i64
-- n:u8 (len:u16 channel)*n m:u8 (len:u16 category)*m, then who added it and the reason, which
-- only Java reads. An entry that covers the message at the decision's time (its channel among the
-- entry's, or the entry lists none; the same for its category; before its expiry) turns a DECIDE
-- into a CHECK, so nothing is recorded, and the reply ends with the entry (the Java side refuses).
local suppressed = false
if scope then
  local e = redis.call('GET', (field and key .. '\0' .. pack('>I4', #field) .. field or key) .. '\0S')
  if e then
    local expires, _, nch, p = unpack('>i8i8B', e)
    local hasch, chlen = unpack('>BI2', scope)
    local channel = hasch == 1 and sub(scope, 4, 3 + chlen)
    local covers = expires == -1 or now < expires
    local found = nch == 0
    for _ = 1, nch do
      local len = byte(e, p) * 256 + byte(e, p + 1)
      found = found or (channel and sub(e, p + 2, p + 1 + len) == channel)
      p = p + 2 + len
    end
    covers = covers and found
    local ncat = byte(e, p)
    p = p + 1
    local hascat, catlen = unpack('>BI2', scope, 4 + chlen)
    local category = hascat == 1 and sub(scope, 7 + chlen, 6 + chlen + catlen)
    found = ncat == 0
    for _ = 1, ncat do
      local len = byte(e, p) * 256 + byte(e, p + 1)
      found = found or (category and sub(e, p + 2, p + 1 + len) == category)
      p = p + 2 + len
    end
    if covers and found then
      suppressed = e
      stamping = false -- the reply ends with the entry, not an incarnation: nothing is recorded
      if op == 0 then
        op = 1
      end
    end
  end
end
