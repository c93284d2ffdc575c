-- PartitionStep: evaluate every counter (or release), then record everywhere only if all admit
local used, retry = {}, {}
local admitted = true
local at = 0
for i, c in ipairs(counters) do
  local a = ALGORITHMS[c.alg]
  if larges[i] and op == 2 then
    large_release(larges[i], c.spec, now, eventtime, cost)
  elseif larges[i] then
    admitted = large_evaluate(larges[i], c.spec, now, cost, used, retry, at) and admitted
  elseif op == 2 then
    states[i] = a.release(states[i], c.spec, c.align, now, eventtime, cost)
  else
    admitted = a.evaluate(states[i], c.spec, c.align, now, cost, used, retry, at) and admitted
  end
  at = at + c.spec.checks
end
if admitted and op == 0 then
  for i, c in ipairs(counters) do
    if larges[i] then
      large_record(larges[i], c.spec, now, cost)
    else
      states[i] = ALGORITHMS[c.alg].record(states[i], c.spec, c.align, now, cost)
    end
  end
end

local function general_reply()
  local result = {}
  for i = 1, at do
    result[2 * i - 1] = used[i]
    result[2 * i] = retry[i] == NEVER and -1 or retry[i] - now
  end
  return pack('>i8B' .. string.rep('i8', 2 * at), now, admitted and 1 or 0, tunpack(result, 1, 2 * at))
end

if (op == 0 and admitted) or op == 2 then
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
    local e = expires and EPOCH_MS + to_seconds(expires) * 1000
    if L and expires and expires > now and e > now and first then
      local desc = large_descriptor(L)
      parts[#parts + 1] = varint(#c.id) .. c.id .. char(LARGE) .. pack('>i4', to_seconds(expires)) .. varint(#desc) .. desc
      maxexpires = math.max(maxexpires or e, e)
      large_flush(L, math.max(e - clocknow + TTL_SLACK_MS, ttlfloor))
    elseif expires and expires > now and e > now and first then
      parts[#parts + 1] = encode_counter(c.id, c.alg, expires, states[i])
      maxexpires = math.max(maxexpires or e, e)
    end
  end
  for _, s in ipairs(stored) do
    if s.alg == SPILLED and s.expiresms > now and mid then
      markerexp = math.max(markerexp or s.expiresms, s.expiresms) -- written again by entry_tail
    elseif s.expiresms > now and not OWN_ENTRY[s.alg] then
      local requested = false
      for _, c in ipairs(counters) do
        if c.alg == s.alg and c.id == s.id then
          requested = true
        end
      end
      if released_inline and s.alg == ENTRY and s.id == mid then
        requested = true -- released: it leaves the value
      end
      if not requested then
        parts[#parts + 1] = s.raw
        maxexpires = math.max(maxexpires or s.expiresms, s.expiresms)
        nin = nin + (s.alg == ENTRY and 1 or 0)
      end
    end
  end
  if entry_tail then
    reply = op == 0 and general_reply() or claim and pack('>i8B', now, 1) or false
    parts[#parts + 1] = entry_tail(reply)
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
    remember(reply) -- forgets the released id, or writes a claim into the hash, after the step's write
  end
  return pack('>i8B', now, admitted and 1 or 0)
end
reply = reply or general_reply()
if spill then
  remember(reply) -- the entry into the hash, after the value's SET
end
return suppressed and reply .. suppressed or stamping and reply .. incarnation or reply
