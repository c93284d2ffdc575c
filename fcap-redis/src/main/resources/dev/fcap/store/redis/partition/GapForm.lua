-- ------------------------------------------------------------------------------------------------
-- the gap form of a sliding log <-> the canonical layout

-- string.byte and string.char pass bytes as results and arguments: far fewer than Lua's C stack
-- limit (8,000) per call
local GAP_BYTES_PER_CALL = 4096

-- the times (newest first) of a gap-form state expiring at expms; its gaps' bytes read in one call
local function gaps_decode(state, expms)
  local t = expms - unpack('>I4', state, 1)
  local times, m, nb = { t }, 1, #state - 4
  local b
  if nb <= GAP_BYTES_PER_CALL then
    b = { byte(state, 5, #state) }
  else
    b = {}
    for i = 1, nb do
      b[i] = byte(state, i + 4)
    end
  end
  local k = 1
  while k <= nb do
    local g = b[k]
    if g < 64 then
      k = k + 1
    elseif g < 128 then
      g, k = (g - 64) * 256 + b[k + 1], k + 2
    elseif g < 192 then
      g, k = ((g - 128) * 256 + b[k + 1]) * 256 + b[k + 2], k + 3
    else
      g, k = (((g - 192) * 256 + b[k + 1]) * 256 + b[k + 2]) * 256 + b[k + 3], k + 4
    end
    t = t - g
    m = m + 1
    times[m] = t
  end
  return times, m
end

-- the gap form of a state (bytes or decoded) expiring at second `seconds`, or nil if it cannot hold it
-- (a cost above 1, a gap of 2^30 ms or more, the newest entry not within 2^32 ms of the expiry)
local function gaps_encode(state, seconds)
  local times, costs, m = log_decode(state)
  if costs ~= ONES then
    for i = 1, m do
      if costs[i] ~= 1 then
        return nil
      end
    end
  end
  local d = EPOCH_MS + seconds * 1000 - times[1]
  if d < 0 or d >= D_LIMIT then
    return nil
  end
  local head = pack('>I4', d)
  if m == 1 then
    return head
  elseif type(state) == 'table' and state.gapform then
    return head .. sub(state.gapform, 5)
  elseif type(state) == 'table' and state.base then
    -- booked after every entry of a state read from the gap form (log_book): the new entry's gap,
    -- then the old bytes of the gaps between the entries it kept. A gap's length by its first
    -- byte's top two bits, written out here and below: a helper would be made on every call
    local base = state.base
    local old, bytes, cut = base.times, base.gapform, 0
    for i = m - 1, base.n - 1 do -- the gaps next to the entries its pruning dropped
      local g = old[i] - old[i + 1]
      cut = cut + (g < 64 and 1 or g < 16384 and 2 or g < 4194304 and 3 or 4)
    end
    local g = times[1] - times[2]
    if g >= GAP_LIMIT then
      return nil
    end
    local gap = g < 64 and char(g) or g < 16384 and pack('>I2', 16384 + g)
        or g < 4194304 and pack('>I3', 8388608 + g) or pack('>I4', 3221225472 + g)
    return head .. gap .. sub(bytes, 5, #bytes - cut)
  end
  -- the gaps' bytes as numbers, made into strings in blocks: one string, not one per entry. The
  -- table is made at its largest size (4 bytes a gap) by one constructor: unpack pads with nils.
  -- Bytes by remainders, not math.floor: a function call an entry.
  local out, k = 4 * m <= UNPACK_MAX and { tunpack(ONES, 1, 4 * m - 4) } or {}, 0
  for i = 2, m do
    local g = times[i - 1] - times[i]
    if g >= GAP_LIMIT then
      return nil
    elseif g < 64 then
      k = k + 1
      out[k] = g
    else
      local len = g < 16384 and 2 or g < 4194304 and 3 or 4
      g = g + (len == 2 and 16384 or len == 3 and 8388608 or 3221225472)
      for j = k + len, k + 1, -1 do
        local b = g % 256
        out[j], g = b, (g - b) / 256
      end
      k = k + len
    end
  end
  if k <= GAP_BYTES_PER_CALL then
    return head .. char(tunpack(out, 1, k))
  end
  local parts = { head }
  for from = 1, k, GAP_BYTES_PER_CALL do
    parts[#parts + 1] = char(tunpack(out, from, math.min(k, from + GAP_BYTES_PER_CALL - 1)))
  end
  return table.concat(parts)
end
