-- ------------------------------------------------------------------------------------------------
-- large sliding logs (fcap-core's LargeLog): a log whose capacity is above LARGE_FROM entries is not
-- kept in the partition value, which every write rewrites whole (O(limit) per decision), but in
-- block keys of the same slot, read and written a block at a time. The counter's state in the value
-- is a descriptor:
--   head:i64 tail:i64 total:i64 newest:i64 nh:u8 hint:i64{nh}
-- entries [head, tail) (absolute indices, oldest first) each time:i64 before:i64 (the cost of all
-- entries before it, so `total - before` is the cost from it to the newest), entry i at offset
-- (i % BLOCK) * 16 of key KEYS[1] .. "\0L" .. varint(#id) .. id .. block:i8 (block = i // BLOCK).
-- hints: where each check's window started on the last call, so a search gallops from there.
-- A block key lives as long as the log's newest entry matters (its TTL is set on every write), so a
-- block that expired holds only entries older than every window: read as time "-infinity".
-- Loaded (LL, below) only for a step with a large log, as the sliding counter is
local load_large_log = needslarge and function()
  local BLOCK = 256              -- entries per block key (4 KiB)
  local OLD = -9007199254740991  -- the time of an entry whose block expired
  local DEL_PER_CALL = 8         -- blocks the head passed that one call deletes (the rest expire)

  local function large_open(id, desc)
    local L = { prefix = name .. '\0L' .. varint(#id) .. id, blocks = {}, dirty = {}, hints = {} }
    if desc then
      local nh, p
      L.head, L.tail, L.total, L.newest, nh, p = unpack('>i8i8i8i8B', desc)
      for k = 1, nh do
        L.hints[k], p = unpack('>i8', desc, p)
      end
    else
      L.head, L.tail, L.total, L.newest = 0, 0, 0, OLD
    end
    return L
  end

  local function large_block(L, b)
    local s = L.blocks[b]
    if not s then
      s = redis.call('GET', L.prefix .. pack('>i8', b)) or ''
      L.blocks[b] = s
    end
    return s
  end

  -- time and `before` of entry i (OLD, nil if its block expired)
  local function large_entry(L, i)
    local b = floordiv(i, BLOCK)
    local s = large_block(L, b)
    local off = (i - b * BLOCK) * 16 + 1
    if #s < off + 15 then
      return OLD, nil
    end
    return unpack('>i8i8', s, off)
  end

  local function large_time(L, i)
    local t = large_entry(L, i)
    return t
  end

  local function large_before(L, j)
    if j == L.tail then
      return L.total
    end
    local _, before = large_entry(L, j)
    return before
  end

  local function large_put(L, i, t, before)
    local b = floordiv(i, BLOCK)
    local s = large_block(L, b)
    local off = (i - b * BLOCK) * 16
    if #s < off then
      s = s .. string.rep('\0', off - #s)
    end
    L.blocks[b] = sub(s, 1, off) .. pack('>i8i8', t, before) .. sub(s, off + 17)
    L.dirty[b] = true
  end

  -- the first index j in [lo, hi] with pred(j) true (pred is monotone: false then true), galloping
  -- from `hint` when it is inside (usually the answer itself, or a step from it: one or two probes)
  local function large_search(lo, hi, hint, pred)
    if hint and hint >= lo and hint < hi then
      local step = 1
      if pred(hint) then
        hi = hint
        while true do
          local q = hi - step
          if q < lo then
            break
          end
          if pred(q) then
            hi, step = q, step * 2
          else
            lo = q + 1
            break
          end
        end
      else
        lo = hint + 1
        while true do
          local q = lo + step - 1
          if q >= hi then
            break
          end
          if pred(q) then
            hi = q
            break
          end
          lo, step = q + 1, step * 2
        end
      end
    end
    while lo < hi do
      local mid = floor((lo + hi) / 2)
      if pred(mid) then
        hi = mid
      else
        lo = mid + 1
      end
    end
    return lo
  end

  -- the first index in [head, tail) whose time is after t (tail if none)
  local function large_after(L, t, hint)
    return large_search(L.head, L.tail, hint, function(i)
      return i == L.tail or large_time(L, i) > t
    end)
  end

  -- the first index i >= from whose cost through it reaches `target`, i.e. before(i + 1) >= target;
  -- searched from `from` on (the answer is usually there or a few entries on)
  local function large_reach(L, from, target)
    local j = large_search(from + 1, L.tail, from + 1, function(j)
      return large_before(L, j) >= target
    end)
    return j - 1
  end

  local function large_evaluate(L, spec, now, cost, used, retry, at)
    local admitted = true
    for c = 1, spec.checks do
      local limit, window = spec.bounds[c], spec.windows[c] -- the bound: the limit less the headroom
      local from = large_after(L, now - window, L.hints[c])
      L.hints[c] = from
      local before = large_before(L, from)
      local sum = L.total - before
      used[at + c] = sum
      local r
      if sum + cost <= limit then
        r = now
      elseif cost > limit then
        r = NEVER
      else
        -- the first entry of the window whose ageing out (with all before it) lets the message fit
        r = large_time(L, large_reach(L, from, before + sum + cost - limit)) + window
      end
      retry[at + c] = r
      if r ~= now and spec.refuses[c] then
        admitted = false
      end
    end
    return admitted
  end

  -- drops what no check can read: older than the longest window, or beyond the capacity
  local function large_prune(L, spec, now)
    local byTime = large_after(L, now - spec.maxwindow, L.head)
    local head = byTime
    if byTime < L.tail then
      head = spec.keepall and byTime or large_reach(L, byTime, L.total - log_capacity(spec) + 1)
      if head < byTime then
        head = byTime
      end
    end
    if head > L.head then
      local first, last = floordiv(L.head, BLOCK), floordiv(head, BLOCK) - 1
      for b = math.max(first, last - DEL_PER_CALL + 1), last do
        redis.call('DEL', L.prefix .. pack('>i8', b))
        L.blocks[b], L.dirty[b] = '', nil
      end
      L.head = head
    end
    if L.head == L.tail then
      L.head, L.tail, L.total, L.newest, L.hints = 0, 0, 0, OLD, {}
    end
  end

  -- moves entries [from, tail) by `by` slots (1 or -1), adding `delta` to their `before`: all are read
  -- first, then each block they land in is rebuilt with one concatenation (O(k) for k entries, about
  -- 0.2 us each, instead of a 4 KiB block copy per entry)
  local function large_shift(L, from, by, delta)
    local ts, bs, m = {}, {}, 0
    for i = from, L.tail - 1 do
      local t, before = large_entry(L, i)
      m = m + 1
      ts[m], bs[m] = t, (before or 0) + delta
    end
    local i, k = from + by, 1
    while k <= m do
      local b = floordiv(i, BLOCK)
      local s = large_block(L, b)
      local off = (i - b * BLOCK) * 16
      local count = math.min(m - k + 1, (b + 1) * BLOCK - i)
      local parts = {}
      for x = 0, count - 1 do
        parts[x + 1] = pack('>i8i8', ts[k + x], bs[k + x])
      end
      if #s < off then
        s = s .. string.rep('\0', off - #s)
      end
      L.blocks[b] = sub(s, 1, off) .. table.concat(parts) .. sub(s, off + count * 16 + 1)
      L.dirty[b] = true
      i, k = i + count, k + count
    end
  end

  local function large_record(L, spec, now, cost)
    local pos = large_after(L, now, L.tail - 1)
    if pos < L.tail then
      large_shift(L, pos, 1, cost) -- the clock went back: keep the log ordered
    end
    large_put(L, pos, now, large_before(L, pos))
    L.tail, L.total = L.tail + 1, L.total + cost
    if now > L.newest then
      L.newest = now
    end
    large_prune(L, spec, now)
  end

  -- LargeLog.release: at most MAX_RELEASE_MOVES entries after the released one move (one block);
  -- a message with more after it gives nothing back (conservative: it leaves with its window)
  local MAX_RELEASE_MOVES = 256
  local function large_release(L, spec, now, eventtime, cost)
    local lo = large_after(L, eventtime - 1, L.tail - 1)
    for i = large_after(L, eventtime, L.tail - 1) - 1, lo, -1 do
      local before = large_before(L, i)
      if large_before(L, i + 1) - before == cost then
        if L.tail - 1 - i > MAX_RELEASE_MOVES then
          return
        end
        large_shift(L, i + 1, -1, -cost)
        L.tail, L.total = L.tail - 1, L.total - cost
        if L.tail > L.head then
          L.newest = large_time(L, L.tail - 1)
        end
        if L.head == L.tail then -- pruning belongs to record: only the released event goes
          L.head, L.tail, L.total, L.newest, L.hints = 0, 0, 0, OLD, {}
        end
        return
      end
    end
  end

  local function large_append(L, t, cost)
    large_put(L, L.tail, t, L.total)
    L.tail, L.total, L.newest = L.tail + 1, L.total + cost, t
  end

  -- fcap-core's layout of the entries, newest first (inspection, and a rule edited below LARGE_FROM)
  local function large_canonical(L)
    local times, costs, m = {}, {}, 0
    for i = L.tail - 1, L.head, -1 do
      local t, before = large_entry(L, i)
      if t ~= OLD then
        m = m + 1
        times[m], costs[m] = t, large_before(L, i + 1) - before
      end
    end
    return log_encode(times, costs, m)
  end

  local function large_descriptor(L)
    local nh = math.min(#L.hints, 255)
    local d = pack('>i8i8i8i8B', L.head, L.tail, L.total, L.newest, nh)
    for k = 1, nh do
      d = d .. pack('>i8', L.hints[k])
    end
    return d
  end

  -- writes the blocks this call changed, each with the log's TTL
  local function large_flush(L, ttl)
    for b in pairs(L.dirty) do
      redis.call('SET', L.prefix .. pack('>i8', b), L.blocks[b], 'PX', ttl)
    end
    L.dirty = {}
  end

  return { open = large_open, append = large_append, canonical = large_canonical, evaluate = large_evaluate,
           record = large_record, release = large_release, descriptor = large_descriptor, flush = large_flush }
end
local LL = false -- the large logs' functions, once loaded
