-- A field whose value starts with its expiry (expires:i4, seconds from EPOCH_MS) into a hash whose
-- TTL covers its longest-lived field: a grouped partition's value (WHERE THE VALUE LIVES), or an
-- entry of the entries hash (below). PEXPIRE GT lengthens an existing hash's TTL, NX gives a new
-- hash its own; each write into an existing hash also deletes the fields dead at 'at' among two
-- sampled, so dead fields stay about as many as live ones at most (they only cost memory: an
-- expired entry is never read as live, and a grouped value is read as it is, dead or not).
-- (Function literals are made on every call: this one only where needed.)
local hput = (field or mid) and function(hash, f, expiresms, v, ttl, at)
  local x = expiresms - EPOCH_MS
  local r = x % 1000
  redis.call('HSET', hash, f, pack('>i4', (x - r) / 1000 + (r > 0 and 1 or 0)) .. v)
  if redis.call('PEXPIRE', hash, ttl, 'GT') == 0 and redis.call('PEXPIRE', hash, ttl, 'NX') == 1 then
    return -- a new hash: nothing else in it
  end
  local sample = redis.call('HRANDFIELD', hash, 2, 'WITHVALUES')
  for i = 1, #sample, 2 do
    if EPOCH_MS + unpack('>i4', sample[i + 1]) * 1000 <= at then
      redis.call('HDEL', hash, sample[i])
    end
  end
end

-- Where entries live: INLINE in the value, as entries of kind ENTRY (id mid, expiry, state), while
-- the value holds fewer than INLINE_MAX of them: most partitions (a recipient's) then cost what they
-- did when all entries were inline (no second key, no second call). Beyond that (a partition shared
-- by many recipients: a [channel] rule), in the ENTRIES HASH, and the value carries a SPILLED marker
-- (empty id and state) whose expiry covers every hashed entry: a lookup that misses inline asks the
-- hash only while the marker lives.
local ENTRY, SPILLED, INLINE_MAX = 126, 121, 4
local remember, entry_tail, released_inline, midexp = false, false, false, 0
local nin, markerexp, spill = 0, false, false
if mid then
  local entries = name .. '\0M'
  local x = now + midttl - EPOCH_MS
  local r = x % 1000
  local midsec = (x - r) / 1000 + (r > 0 and 1 or 0)
  if claim then -- a claim lives as long as its decision may be released
    x = eventtime + midttl - EPOCH_MS
    r = x % 1000
    midsec = (x - r) / 1000 + (r > 0 and 1 or 0)
  end
  midexp = EPOCH_MS + midsec * 1000
  -- a decision writing its own release record (midtimeonly) has a fresh random key: nothing to look
  -- up (its release, the same key on a RELEASE, does look it up)
  local found, spilled = false, false
  if value and op <= 2 and not (op == 0 and midtimeonly) then
    local p, len = 1, #value
    while p <= len do
      local idlen, c, scale = 0, 128, 1
      while c >= 128 do
        c = byte(value, p)
        p = p + 1
        idlen = idlen + (c % 128) * scale
        scale = scale * 128
      end
      local id = sub(value, p, p + idlen - 1)
      local kind, seconds = unpack('>Bi4', value, p + idlen)
      p = p + idlen + 5
      local statelen
      statelen, c, scale = 0, 128, 1
      while c >= 128 do
        c = byte(value, p)
        p = p + 1
        statelen = statelen + (c % 128) * scale
        scale = scale * 128
      end
      local live = EPOCH_MS + seconds * 1000 > now
      if live and kind == ENTRY and id == mid then
        found, released_inline = sub(value, p, p + statelen - 1), op == 2
        break
      elseif live and kind == SPILLED then
        spilled = true
      end
      p = p + statelen
    end
  end
  if not found and spilled then
    local h = redis.call('HGET', entries, mid)
    if h and EPOCH_MS + unpack('>i4', h) * 1000 > now then
      found = sub(h, 5)
    end
  end
  if found and op ~= 2 then
    return suppressed and { found, 1, suppressed } or { found, 1 } -- a suppressed replay: refused
  elseif found and claim then
    return pack('>i8B', now, 0) -- claimed before
  elseif found then
    eventtime = unpack('>i8', found) -- undo at the time remembered, whoever asks
  elseif op == 2 and not (claim and incarnation == incwant and now < eventtime + midttl) then
    return pack('>i8B', now, 0) -- nothing remembered; a claim: another incarnation, or past its horizon
  end
  -- RELEASE: called after the step's write, forgets a hashed entry (an inline one left the value
  -- with that write). DECIDE: called with the reply of an admitted decision whose entry spills,
  -- after its SET; hput keeps the hash's TTL and sweeps its expired entries (in the decision's clock:
  -- an entry's expiry is its own horizon, not a TTL's).
  remember = function(reply)
    if op == 2 and not claim then
      if not released_inline then
        redis.call('HDEL', entries, mid)
      end
      return
    end
    hput(entries, mid, midexp, (midtimeonly and sub(reply, 1, 8) or reply) .. midtail,
      math.max(midexp - clocknow + TTL_SLACK_MS, ttlfloor), now)
  end
  -- what an admitted DECIDE with an id appends to the value it writes (the fast and the general path
  -- alike): its entry inline while fewer than INLINE_MAX are, else the SPILLED marker (its entry goes to
  -- the hash); and a live marker, always last, its expiry the latest of its hashed entries
  entry_tail = function(reply)
    local t = ''
    if op == 0 or claim then
      if nin < INLINE_MAX then
        local state = (midtimeonly and sub(reply, 1, 8) or reply) .. midtail
        local len = #state
        t = char(16) .. mid .. char(ENTRY) .. pack('>i4', (midexp - EPOCH_MS) / 1000)
          .. (len < 128 and char(len) or char(len % 128 + 128, floor(len / 128))) .. state
      else
        spill = true
        markerexp = math.max(markerexp or midexp, midexp)
      end
    end
    if markerexp then
      t = t .. pack('>BBi4B', 0, SPILLED, (markerexp - EPOCH_MS) / 1000, 0)
    end
    return t
  end
end
