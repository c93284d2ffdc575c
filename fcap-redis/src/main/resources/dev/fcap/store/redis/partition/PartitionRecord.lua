-- ------------------------------------------------------------------------------------------------
-- The request and the partition value parsed, before any algorithm's functions are made: only those
-- the step needs are (Redis makes every function literal of the chunk on every call, each costing
-- about what a small table does)

-- The request's counters, then a deferral's booking. Here, and the value below, in blocks of the
-- chunk rather than functions called once: a function literal costs Redis, on every call, a walk of
-- the chunk's open upvalues for each local it captures, and these would capture many.
local counters = {}
do
  local NONE, p = {}, 29
  for i = 1, n do
    local alg, checks, keylen, align, precision
    alg, checks, keylen, align, precision, p = unpack('>BBI2i8I4', req, p)
    local id = sub(req, p, p + keylen - 1)
    p = p + keylen
    -- each table made at its size: filled one by one, it grows twice for two checks (most counters
    -- have one or two: a constructor of that size; else { tunpack(NONE, 1, checks) })
    local limits, windows, bounds, enforced, refuses
    if checks <= 2 then
      limits, windows, bounds, enforced, refuses = { false, false }, { false, false }, { false, false },
          { false, false }, { false, false }
    else
      limits, windows, bounds = { tunpack(NONE, 1, checks) }, { tunpack(NONE, 1, checks) }, { tunpack(NONE, 1, checks) }
      enforced, refuses = { tunpack(NONE, 1, checks) }, { tunpack(NONE, 1, checks) }
    end
    local keepall, maxlimit, maxwindow = false, 0, 0
    for c = 1, checks do
      local limit, window, mode, bound
      limit, window, mode, bound, p = unpack('>i8i8Bi8', req, p)
      -- mode: bit 0 the rule's mode (what the counter keeps), bit 1 relaxed for this message
      -- (countOnly, override): the check never refuses it, and a record keeps the whole window
      limits[c], windows[c], enforced[c], bounds[c], refuses[c] = limit, window, mode % 2 == 1, bound, mode == 1
      keepall = keepall or mode >= 2
      maxlimit = limit > maxlimit and limit or maxlimit
      maxwindow = window > maxwindow and window or maxwindow
    end
    -- the counter and its spec in one table (c.spec is c): a table less per counter
    local spec = { checks = checks, precision = precision, limits = limits, bounds = bounds, windows = windows,
                   enforced = enforced, refuses = refuses, keepall = keepall, maxlimit = maxlimit, maxwindow = maxwindow,
                   periods = false, id = id, alg = alg, align = align, spec = false }
    spec.spec = spec
    if alg == PERIODS then -- the ends of a calendar's periods, in ms after align
      local count = byte(req, p)
      local ends = { tunpack(NONE, 1, count) }
      p = p + 1
      for e = 1, count do
        ends[e], p = unpack('>i8', req, p)
      end
      spec.alg, spec.periods = FIXED, ends
    end
    counters[i] = spec
  end
  if booking then -- Booking: notAfter, whether the decision's time may take it, the open spans
    local notafter, flags, spans
    notafter, flags, spans, p = unpack('>i8BI2', req, p)
    booking = { notafter = notafter, admitsnow = flags % 2 == 1, open = false }
    if flags >= 2 then
      booking.open = {}
      for k = 1, 2 * spans do
        booking.open[k], p = unpack('>i8', req, p)
      end
    end
  end
end

-- The value in one pass, after the request: the live entry of each requested counter (same id and
-- algorithm) as a table, found[i]; and the other live counters, which the step leaves as they are,
-- as runs of adjacent bytes to copy (kept: from, to, ...), with their latest expiry (keptexp), the
-- remembered ids among them (keptids) and the expiry of a SPILLED marker (keptmarker: the message id's
-- entry_tail writes it again). No table for those: a table each cost about half a microsecond, and
-- a partition holds a counter per content it has seen. READ (all) gets a table for every live
-- counter (stored).
local stored, found, kept, keptexp, keptids, keptmarker = {}, {}, {}, false, 0, false
do
  local all = op == 3
  local p, len, runto, nc = 1, value and #value or 0, false, #counters
  -- the requested ids by length and last byte: a stored counter that matches none is copied
  -- without its id cut out (a string made per counter, which a partition holds one of per content)
  local tails = {}
  for i = 1, nc do
    local id = counters[i].id
    tails[#id * 256 + byte(id, #id)] = true
  end
  while p <= len do
    local start = p
    local idlen = byte(value, p)
    if idlen < 128 then
      p = p + 1
    else
      idlen, p = readvarint(value, p)
    end
    -- kind:u8 expires:i32 and the first byte of the state's length, in one call
    local q = p + idlen
    local kind, e1, e2, e3, e4, statelen = byte(value, q, q + 5)
    local expms = EPOCH_MS + ((e1 >= 128 and e1 - 256 or e1) * 16777216 + e2 * 65536 + e3 * 256 + e4) * 1000
    q = q + 6
    if statelen >= 128 then
      statelen, q = readvarint(value, q - 1)
    end
    local to = q + statelen - 1
    if expms > now then
      local alg = (kind == LARGE or kind == GAPS) and 0 or kind
      local id = (all or tails[idlen * 256 + byte(value, p + idlen - 1)] or (released_inline and alg == ENTRY))
          and sub(value, p, p + idlen - 1)
      local requested = false
      if id then
        for i = 1, nc do
          local c = counters[i]
          if c.alg == alg and c.id == id then
            requested, found[i] = true, true
          end
        end
      end
      if requested or all then
        -- where its state lies (sfrom, to): cut out only if read (state_of); a large log's is its
        -- descriptor, a gap-form log's is decoded when read
        local s = { id = id, alg = alg, expiresms = expms, sfrom = q, to = to, large = kind == LARGE,
                    gaps = kind == GAPS, state = kind == LARGE and sub(value, q, to) or nil }
        for i = 1, nc do
          if found[i] == true then
            found[i] = s
          end
        end
        if all then
          stored[#stored + 1] = s
        end
      elseif alg == SPILLED and mid then
        keptmarker = math.max(keptmarker or expms, expms)
      elseif not OWN_ENTRY[alg] and not (released_inline and alg == ENTRY and id == mid) then -- released: it goes
        if runto and start == runto + 1 then
          kept[#kept] = to
        else
          kept[#kept + 1], kept[#kept + 2] = start, to
        end
        runto = to
        keptexp = (keptexp or 0) > expms and keptexp or expms
        keptids = keptids + (alg == ENTRY and 1 or 0)
      end
    end
    p = to + 1
  end
end

-- what the step needs made: the algorithms it names, and the large logs' functions if one of its
-- logs is stored in blocks or may hold more than LARGE_FROM entries (a shadow check keeps up to
-- twice its limit: SlidingLog.capacity)
local needs, needslarge = {}, false
for i, c in ipairs(counters) do
  needs[c.alg] = true
  if c.alg == 0 and ((found[i] and found[i].large) or c.spec.maxlimit > LARGE_FROM / 2) then
    needslarge = true
  end
end
