-- THE PARTITION'S TIME (PartitionRecord's "partition's time"): per partition, time never runs
-- backwards. Every write puts first in the value an entry of kind CLOCK with an empty id, whose
-- expires is the write's time in seconds rounded up and whose state is varint(back), the ms
-- from then back to the write's time (0 to 999). A request earlier than that time (a clock step
-- back, a caller's time) is decided at it: what a write pruned or dropped by its time is gone.
-- TTLs are still counted from the clock's own time (clocknow), never shorter than needed. The
-- entry's kind is CLEAR instead where the recipient has no suppression entry (Suppression.lua).
local clocknow = now
local timed = value and byte(value, 1) == 0 and (byte(value, 2) == CLOCK or byte(value, 2) == CLEAR)
if timed then
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
-- The partition's own entries, never a counter: its time (either kind) and its incarnation.
local OWN_ENTRY = { [CLOCK] = true, [CLEAR] = true, [INCARNATION] = true }
local incarnation, incexp = false, false
if timed then
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
  local kind = clear and CLEAR or CLOCK
  clockentry = back < 128 and pack('>BBi4BB', 0, kind, cs, 1, back)
    or pack('>BBi4BBB', 0, kind, cs, 2, back % 128 + 128, floor(back / 128))
end
