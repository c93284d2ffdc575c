-- fcap partition script: one atomic step over the counters of one partition (one Redis key).
--
-- This is the Lua mirror of dev.fcap.algorithm.PartitionStep and of the four algorithms
-- (SlidingLog, SlidingCounter, FixedWindow, Gcra) in fcap-core: same decisions, same states (a
-- sliding log with unit costs is stored in a smaller "gap form", which READ translates back).
-- docs/redis.md documents the request, the reply, the key and the value byte by byte.
--
-- The script is assembled when the store loads it from the files listed in "files" beside this one
-- (PartitionScript), one concern each, named after its Java twin where it has one; it is still one
-- chunk with one digest, so a local of an earlier file is in scope in every later one.
--
-- KEYS[1]  the partition key; in the GROUPED LAYOUT (ARGV[2] present) the key of the hash that holds
--            the partition's group (see "Where the value lives" below)
-- ARGV[1]  the request, binary (RedisRequests.java writes it), big-endian:
--            op:u8 (0 DECIDE, 1 CHECK, 2 RELEASE, 3 READ, 4 DELETE) hasTime:u8 time:i64 cost:i64 eventTime:i64
--            (hasTime: 0 Redis TIME, 1 the store's injected clock, 2 the request's own time; plus 4
--            when the request ends with a message id, and 8 more for a release record, see MESSAGE IDS;
--            plus 32 when a suppression scope follows everything, see Suppression.lua; plus 64 for a
--            deferred DECIDE, whose booking follows the counters)
--            n:u16, then n counters: alg:u8 checks:u8 keyLen:u16 align:i64 precision:u32 key
--            and per check limit:i64 window:i64 enforced:u8 bound:i64 (enforced: bit 0 the rule's mode,
--            bit 1 relaxed: the check never refuses this message; bound: the count this message may
--            reach, the limit less its priority's headroom; the limit alone sizes what a counter keeps;
--            a fixed window over calendar periods has alg 2 + 128 (PERIODS) and, after its check,
--            periods:u8 and per period end:i64, in ms after align: FixedWindow's "Calendar periods")
--            then, for a deferred DECIDE, its booking: notAfter:i64 flags:u8 spans:u16 and per span
--            from:i64 to:i64, inclusive (flags: bit 0 admitsNow, bit 1 the spans bound the instants
--            it may be booked at; without it any instant)
-- reply    DECIDE, CHECK: one string, now:i64 allowed:u8 then per check used:i64 retry:i64
--            (retry: ms from now until the check admits the same message, -1 never);
--            (allowed 2: booked, and bookedAt:i64 follows the checks; a message id remembers a
--            booking as now T, allowed 2, retries from T, see PartitionStep.lua);
--          RELEASE: now:i64 allowed:u8; READ: a list { now, (id, algorithm, state)* } of the live
--            counters, every state in fcap-core's layout; DELETE (RedisStore.delete): existed:u8
-- ARGV[2]  (grouped layout only) the partition key itself: the group's field
--
-- Two paths, same results. Redis runs this whole chunk on every call, so every function literal
-- and every table it reaches is allocated per call (a closure with upvalues costs about as much as
-- a redis.call of GET): the FAST PATH, for the common step (DECIDE or CHECK of cost 1 on sliding
-- logs stored in gap form and fixed windows), is straight-line code with no closure, four small
-- tables, the request and the value read in place with struct.unpack and string.byte, and a record
-- that reuses the log's bytes. Anything else (sliding counters, GCRA, RELEASE, READ, a cost above 1,
-- a log in the canonical layout, a clock that went back, out-of-range numbers, a deferred DECIDE, a
-- counter that holds a booking) takes the GENERAL PATH below, the plain mirror of fcap-core, which
-- starts again from the request. The fast path writes nothing before it has decided that it can finish.
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
local CHECK_SIZE = 25          -- limit:i64 window:i64 enforced:u8 bound:i64
local S = 14                   -- stride of the per-counter facts in F (fast path)
local FIXED = 2                -- dev.fcap.model.Algorithm.FIXED_WINDOW's ordinal, its stored kind
local PERIODS = 130            -- FIXED + 128 in a request: a fixed window over calendar periods
local CLOCK = 120              -- stored kind of the partition's time (PartitionTime.lua)
local CLEAR = 119              -- the same, where the recipient has no suppression entry (Suppression.lua)

local byte, sub, char, floor = string.byte, string.sub, string.char, math.floor
local tunpack = unpack
local pack, unpack = struct.pack, struct.unpack

local key, req, field = KEYS[1], ARGV[1], ARGV[2]
local op, hastime, now, cost, eventtime, n, pos = unpack('>BBi8i8i8I2', req)
-- hasTime + 32: the request ends with the message's scope (Suppression.lua); scope is where it
-- starts in req, and reqend where what comes before it ends (read in place: a decision that needs
-- no scope copies nothing)
local scope, reqend = false, #req
-- hasTime + 64: a deferred DECIDE (PartitionStep's "Bookings"); its booking follows the counters and
-- the general path reads it (PartitionRecord.lua)
local booking = false
if hastime >= 64 then
  hastime, booking = hastime - 64, true
end
if hastime >= 32 then
  local len = byte(req, reqend - 1) * 256 + byte(req, reqend)
  hastime, scope, reqend = hastime - 32, reqend - 1 - len, reqend - 2 - len
end

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
  local at = reqend - (byte(req, reqend - 1) * 256 + byte(req, reqend)) - 25
  mid, midttl, midtail = sub(req, at, at + 15), unpack('>i8', req, at + 16), sub(req, at + 24, reqend)
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
