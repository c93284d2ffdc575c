-- PartitionStep: evaluate every counter (or release), then record everywhere only if all admit
local used, retry = {}, {}
local admitted = true
local at = 0
for i, c in ipairs(counters) do
  local a = ALGORITHMS[c.alg]
  if larges[i] and op == 2 then
    LL.release(larges[i], c.spec, now, eventtime, cost)
  elseif larges[i] then
    admitted = LL.evaluate(larges[i], c.spec, now, cost, used, retry, at) and admitted
  elseif op == 2 then
    states[i] = a.release(states[i], c.spec, c.align, now, eventtime, cost)
  else
    admitted = a.evaluate(states[i], c.spec, c.align, now, cost, used, retry, at) and admitted
  end
  c.at, at = at, at + c.spec.checks -- c.at: where its checks' results start (a booking reads them)
end
-- BOOKINGS (PartitionStep.book): a deferred DECIDE that its counters refuse now, or that a shut send
-- window refuses now, is recorded at the earliest instant every counter admits it, within its spans
-- and notAfter; the counters are asked in turn for their first admitting instant from the instant
-- reached so far, until each in a row admits it (bounded as PartitionStep's steps)
local MAX_BOOKING_ROUNDS = 4096
local MAX_BOOKINGS = 256 -- PartitionStep.MAX_BOOKINGS: a counter holding this many books no more

local function first_open(x)
  if x > booking.notafter then
    return false
  end
  local o = booking.open
  if not o then
    return x
  end
  for k = 1, #o, 2 do
    if x <= o[k + 1] then
      local t = math.max(x, o[k])
      return t <= booking.notafter and t
    end
  end
  return false
end

local bookedat = false
if booking and op == 0 and (not admitted or not booking.admitsnow) then
  admitted = false
  -- PartitionStep.bookingTime, a block rather than a function called once (see PartitionRecord.lua)
  repeat
    local full = false
    for i, c in ipairs(counters) do
      local a = ALGORITHMS[c.alg]
      if larges[i] or not a.bookings or a.bookings(states[i], c.spec, c.align, now) >= MAX_BOOKINGS then
        full = true -- a large log books nothing (the engine refuses such a deferral), nor a counter full of bookings
      end
    end
    local x, agreed, nc = not full and first_open(now), 0, #counters
    if not x or nc == 0 then
      bookedat = x -- the send windows alone
      break
    end
    for step = 0, MAX_BOOKING_ROUNDS * nc - 1 do -- the counters in turn
      local i = step % nc + 1
      local c = counters[i]
      -- the evaluation's retries: each check's first admitting instant from now
      local y = ALGORITHMS[c.alg].admits_from(states[i], c.spec, c.align, x, cost, retry, c.at)
      if y == NEVER then
        break
      elseif y == x then
        agreed = agreed + 1
      else
        x = first_open(y) -- past notAfter: false
        agreed = x == y and 1 or 0
      end
      if not x then
        break
      elseif agreed == nc then
        bookedat = x
        break
      end
    end
  until true
  if bookedat then
    for i, c in ipairs(counters) do
      states[i] = ALGORITHMS[c.alg].book(states[i], c.spec, c.align, now, bookedat, cost)
    end
  end
end
if admitted and op == 0 then
  for i, c in ipairs(counters) do
    if larges[i] then
      LL.record(larges[i], c.spec, now, cost)
    else
      states[i] = ALGORITHMS[c.alg].record(states[i], c.spec, c.align, now, cost)
    end
  end
end

-- the reply: retries from now; a booking's ends with its instant
local function general_reply()
  local result = {}
  for i = 1, at do
    result[2 * i - 1] = used[i]
    result[2 * i] = retry[i] == NEVER and -1 or retry[i] - now
  end
  if bookedat then
    result[2 * at + 1] = bookedat
    return pack('>i8B' .. string.rep('i8', 2 * at + 1), now, 2, tunpack(result, 1, 2 * at + 1))
  end
  return pack('>i8B' .. string.rep('i8', 2 * at), now, admitted and 1 or 0, tunpack(result, 1, 2 * at))
end

-- what a message id remembers of a booking (PartitionStep.remember): decided at its instant, every
-- retry from there, so that a retry answers the booking and a release undoes the entry at it
local function booked_memory()
  local result = {}
  for i = 1, at do
    result[2 * i - 1] = used[i]
    result[2 * i] = retry[i] == NEVER and -1 or math.max(0, retry[i] - bookedat)
  end
  return pack('>i8B' .. string.rep('i8', 2 * at), bookedat, 2, tunpack(result, 1, 2 * at))
end

local function ceil_second(ms) -- an expiry: ms rounded up to Redis' second, as the entries keep it
  return EPOCH_MS + to_seconds(ms) * 1000
end

local memory = false -- what a message id keeps: the reply, or a booking's memory
if bookedat then
  -- its id and its incarnation live for as long as the booking may be released: from its instant
  midexp = mid and ceil_second(bookedat + midttl) or midexp
  if stamping then
    incexp = math.max(incexp, ceil_second(bookedat + incttl))
    incentry = pack('>BBi4B', 0, INCARNATION, (incexp - EPOCH_MS) / 1000, 8) .. incarnation
  end
end

if (op == 0 and (admitted or bookedat)) or op == 2 then
  -- the next value: the requested counters with their new states, then the other live counters
  local parts, maxexpires = {}, nil
  for i, c in ipairs(counters) do
    local expires = states[i] and ALGORITHMS[c.alg].expires(states[i], c.spec, c.align)
    local first = true
    for j = 1, i - 1 do
      if counters[j].id == c.id and counters[j].alg == c.alg then
        first = false
      end
    end
    -- the expiry is kept in i32 seconds since 2020, clamped (as in MemoryStore): a counter whose
    -- clamped expiry has passed (times after 2088) could never be read back, so it is not written
    local L = larges[i]
    if L then
      expires = L.tail > L.head and L.newest + c.spec.maxwindow or nil
    end
    local seconds = expires and to_seconds(expires)
    local e = expires and EPOCH_MS + seconds * 1000
    if expires and expires > now and e > now and first then
      if L then
        parts[#parts + 1] = encode_counter(c.id, LARGE, seconds, LL.descriptor(L))
        LL.flush(L, math.max(e - clocknow + TTL_SLACK_MS, ttlfloor))
      else
        parts[#parts + 1] = encode_counter(c.id, c.alg, seconds, states[i])
      end
      maxexpires = math.max(maxexpires or e, e)
    end
  end
  for k = 1, #kept, 2 do -- the other live counters, as they are (the value read in one pass, PartitionRecord.lua)
    parts[#parts + 1] = sub(value, kept[k], kept[k + 1])
  end
  maxexpires = keptexp and math.max(maxexpires or keptexp, keptexp) or maxexpires
  nin, markerexp = keptids, keptmarker
  if entry_tail then
    memory = op == 0 and (bookedat and booked_memory() or general_reply()) or claim and pack('>i8B', now, 1) or false
    parts[#parts + 1] = entry_tail(memory)
    local e = math.max(markerexp or 0, (spill or not (op == 0 or claim)) and 0 or midexp)
    if e > 0 then
      maxexpires = math.max(maxexpires or e, e)
    end
  end
  -- the partition's time first; with nothing live left, it alone
  local ttl = math.max(math.max(maxexpires or clockexp, clockexp, incexp or clockexp) - clocknow + TTL_SLACK_MS, ttlfloor)
  if field then -- WHERE THE VALUE LIVES: a field expires when a key of its own would have
    hput(key, field, realnow + ttl, clockentry .. incentry .. table.concat(parts), ttl, realnow)
  else
    redis.call('SET', key, clockentry .. incentry .. table.concat(parts), 'PX', ttl)
  end
end

-- reply: as the fast path's; a release has no per-check results (PartitionStep reports zeros)
if op == 2 then
  if remember and (spill or not claim) then
    remember(memory) -- forgets the released id, or writes a claim into the hash, after the step's write
  end
  return pack('>i8B', now, admitted and 1 or 0)
end
reply = op == 0 and not bookedat and memory or general_reply() -- an admission's memory is its reply
if spill then
  remember(memory) -- the entry into the hash, after the value's SET
end
return suppressed and reply .. suppressed or stamping and reply .. incarnation or reply
