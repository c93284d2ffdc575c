-- ================================================================================================
-- FAST PATH
--
-- F holds the facts of counter i at F[(i - 1) * S + k]: 1 id  2 offset of its first check in req
-- 3 checks  4 true if an earlier counter of the request is the same counter  5 start of its state
-- in value (a log's gap form; false: none)  6 end of it  7 its expiry (ms)  13 its algorithm
-- (0 sliding log, 2 fixed window)  14 its align; and, after evaluation, for a log: 8 its longest
-- window  9 how many old entries a record keeps  10 where their gaps end  11 newest old entry
-- 12 true if a record can be written in gap form here; for a fixed window: 8 the window
-- 9 the count before this message  10 the start of its last message's window (false: none)
local fast = op <= 1 and cost == 1 and not booking -- a booking's rounds: the general path
local F, checks, maxexp = nil, 0, false
if fast then
  F = { false, false, false, false, false, false, false, false, false, false, false, false, false, false,
        false, false, false, false, false, false, false, false, false, false, false, false, false, false }
  for i = 1, n do
    local alg, nchecks, keylen, align, precision, p = unpack('>BBI2i8I4', req, pos)
    local periods = 0
    if alg == PERIODS then
      -- a calendar's periods: the fast path reads now's window alone, which is the first of them
      -- (now before align reads windows of its length, as FixedWindow does), and skips their ends
      if now >= align + unpack('>i8', req, p + keylen + 8) then
        fast = false
        break
      end
      alg, periods = FIXED, 1 + 8 * byte(req, p + keylen + CHECK_SIZE)
    end
    if (alg ~= 0 and (alg ~= FIXED or nchecks ~= 1)) or keylen >= 128 then
      fast = false
      break
    end
    local id = sub(req, p, p + keylen - 1)
    local b = (i - 1) * S
    F[b + 1], F[b + 2], F[b + 3], F[b + 4], F[b + 5] = id, p + keylen, nchecks, false, false
    F[b + 13], F[b + 14] = alg, align
    for j = 0, b - S, S do
      if F[j + 1] == id and F[j + 13] == alg then
        F[b + 4] = true
      end
    end
    checks = checks + nchecks
    pos = p + keylen + nchecks * CHECK_SIZE + periods
  end
end

-- the stored counters: varint(idLen) id kind:u8 expires:i32 varint(stateLen) state. Find the
-- requested logs; note where the other live counters are (K: start and end offsets, merged).
local K = nil
if fast and value then
  local p, len = 1, #value
  while p <= len do
    local start = p
    local idlen = byte(value, p)
    p = p + 1
    if idlen >= 128 then
      local scale, c = 128, 128
      idlen = idlen - 128
      repeat
        c = byte(value, p)
        p = p + 1
        idlen = idlen + (c % 128) * scale
        scale = scale * 128
      until c < 128
    end
    local id = sub(value, p, p + idlen - 1)
    local kind, seconds = unpack('>Bi4', value, p + idlen)
    p = p + idlen + 5
    local statelen = byte(value, p)
    p = p + 1
    if statelen >= 128 then
      local scale, c = 128, 128
      statelen = statelen - 128
      repeat
        c = byte(value, p)
        p = p + 1
        statelen = statelen + (c % 128) * scale
        scale = scale * 128
      until c < 128
    end
    local e = p + statelen - 1
    local expms = EPOCH_MS + seconds * 1000
    if kind == ENTRY and expms > now then
      nin = nin + 1
    elseif kind == SPILLED and expms > now and mid then
      markerexp = math.max(markerexp or expms, expms) -- written again by entry_tail
    end
    if expms > now and not OWN_ENTRY[kind] and not (kind == SPILLED and mid) then
      local requested = false
      if kind == GAPS or kind == 0 or kind == LARGE or kind == FIXED then
        local alg = kind == FIXED and FIXED or 0
        for b = 0, (n - 1) * S, S do
          if F[b + 1] == id and F[b + 13] == alg then
            requested = true
            F[b + 5], F[b + 6], F[b + 7] = p, e, expms
            if kind == 0 or kind == LARGE then
              fast = false -- a log in the canonical layout (costs above 1, long gaps), or large
            end
          end
        end
      end
      if not requested then
        if K and K[#K] == start - 1 then
          K[#K] = e
        else
          K = K or {}
          K[#K + 1], K[#K + 2] = start, e
        end
        if not maxexp or expms > maxexp then
          maxexp = expms
        end
      end
    end
    p = e + 1
  end
end

-- SlidingLog.evaluate, on the gap form. T[2i - 1]: the time of entry i (newest first), T[2i]:
-- the offset just after its gap. Results: out[2c - 1] used and out[2c] retry time of check c.
local out, allowed, T = nil, true, nil
if fast then
  out = { false, false, false, false, false, false, false, false }
  local at = 0
  for i = 1, n do
    if not fast then
      break -- the general path decides
    end
    local b = (i - 1) * S
    local a, m = F[b + 5], 0
    if F[b + 13] == FIXED then
      -- FixedWindow.evaluate: last:i64 count:u32; the count is the window's if its last message
      -- is in the window that holds now (x - (x - align) % window: the window's start, exact)
      local window, enforced, limit = unpack('>i8Bi8', req, F[b + 2] + 8) -- limit: the bound
      if enforced >= 2 then
        fast = false -- relaxed for this message (countOnly, override): the general path
      end
      local align, count, laststart = F[b + 14], 0, false
      local start = now - (now - align) % window
      if a then
        local l = unpack('>i8', value, a)
        if F[b + 6] - a ~= 11 or l >= start + window then
          fast = false -- a window booked after now's: the general path reads the windows one by one
        end
        if l >= start then
          count, laststart = unpack('>I4', value, a + 8), l - (l - align) % window
        end
      end
      local r = NEVER
      if count + 1 <= limit then
        r = now
      elseif limit >= 1 then
        r = laststart + window
      end
      at = at + 1
      out[2 * at - 1], out[2 * at] = count, r
      if enforced ~= 0 and r ~= now then
        allowed = false
      end
      F[b + 8], F[b + 9], F[b + 10] = window, count, laststart
    else
    if a then
      -- gap form: d:u32 (the newest entry is `expires - d` ms), then per older entry its gap to
      -- the previous one in 1 to 4 bytes, the top two bits of the first byte giving the length
      T = T or {}
      local e, q = F[b + 6], a + 4
      local t = F[b + 7] - unpack('>I4', value, a)
      T[1], T[2], m = t, q, 1
      if t > now then
        fast, e = false, q - 1 -- a message booked after now: the general path reads every window it ends
      end
      while q <= e do
        local b0 = byte(value, q)
        if b0 < 64 then
          t = t - b0
          q = q + 1
        elseif b0 < 128 then
          local b1 = byte(value, q + 1)
          t = t - ((b0 - 64) * 256 + b1)
          q = q + 2
        elseif b0 < 192 then
          local b1, b2 = byte(value, q + 1, q + 2)
          t = t - (((b0 - 128) * 256 + b1) * 256 + b2)
          q = q + 3
        else
          local b1, b2, b3 = byte(value, q + 1, q + 3)
          t = t - ((((b0 - 192) * 256 + b1) * 256 + b2) * 256 + b3)
          q = q + 4
        end
        m = m + 1
        T[2 * m - 1], T[2 * m] = t, q
      end
    end
    -- every cost is 1: used = entries in the window; when full, the check admits again once
    -- entry number `limit` (newest first) leaves the window (`limit`: the bound of this message)
    local shadow, maxlimit, maxwindow, inwindow, last = false, 0, 0, 0, -1
    local q = F[b + 2]
    for c = 1, F[b + 3] do
      local cap, window, enforced, limit = unpack('>i8i8Bi8', req, q) -- limit: the bound; cap sizes the log
      q = q + CHECK_SIZE
      if enforced >= 2 then
        fast = false -- relaxed for this message (countOnly, override): the general path keeps the window
      end
      if window < last then
        inwindow = 0 -- a shorter window than the previous check's: count again
      end
      last = window
      local horizon = now - window
      while inwindow < m and T[2 * inwindow + 1] > horizon do
        inwindow = inwindow + 1
      end
      local r = NEVER
      if inwindow < limit then
        r = now
      elseif limit >= 1 then
        r = T[2 * limit - 1] + window
      end
      at = at + 1
      out[2 * at - 1], out[2 * at] = inwindow, r
      if enforced == 0 then
        shadow = true
      elseif r ~= now then
        allowed = false
      end
      if cap > maxlimit then
        maxlimit = cap
      end
      if window > maxwindow then
        maxwindow = window
      end
    end
    -- SlidingLog.record then prune: the new entry, then the old entries inside the longest window,
    -- up to capacity - 1 of them (SlidingLog.capacity: a log with shadow checks keeps a margin)
    local capacity = shadow and math.max(2 * maxlimit, maxlimit + 64) or maxlimit
    if capacity > LARGE_FROM then
      fast = false -- a large log (block keys): the general path
    end
    local keep, horizon = 0, now - maxwindow
    while keep < m and keep < capacity - 1 and T[2 * keep + 1] > horizon do
      keep = keep + 1
    end
    F[b + 8], F[b + 9], F[b + 10], F[b + 11] = maxwindow, keep, keep > 0 and T[2 * keep], m > 0 and T[1]
    F[b + 12] = capacity >= 1 and maxwindow > 0 and maxwindow < 1e15
      and (m == 0 or (T[1] <= now and (keep == 0 or now - T[1] < GAP_LIMIT)))
    if op == 0 and not F[b + 12] then
      fast = false -- the general path records it (it would refuse the same way)
    end
    end
  end
end

local reply = false
if fast and op == 0 and allowed then
  -- the next value: each requested log with the new entry's gap in front of the kept entries'
  -- bytes, then the other live counters as they were
  local v = ''
  for i = 1, n do
    local b = (i - 1) * S
    if F[b + 4] then
      -- the same counter twice in one request: recorded once, as the general path writes it
    elseif F[b + 13] == FIXED then
      -- FixedWindow.record: the last message is now (the partition's time never runs back), and
      -- the counter expires when now's window ends
      local window, id = F[b + 8], F[b + 1]
      local last = F[b + 10] and math.max(now, unpack('>i8', value, F[b + 5])) or now
      local x = last - (last - F[b + 14]) % window + window - EPOCH_MS
      local r = x % 1000
      local s = (x - r) / 1000 + (r > 0 and 1 or 0)
      if s > 2147483647 or s <= (now - EPOCH_MS) / 1000 then
        fast = false
        break
      end
      v = v .. pack('>Bc0Bi4Bi8I4', #id, id, FIXED, s, 12, last, F[b + 9] + 1)
      local expms = EPOCH_MS + s * 1000
      if not maxexp or expms > maxexp then
        maxexp = expms
      end
    else
      local x = now + F[b + 8] - EPOCH_MS
      local r = x % 1000 -- exact: x is far below 2^42 (times below 2^53 us, windows checked)
      local s = (x - r) / 1000 + (r > 0 and 1 or 0) -- its expiry, seconds since 2020 rounded up
      local expms = EPOCH_MS + s * 1000
      local d, keep, id = expms - now, F[b + 9], F[b + 1]
      local g = keep > 0 and now - F[b + 11] or 0
      local glen = keep == 0 and 0 or g < 64 and 1 or g < 16384 and 2 or g < 4194304 and 3 or 4
      local tail = keep > 1 and sub(value, F[b + 5] + 4, F[b + 10] - 1) or ''
      local statelen = 4 + glen + #tail
      if s > 2147483647 or d >= D_LIMIT or statelen >= 16384 then
        fast = false
        break
      end
      -- framing, d and the new gap in one pack: gap 1 to 4 bytes, its length in its top two bits
      local gfmt = glen == 0 and '' or glen == 1 and 'B' or glen == 2 and 'I2' or glen == 3 and 'I3' or 'I4'
      local gv = glen == 1 and g or glen == 2 and 16384 + g or glen == 3 and 8388608 + g or 3221225472 + g
      local h
      if statelen < 128 then
        h = pack('>Bc0Bi4BI4' .. gfmt, #id, id, GAPS, s, statelen, d, gv)
      else
        h = pack('>Bc0Bi4BBI4' .. gfmt, #id, id, GAPS, s, statelen % 128 + 128, floor(statelen / 128), d, gv)
      end
      v = v .. h .. tail
      if not maxexp or expms > maxexp then
        maxexp = expms
      end
    end
  end
  if fast then
    if K then
      for j = 1, #K, 2 do
        v = v .. sub(value, K[j], K[j + 1])
      end
    end
    if entry_tail then
      -- the reply first: an inline entry of a message id keeps it
      for c = 1, checks do
        local r = out[2 * c]
        out[2 * c] = r == NEVER and -1 or r - now
      end
      reply = pack(checks == 4 and '>i8Bi8i8i8i8i8i8i8i8' or '>i8B' .. string.rep('i8', 2 * checks), now, 1,
        tunpack(out, 1, 2 * checks))
      v = v .. entry_tail(reply)
      local e = math.max(markerexp or 0, spill and 0 or midexp)
      maxexp = math.max(maxexp or e, e)
    end
    -- The TTL is counted in real time but the expiry in the decision's clock (Redis TIME, or a
    -- caller or injected clock that may lag real time): a second of slack keeps a key alive
    -- until its counters have expired in the decision clock; liveness is decided by 'expires'.
    -- With nothing live left, the key keeps the partition's time alone.
    local ttl = math.max(math.max(maxexp or clockexp, clockexp, incexp or clockexp) - clocknow + TTL_SLACK_MS, ttlfloor)
    if field then -- WHERE THE VALUE LIVES: a field expires when a key of its own would have
      hput(key, field, realnow + ttl, clockentry .. incentry .. v, ttl, realnow)
    else
      redis.call('SET', key, clockentry .. incentry .. v, 'PX', ttl)
    end
  end
end

if fast then
  if not reply then
    for c = 1, checks do
      local r = out[2 * c]
      out[2 * c] = r == NEVER and -1 or r - now
    end
    local format = checks == 4 and '>i8Bi8i8i8i8i8i8i8i8' or '>i8B' .. string.rep('i8', 2 * checks)
    reply = pack(format, now, allowed and 1 or 0, tunpack(out, 1, 2 * checks))
  end
  if spill then
    remember(reply) -- the entry into the hash, after the value's SET
  end
  return suppressed and reply .. suppressed or stamping and reply .. incarnation or reply
end
