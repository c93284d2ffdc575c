-- fcap partition script: one atomic step over the counters of one partition (one Redis key).
--
-- This is the Lua mirror of dev.fcap.algorithm.PartitionStep and of the four algorithms
-- (SlidingLog, SlidingCounter, FixedWindow, Gcra) in fcap-core: same decisions, same states (a
-- sliding log with unit costs is stored in a smaller "gap form", which READ translates back).
-- docs/redis.md documents the request, the reply, the key and the value byte by byte.
--
-- KEYS[1]  the partition key; in the GROUPED LAYOUT (ARGV[2] present) the key of the hash that holds
--            the partition's group (see "Where the value lives" below)
-- ARGV[1]  the request, binary (RedisRequests.java writes it), big-endian:
--            op:u8 (0 DECIDE, 1 CHECK, 2 RELEASE, 3 READ, 4 DELETE) hasTime:u8 time:i64 cost:i64 eventTime:i64
--            (hasTime: 0 Redis TIME, 1 the store's injected clock, 2 the request's own time; plus 4
--            when the request ends with a message id, and 8 more for a release record, see MESSAGE IDS)
--            n:u16, then n counters: alg:u8 checks:u8 keyLen:u16 align:i64 precision:u32 key
--            and per check limit:i64 window:i64 enforced:u8
-- reply    DECIDE, CHECK: one string, now:i64 allowed:u8 then per check used:i64 retry:i64
--            (retry: ms from now until the check admits the same message, -1 never);
--          RELEASE: now:i64 allowed:u8; READ: a list { now, (id, algorithm, state)* } of the live
--            counters, every state in fcap-core's layout; DELETE (RedisStore.delete): existed:u8
-- ARGV[2]  (grouped layout only) the partition key itself: the group's field
--
-- Two paths, same results. Redis runs this whole chunk on every call, so every function literal
-- and every table it reaches is allocated per call (a closure with upvalues costs about as much as
-- a redis.call of GET): the FAST PATH, for the common step (DECIDE or CHECK of cost 1 on sliding
-- logs stored in gap form), is straight-line code with no closure, four small tables, the request
-- and the value read in place with struct.unpack and string.byte, and a record that reuses the
-- log's bytes. Anything else (the other algorithms, RELEASE, READ, a cost above 1, a log in the
-- canonical layout, a clock that went back, out-of-range numbers) takes the GENERAL PATH below,
-- the plain mirror of fcap-core, which starts again from the request. The fast path writes
-- nothing before it has decided that it can finish.
--
-- Numbers. Lua 5.1 numbers are doubles: integers are exact up to 2^53. Epoch milliseconds (~2^41)
-- and microseconds (~2^51, GCRA) fit; the store refuses caller times outside +-2^53 us. Divisions
-- go through floordiv (or the same correction inline), exact for such operands.
--
-- Writes. Everything is computed first, then at most one write (SET, or HSET in the grouped layout), so an error can
-- never leave a half-recorded partition behind. A step that records nothing writes nothing. A large
-- sliding log (capacity above LARGE_FROM entries: docs/redis.md, "Large sliding logs") also writes
-- the blocks of its entries that the step changed, after everything was decided and just before
-- the partition value that points at them. A message id or release record (MESSAGE IDS) is written
-- to, or deleted from, the partition's entries hash after the value, also once everything was decided.

local EPOCH_MS = 1577836800000 -- 2020-01-01T00:00Z, the origin of the per-counter expiry seconds
local NEVER = false            -- a check that can never pass (returned as a retry delta of -1)
local GAPS = 4                 -- stored kind of a sliding log in gap form (Redis only)
local LARGE = 5                -- stored kind of a large sliding log's descriptor (Redis only)
local LARGE_FROM = 1024        -- LargeLog.LARGE_FROM: larger logs live in block keys
local GAP_LIMIT = 1073741824   -- 2^30: a gap this long needs the canonical layout
local D_LIMIT = 4294967296     -- 2^32: bound of the gap form's offset of the newest entry
local TTL_SLACK_MS = 1000      -- added to every key's TTL (see the SETs below)
-- A request's own time (hasTime 2: replays, tests) says nothing of real time: a replay may take
-- longer in real time than a window lasts in log time, and a TTL counted from the row's time would
-- drop counters that later rows still need. Keys written at such a time live at least this long
-- after their last write, in real time (docs/redis.md, "Time").
local OWN_TIME_TTL_MS = 86400000
local CHECK_SIZE = 17          -- limit:i64 window:i64 enforced:u8
local S = 12                   -- stride of the per-counter facts in F (fast path)

local byte, sub, char, floor = string.byte, string.sub, string.char, math.floor
local tunpack = unpack
local pack, unpack = struct.pack, struct.unpack

local key, req, field = KEYS[1], ARGV[1], ARGV[2]
local op, hastime, now, cost, eventtime, n, pos = unpack('>BBi8i8i8I2', req)

-- WHERE THE VALUE LIVES. One string per partition (key), or, in the GROUPED LAYOUT, a field of a
-- hash shared by a group of partitions (RedisKeys: the group is a hash of the partition key), so a
-- small partition pays for no key, dict entry or expiry entry of its own (docs/redis.md, "Several
-- partitions per key"). A field has no TTL (Redis < 7.4): its value starts with expires:i4, the
-- Redis TIME second (from EPOCH_MS, rounded up) at which a key of its own would have expired, and
-- the hash's TTL covers its longest-lived field. That expiry only reclaims memory (a write deletes
-- the dead fields among two sampled): a value is read as it is, dead or not, as a key within its
-- TTL's slack is, since everything in it carries its own expiry in the decision's clock. Real time,
-- not the decision's: callers' clocks differ (caller times, replays), and one caller's future must
-- not delete what another's present still counts. The partition's other keys (entries hash,
-- large-log blocks) derive from NAME: the key, or in the grouped layout the group's key and the
-- field, length-prefixed, so that no two partitions' names meet.
local name = field and key .. '\0' .. pack('>I4', #field) .. field or key

-- MESSAGE IDS (PartitionStep's "Message ids"): hasTime + 4 says that the request ends with
-- mid(16) horizon:i64 decisionId idLen:u16. An admitted DECIDE is remembered in the value while it
-- holds fewer than INLINE_MAX such entries, else in the partition's ENTRIES HASH (key KEYS[1] ..
-- "\0M", the same slot; see "Where entries live" below), field the id, value expires:i32 then the
-- entry's state: this script's reply plus decisionId idLen; a DECIDE or CHECK of a remembered id
-- gets that state back as { state, 1 } and writes nothing; a RELEASE undoes the counts only while
-- the id is remembered (else replies allowed 0 and writes nothing) and forgets it (HDEL). hasTime + 8
-- (with + 4) marks a release record (Engine's "Releases by decision id"): its state keeps only the
-- reply's now:i64, then decisionId idLen as above (there the release record's bytes).
-- Why not all in the value (as before): the engine writes a release record into every partition
-- of every admitted decision, kept for the horizon (up to 7 days), so a shared partition (a
-- [channel] rule) held one entry per admitted decision and every call parsed and copied them all,
-- O(admitted decisions) per decision. A hash field is read and written in O(1).
local MESSAGE = 127
local mid, midttl, midtail, midtimeonly = false, 0, false, false
-- STORED AS NOTHING (Idempotency's "stored as nothing"): hasTime + 16 (with + 4 + 8) says that an
-- incarnation:u64 precedes the message id (8 raw bytes, kept as a string: a Lua number is a double).
-- A DECIDE then remembers nothing under the id: the partition keeps its INCARNATION (see below) at
-- least until now + horizon, taking the request's if it has none, and the reply ends with it. A
-- RELEASE (a claim) undoes only if the partition's incarnation is the request's, no entry is
-- remembered under the id (an earlier claim) and now < eventTime + horizon; it then remembers the
-- id (its claim) until eventTime + horizon, inline or in the hash as a DECIDE remembers its entry.
local incwant, claim, stamping, incttl = false, false, false, 0
if hastime >= 16 then
  hastime, incwant = hastime - 16, true
end
if hastime >= 8 then
  hastime, midtimeonly = hastime - 8, true -- a release record: keep only the time of the reply
end
if hastime >= 4 then
  hastime = hastime - 4
  local at = #req - (byte(req, #req - 1) * 256 + byte(req, #req)) - 25
  mid, midttl, midtail = sub(req, at, at + 15), unpack('>i8', req, at + 16), sub(req, at + 24)
  if incwant then
    incwant = sub(req, at - 8, at - 1)
    if op == 0 then
      mid, incttl, stamping = false, midttl, true -- nothing to remember, nothing to look up
    else
      claim = op == 2
    end
  end
end
local realnow = false -- Redis TIME: the decision's clock by default; the grouped layout's expiries
if hastime == 0 or field then
  local t = redis.call('TIME')
  realnow = tonumber(t[1]) * 1000 + floor(tonumber(t[2]) / 1000)
  now = hastime == 0 and realnow or now
end
if op == 4 then -- DELETE: the partition's value and its entries hash (both in the same slot)
  local existed
  if field then
    local v = redis.call('HGET', key, field)
    existed = v and redis.call('HDEL', key, field) == 1 and EPOCH_MS + unpack('>i4', v) * 1000 > realnow
  else
    existed = redis.call('DEL', key) == 1
  end
  existed = redis.call('DEL', name .. '\0M') == 1 or existed
  return pack('>B', existed and 1 or 0)
end
local ttlfloor = hastime == 2 and OWN_TIME_TTL_MS or 0
local value
if field then
  value = redis.call('HGET', key, field)
  value = value and sub(value, 5)
else
  value = redis.call('GET', key)
end

-- THE PARTITION'S TIME (PartitionRecord's "partition's time"): per partition, time never runs
-- backwards. Every write puts first in the value an entry of kind CLOCK with an empty id, whose
-- expires is the write's time in seconds rounded up and whose state is varint(back), the ms
-- from then back to the write's time (0 to 999). A request earlier than that time (a clock step
-- back, a caller's time) is decided at it: what a write pruned or dropped by its time is gone.
-- TTLs are still counted from the clock's own time (clocknow), never shorter than needed.
local CLOCK = 120
local clocknow = now
if value and byte(value, 1) == 0 and byte(value, 2) == CLOCK then
  local seconds, back = unpack('>i4', value, 3), byte(value, 8)
  if back >= 128 then
    back = back - 128 + byte(value, 9) * 128
  end
  local latest = EPOCH_MS + seconds * 1000 - back
  if latest > now then
    now = latest
  end
end
-- THE PARTITION'S INCARNATION: an entry of kind INCARNATION with an empty id, its state the 8 bytes,
-- right after the CLOCK entry (which is 8 + its state length bytes long). Every write puts it back
-- there while it lives (incentry); the scans below skip it.
local INCARNATION = 125
local incarnation, incexp = false, false
if value and byte(value, 1) == 0 and byte(value, 2) == CLOCK then
  local p0 = 8 + byte(value, 7)
  if byte(value, p0) == 0 and byte(value, p0 + 1) == INCARNATION then
    local e = EPOCH_MS + unpack('>i4', value, p0 + 2) * 1000
    if e > now then
      incarnation, incexp = sub(value, p0 + 7, p0 + 14), e
    end
  end
end
if stamping then
  -- kept for as long as this decision's id may be released (written only if it is admitted)
  local x = now + incttl - EPOCH_MS
  local r = x % 1000
  local e = EPOCH_MS + ((x - r) / 1000 + (r > 0 and 1 or 0)) * 1000
  incarnation, incexp = incarnation or incwant, math.max(incexp or e, e)
end
local incentry = incarnation and pack('>BBi4B', 0, INCARNATION, (incexp - EPOCH_MS) / 1000, 8) .. incarnation or ''

-- the CLOCK entry a write puts first (RELEASE and DECIDE only: the others never write)
local clockentry, clockexp = '', now
if op == 0 or op == 2 then
  local x = now - EPOCH_MS
  local r = x % 1000
  local cs = (x - r) / 1000 + (r > 0 and 1 or 0)
  local back = EPOCH_MS + cs * 1000 - now
  clockexp = EPOCH_MS + cs * 1000
  clockentry = back < 128 and pack('>BBi4BB', 0, CLOCK, cs, 1, back)
    or pack('>BBi4BBB', 0, CLOCK, cs, 2, back % 128 + 128, floor(back / 128))
end

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
-- hash only while the marker lives. (Kind 127, MESSAGE, was the inline entry of versions whose tail
-- length was a u8: such a legacy entry is dropped at the next write, its id then answers unknown.)
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
    return { found, 1 }
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

-- ================================================================================================
-- FAST PATH
--
-- F holds the facts of counter i at F[(i - 1) * S + k]: 1 id  2 offset of its first check in req
-- 3 checks  4 true if an earlier counter of the request is the same log  5 start of its gap-form
-- state in value (false: none)  6 end of it  7 its expiry (ms)  and, after evaluation, 8 its longest
-- window  9 how many old entries a record keeps  10 where their gaps end  11 newest old entry
-- 12 true if a record can be written in gap form here
local fast = op <= 1 and cost == 1
local F, checks, maxexp = nil, 0, false
if fast then
  F = { false, false, false, false, false, false, false, false, false, false, false, false,
        false, false, false, false, false, false, false, false, false, false, false, false }
  for i = 1, n do
    local alg, nchecks, keylen, align, precision, p = unpack('>BBI2i8I4', req, pos)
    if alg ~= 0 or keylen >= 128 then
      fast = false
      break
    end
    local id = sub(req, p, p + keylen - 1)
    local b = (i - 1) * S
    F[b + 1], F[b + 2], F[b + 3], F[b + 4], F[b + 5] = id, p + keylen, nchecks, false, false
    for j = 0, b - S, S do
      if F[j + 1] == id then
        F[b + 4] = true
      end
    end
    checks = checks + nchecks
    pos = p + keylen + nchecks * CHECK_SIZE
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
    if expms > now and kind ~= CLOCK and kind ~= INCARNATION and kind ~= MESSAGE and not (kind == SPILLED and mid) then -- (MESSAGE: legacy, dropped)
      local requested = false
      if kind == GAPS or kind == 0 or kind == LARGE then
        for b = 0, (n - 1) * S, S do
          if F[b + 1] == id then
            requested = true
            F[b + 5], F[b + 6], F[b + 7] = p, e, expms
            if kind ~= GAPS then
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
    local b = (i - 1) * S
    local a, m = F[b + 5], 0
    if a then
      -- gap form: d:u32 (the newest entry is `expires - d` ms), then per older entry its gap to
      -- the previous one in 1 to 4 bytes, the top two bits of the first byte giving the length
      T = T or {}
      local e, q = F[b + 6], a + 4
      local t = F[b + 7] - unpack('>I4', value, a)
      T[1], T[2], m = t, q, 1
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
    -- entry number `limit` (newest first) leaves the window
    local shadow, maxlimit, maxwindow, inwindow, last = false, 0, 0, 0, -1
    local q = F[b + 2]
    for c = 1, F[b + 3] do
      local limit, window, enforced = unpack('>i8i8B', req, q)
      q = q + CHECK_SIZE
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
      if limit > maxlimit then
        maxlimit = limit
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

local reply = false
if fast and op == 0 and allowed then
  -- the next value: each requested log with the new entry's gap in front of the kept entries'
  -- bytes, then the other live counters as they were
  local v = ''
  for i = 1, n do
    local b = (i - 1) * S
    if not F[b + 4] then
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
  return stamping and reply .. incarnation or reply
end

-- ================================================================================================
-- GENERAL PATH: the plain mirror of fcap-core, from the request again (nothing was written)
nin, markerexp, spill, reply = 0, false, false, false -- counted again below, if the fast path began

local function floordiv(a, b)
  local q = floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

local function ceildiv(a, b)
  return -floordiv(-a, b)
end

local function readvarint(s, p)
  local v, scale = 0, 1
  while true do
    local c = byte(s, p)
    p = p + 1
    if c < 128 then
      return v + c * scale, p
    end
    v = v + (c - 128) * scale
    scale = scale * 128
  end
end

local function varint(v)
  local s = ''
  while v >= 128 do
    s = s .. char(v % 128 + 128)
    v = floor(v / 128)
  end
  return s .. char(v)
end

-- ------------------------------------------------------------------------------------------------
-- sliding-log (canonical layout, fcap-core's SlidingLog): flags:u8 newest:i64 entries newest
-- first: age:u32 (i64 if WIDE) [cost:u32 if COSTS]
local WIDE, COSTS = 1, 2
local band, bor = bit.band, bit.bor

-- evaluate and record read the same state: decode it once per script call
local log_cache_state, log_cache_times, log_cache_costs, log_cache_n

local function log_decode_uncached(state)
  local times, costs = {}, {}
  if not state then
    return times, costs, 0
  end
  local flags = byte(state, 1)
  local newest = unpack('>i8', state, 2)
  local wide, hascost = band(flags, WIDE) ~= 0, band(flags, COSTS) ~= 0
  local size = (wide and 8 or 4) + (hascost and 4 or 0)
  local n = (#state - 9) / size
  local at = 10
  for i = 1, n do
    if wide then
      times[i] = newest - unpack('>i8', state, at)
    else
      times[i] = newest - unpack('>I4', state, at)
    end
    costs[i] = hascost and unpack('>I4', state, at + size - 4) or 1
    at = at + size
  end
  return times, costs, n
end

-- the decoded entries of a state; callers that modify them (record, release) pass mutable and get
-- their own copy, so the cached view stays intact
local function log_decode(state, mutable)
  if not state then
    return {}, {}, 0
  end
  if state ~= log_cache_state then
    log_cache_times, log_cache_costs, log_cache_n = log_decode_uncached(state)
    log_cache_state = state
  end
  if not mutable then
    return log_cache_times, log_cache_costs, log_cache_n
  end
  local times, costs = {}, {}
  for i = 1, log_cache_n do
    times[i], costs[i] = log_cache_times[i], log_cache_costs[i]
  end
  return times, costs, log_cache_n
end

local function log_encode(times, costs, n)
  if n == 0 then
    return nil
  end
  local newest, flags = times[1], 0
  for i = 1, n do
    if newest - times[i] > 4294967295 then
      flags = bor(flags, WIDE)
    end
    if costs[i] ~= 1 then
      flags = bor(flags, COSTS)
    end
  end
  local wide, hascost = band(flags, WIDE) ~= 0, band(flags, COSTS) ~= 0
  local out = { pack('>Bi8', flags, newest) }
  for i = 1, n do
    local age = newest - times[i]
    local e = wide and pack('>i8', age) or pack('>I4', age)
    if hascost then
      e = e .. pack('>I4', costs[i])
    end
    out[i + 1] = e
  end
  return table.concat(out)
end

-- SlidingLog.capacity: enforced checks never hold more than their limit; a log with shadow checks
-- keeps a margin so that their counts stay exact after releases
local function log_capacity(spec)
  for c = 1, spec.checks do
    if not spec.enforced[c] then
      return math.max(2 * spec.maxlimit, spec.maxlimit + 64)
    end
  end
  return spec.maxlimit
end

local function log_prune(times, costs, n, spec, now)
  local horizon = now - spec.maxwindow
  local capacity = log_capacity(spec)
  local newer, keep = 0, 0
  while keep < n and times[keep + 1] > horizon and newer < capacity do
    newer = newer + costs[keep + 1]
    keep = keep + 1
  end
  return keep
end

local function log_evaluate(state, spec, align, now, cost, used, retry, at)
  local times, costs, n = log_decode(state)
  local admitted = true
  for c = 1, spec.checks do
    local limit, window = spec.limits[c], spec.windows[c]
    local sum, inwindow = 0, 0
    while inwindow < n and times[inwindow + 1] > now - window do
      inwindow = inwindow + 1
      sum = sum + costs[inwindow]
    end
    used[at + c] = sum
    local r
    if sum + cost <= limit then
      r = now
    elseif cost > limit then
      r = NEVER
    else
      -- let the oldest entries of the window age out until the message fits
      r = NEVER
      local remaining = sum
      for i = inwindow, 1, -1 do
        remaining = remaining - costs[i]
        if remaining + cost <= limit then
          r = times[i] + window
          break
        end
      end
    end
    retry[at + c] = r
    if r ~= now and spec.enforced[c] then
      admitted = false
    end
  end
  return admitted
end

local function log_record(state, spec, align, now, cost)
  local times, costs, n = log_decode(state, true)
  local pos = 1
  while pos <= n and times[pos] > now do
    pos = pos + 1 -- the clock went back: keep the log ordered newest first
  end
  table.insert(times, pos, now)
  table.insert(costs, pos, cost)
  n = n + 1
  return log_encode(times, costs, log_prune(times, costs, n, spec, now))
end

local function log_release(state, spec, align, now, eventtime, cost)
  local times, costs, n = log_decode(state, true)
  for i = 1, n do
    if times[i] == eventtime and costs[i] == cost then
      table.remove(times, i)
      table.remove(costs, i)
      return log_encode(times, costs, n - 1) -- pruning belongs to record: only the released event goes
    end
  end
  return state
end

local function log_expires(state, spec, align)
  if not state or #state <= 9 then
    return nil
  end
  return unpack('>i8', state, 2) + spec.maxwindow
end

-- ------------------------------------------------------------------------------------------------
-- sliding-counter: width:i64 newest:i64 entries newest first: age:u16 count:u32

local function sc_width(spec)
  return math.max(1, ceildiv(spec.windows[1], spec.precision))
end

local function sc_decode(state, width)
  local idx, cnt = {}, {}
  if not state or #state <= 16 then
    return idx, cnt, 0
  end
  local n = (#state - 16) / 6
  local oldwidth = unpack('>i8', state, 1)
  local newest = unpack('>i8', state, 9)
  if oldwidth ~= width then
    -- written with another width (the rule was edited): fold conservatively into one sub-window
    local total = 0
    for i = 1, n do
      total = total + unpack('>I4', state, 17 + (i - 1) * 6 + 2)
    end
    idx[1] = floordiv((newest + 1) * oldwidth - 1, width)
    cnt[1] = total
    return idx, cnt, 1
  end
  for i = 1, n do
    local at = 17 + (i - 1) * 6
    idx[i] = newest - unpack('>I2', state, at)
    cnt[i] = unpack('>I4', state, at + 2)
  end
  return idx, cnt, n
end

local function sc_encode(idx, cnt, n, width)
  if n == 0 then
    return nil
  end
  local out = { pack('>i8i8', width, idx[1]) }
  for i = 1, n do
    out[i + 1] = pack('>I2I4', idx[1] - idx[i], cnt[i])
  end
  return table.concat(out)
end

local function sc_oldest(now, window, width)
  return floordiv(now - window + 1, width)
end

local function sc_prune(idx, n, spec, now, width)
  local oldest = sc_oldest(now, spec.windows[1], width)
  local keep = 0
  while keep < n and idx[keep + 1] >= oldest and idx[1] - idx[keep + 1] <= 65535 do
    keep = keep + 1
  end
  return keep
end

local function sc_evaluate(state, spec, align, now, cost, used, retry, at)
  local width = sc_width(spec)
  local window, limit = spec.windows[1], spec.limits[1]
  local idx, cnt, n = sc_decode(state, width)
  local oldest = sc_oldest(now, window, width)
  local counted, sum = 0, 0
  while counted < n and idx[counted + 1] >= oldest do
    counted = counted + 1
    sum = sum + cnt[counted]
  end
  used[at + 1] = sum
  local r
  if sum + cost <= limit then
    r = now
  elseif cost > limit then
    r = NEVER
  else
    r = NEVER
    local remaining = sum
    for i = counted, 1, -1 do
      remaining = remaining - cnt[i]
      if remaining + cost <= limit then
        r = (idx[i] + 1) * width + window - 1
        break
      end
    end
  end
  retry[at + 1] = r
  return r == now or not spec.enforced[1]
end

local function sc_record(state, spec, align, now, cost)
  local width = sc_width(spec)
  local idx, cnt, n = sc_decode(state, width)
  local current = floordiv(now, width)
  local pos = 1
  while pos <= n and idx[pos] > current do
    pos = pos + 1
  end
  if pos <= n and idx[pos] == current then
    cnt[pos] = cnt[pos] + cost
  else
    table.insert(idx, pos, current)
    table.insert(cnt, pos, cost)
    n = n + 1
  end
  return sc_encode(idx, cnt, sc_prune(idx, n, spec, now, width), width)
end

local function sc_release(state, spec, align, now, eventtime, cost)
  local width = sc_width(spec)
  local idx, cnt, n = sc_decode(state, width)
  local bucket = floordiv(eventtime, width)
  if bucket < sc_oldest(now, spec.windows[1], width) then
    return state -- SlidingCounter.release: its sub-window no longer counts
  end
  for i = 1, n do
    if idx[i] == bucket then
      cnt[i] = math.max(0, cnt[i] - cost)
      if cnt[i] == 0 then
        table.remove(idx, i)
        table.remove(cnt, i)
        n = n - 1
      end
      return sc_encode(idx, cnt, n, width) -- pruning belongs to record: only the released unit goes
    end
  end
  return state
end

local function sc_expires(state, spec, align)
  if not state then
    return nil
  end
  local width = unpack('>i8', state, 1)
  local newest = unpack('>i8', state, 9)
  return (newest + 1) * width + math.max(spec.windows[1], width) - 1
end

-- ------------------------------------------------------------------------------------------------
-- fixed-window: last:i64 count:u32

local function fw_start(t, window, align)
  return floordiv(t - align, window) * window + align
end

local function fw_evaluate(state, spec, align, now, cost, used, retry, at)
  local window, limit = spec.windows[1], spec.limits[1]
  local start = fw_start(now, window, align)
  local count, last = 0, nil
  if state then
    local l = unpack('>i8', state, 1)
    if l >= start then
      last = l
      count = unpack('>I4', state, 9)
    end
  end
  used[at + 1] = count
  local r
  if count + cost <= limit then
    r = now
  elseif cost > limit then
    r = NEVER
  else
    r = fw_start(last, window, align) + window
  end
  retry[at + 1] = r
  return r == now or not spec.enforced[1]
end

local function fw_record(state, spec, align, now, cost)
  local start = fw_start(now, spec.windows[1], align)
  if state then
    local l = unpack('>i8', state, 1)
    if l >= start then
      return pack('>i8I4', math.max(now, l), unpack('>I4', state, 9) + cost)
    end
  end
  return pack('>i8I4', now, cost)
end

local function fw_release(state, spec, align, now, eventtime, cost)
  -- FixedWindow.release: only a message of the count's window (the newest message's), while live
  local window = spec.windows[1]
  if not state or unpack('>i8', state, 1) < fw_start(now, window, align)
      or eventtime < fw_start(unpack('>i8', state, 1), window, align) then
    return state
  end
  local count = unpack('>I4', state, 9) - cost
  if count <= 0 then
    return nil
  end
  return sub(state, 1, 8) .. pack('>I4', count)
end

local function fw_expires(state, spec, align)
  if not state then
    return nil
  end
  local window = spec.windows[1]
  return fw_start(unpack('>i8', state, 1), window, align) + window
end

-- ------------------------------------------------------------------------------------------------
-- gcra: tat:i64 interval:i64, both in microseconds; a state written at another interval (the rule
-- was edited) is rescaled to the same number of messages in flight, rounded up, plus 1 us

local function gcra_interval(spec)
  return ceildiv(spec.windows[1] * 1000, spec.limits[1])
end

local function gcra_tat(state, t, nowus)
  if not state then
    return nowus
  end
  local tat, old = unpack('>i8i8', state, 1)
  if tat <= nowus then
    return nowus
  end
  if old == t then
    return tat
  end
  local ahead = tat - nowus
  local whole = floordiv(ahead, old)
  local rest = ahead - whole * old
  -- Gcra.java computes this term in doubles too: (long) Math.ceil(rest * (double) t / old)
  return nowus + whole * t + math.ceil(rest * t / old) + 1
end

local function gcra_evaluate(state, spec, align, now, cost, used, retry, at)
  local t = gcra_interval(spec)
  local limit = spec.limits[1]
  local nowus = now * 1000
  local tat = gcra_tat(state, t, nowus)
  used[at + 1] = math.min(limit, ceildiv(tat - nowus, t))
  local r
  if tat - nowus + cost * t <= limit * t then
    r = now
  elseif cost > limit then
    r = NEVER
  else
    r = ceildiv(tat - (limit - cost) * t, 1000)
  end
  retry[at + 1] = r
  return r == now or not spec.enforced[1]
end

local function gcra_record(state, spec, align, now, cost)
  local t = gcra_interval(spec)
  return pack('>i8i8', gcra_tat(state, t, now * 1000) + cost * t, t)
end

local function gcra_release(state, spec, align, now, eventtime, cost)
  if not state then
    return nil
  end
  local t = gcra_interval(spec)
  local nowus = now * 1000
  -- Gcra.release: only what is left of the event's cell [eventtime, eventtime + cost T)
  local held = math.min(cost * t, eventtime * 1000 + cost * t - nowus)
  if held <= 0 then
    return state
  end
  local tat = gcra_tat(state, t, nowus) - held
  if tat <= nowus then
    return nil
  end
  return pack('>i8i8', tat, t)
end

local function gcra_expires(state, spec, align)
  if not state then
    return nil
  end
  return ceildiv(unpack('>i8', state, 1), 1000)
end

-- algorithm codes are the ordinals of dev.fcap.model.Algorithm
local ALGORITHMS = {
  [0] = { evaluate = log_evaluate, record = log_record, release = log_release, expires = log_expires },
  [1] = { evaluate = sc_evaluate, record = sc_record, release = sc_release, expires = sc_expires },
  [2] = { evaluate = fw_evaluate, record = fw_record, release = fw_release, expires = fw_expires },
  [3] = { evaluate = gcra_evaluate, record = gcra_record, release = gcra_release, expires = gcra_expires },
}


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
    local limit, window = spec.limits[c], spec.windows[c]
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
    if r ~= now and spec.enforced[c] then
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
    head = large_reach(L, byTime, L.total - log_capacity(spec) + 1)
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

-- ------------------------------------------------------------------------------------------------
-- the gap form of a sliding log <-> the canonical layout

-- the times (newest first) of a gap-form state expiring at expms
local function gaps_decode(state, expms)
  local times = { expms - unpack('>I4', state, 1) }
  local p, m = 5, 1
  while p <= #state do
    local b0 = byte(state, p)
    local width = b0 < 64 and 1 or b0 < 128 and 2 or b0 < 192 and 3 or 4
    local g = b0 % 64
    for k = 1, width - 1 do
      g = g * 256 + byte(state, p + k)
    end
    times[m + 1] = times[m] - g
    m = m + 1
    p = p + width
  end
  return times, m
end

-- the gap form of a canonical state expiring at second `seconds`, or nil if it cannot hold it
-- (a cost above 1, a gap of 2^30 ms or more, the newest entry not within 2^32 ms of the expiry)
local function gaps_encode(state, seconds)
  if band(byte(state, 1), COSTS) ~= 0 then
    return nil
  end
  local times, costs, m = log_decode_uncached(state)
  local d = EPOCH_MS + seconds * 1000 - times[1]
  if d < 0 or d >= D_LIMIT then
    return nil
  end
  local out = { pack('>I4', d) }
  for i = 2, m do
    local g = times[i - 1] - times[i]
    if g >= GAP_LIMIT then
      return nil
    elseif g < 64 then
      out[i] = char(g)
    elseif g < 16384 then
      out[i] = pack('>I2', 16384 + g)
    elseif g < 4194304 then
      out[i] = pack('>I3', 8388608 + g)
    else
      out[i] = pack('>I4', 3221225472 + g)
    end
  end
  return table.concat(out)
end

-- ------------------------------------------------------------------------------------------------
-- the partition value: counter* ; counter := varint(idLen) id kind:u8 expires:i32 varint(len) state
-- (kind: the algorithm, or GAPS for a sliding log in gap form; states here are canonical)

local function parse_value()
  local stored = {}
  if not value then
    return stored
  end
  local p, len = 1, #value
  while p <= len do
    local start = p
    local idlen
    idlen, p = readvarint(value, p)
    local id = sub(value, p, p + idlen - 1)
    p = p + idlen
    local kind = byte(value, p)
    local expires = unpack('>i4', value, p + 1)
    local statelen
    statelen, p = readvarint(value, p + 5)
    local s = { id = id, alg = kind, expiresms = EPOCH_MS + expires * 1000,
                state = sub(value, p, p + statelen - 1), raw = sub(value, start, p + statelen - 1) }
    if kind == LARGE then
      s.alg, s.large = 0, true -- a large sliding log: the state is its descriptor
    elseif kind == GAPS then
      local times, m = gaps_decode(s.state, s.expiresms)
      local ones = {}
      for i = 1, m do
        ones[i] = 1
      end
      s.alg, s.state = 0, log_encode(times, ones, m)
    end
    stored[#stored + 1] = s
    p = p + statelen
  end
  return stored
end

local function to_seconds(ms)
  local s = ceildiv(ms - EPOCH_MS, 1000)
  return math.max(-2147483647, math.min(2147483647, s))
end

local function encode_counter(id, alg, expiresms, state)
  local seconds = to_seconds(expiresms)
  if alg == 0 then
    local gaps = gaps_encode(state, seconds)
    if gaps then
      alg, state = GAPS, gaps
    end
  end
  return varint(#id) .. id .. char(alg) .. pack('>i4', seconds) .. varint(#state) .. state
end

local function parse_request()
  local counters = {}
  local p = 29
  for i = 1, n do
    local alg, checks, keylen, align, precision
    alg, checks, keylen, align, precision, p = unpack('>BBI2i8I4', req, p)
    local id = sub(req, p, p + keylen - 1)
    p = p + keylen
    local spec = { checks = checks, precision = precision, limits = {}, windows = {}, enforced = {},
                   maxlimit = 0, maxwindow = 0 }
    for c = 1, checks do
      local limit, window, enforced
      limit, window, enforced, p = unpack('>i8i8B', req, p)
      spec.limits[c], spec.windows[c], spec.enforced[c] = limit, window, enforced ~= 0
      spec.maxlimit = math.max(spec.maxlimit, limit)
      spec.maxwindow = math.max(spec.maxwindow, window)
    end
    counters[i] = { id = id, alg = alg, align = align, spec = spec }
  end
  return counters
end

local counters = parse_request()
local stored = parse_value()

if op == 3 then
  -- READ: the live counters, for inspection. A large log is named, not decoded (O(n): seconds at
  -- 10^6 entries, and Redis serves nobody meanwhile): the caller asks a CHECK of it, O(log n)
  local result = { now }
  for _, s in ipairs(stored) do
    if s.expiresms > now and s.alg ~= MESSAGE and s.alg ~= CLOCK and s.alg ~= ENTRY and s.alg ~= SPILLED
        and s.alg ~= INCARNATION then
      result[#result + 1] = s.id
      result[#result + 1] = s.large and LARGE or s.alg
      result[#result + 1] = s.large and '' or s.state
    end
  end
  return result
end

-- the live state of each requested counter (same id and algorithm)
local states, found = {}, {}
for i, c in ipairs(counters) do
  for _, s in ipairs(stored) do
    if s.expiresms > now and s.alg == c.alg and s.id == c.id then
      states[i], found[i] = s.state, s
    end
  end
end

-- the large logs (LARGE_FROM): a log written in the compact layout before its rule grew moves into
-- blocks; a large log whose rule shrank comes back as a compact state
local larges = {}
for i, c in ipairs(counters) do
  if c.alg == 0 then
    local s = found[i]
    if log_capacity(c.spec) > LARGE_FROM then
      local L = large_open(c.id, s and s.large and s.state or nil)
      if s and not s.large then
        local times, costs, m = log_decode_uncached(s.state)
        for k = m, 1, -1 do
          large_append(L, times[k], costs[k])
        end
      end
      larges[i], states[i] = L, nil
    elseif s and s.large then
      states[i] = large_canonical(large_open(c.id, s.state))
    end
  end
end

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
    elseif s.expiresms > now and s.alg ~= CLOCK and s.alg ~= INCARNATION and s.alg ~= MESSAGE then -- (MESSAGE: legacy, dropped)
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
return stamping and reply .. incarnation or reply
