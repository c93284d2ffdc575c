package dev.fcap.engine;

import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The UTC offset of a zone at an instant, without allocating on the common path: per zone, the span
 * between two transitions that the last lookup fell in. An offset holds for months, so nearly every
 * lookup is one map read and two comparisons; a lookup outside the span asks {@link ZoneRules} and
 * replaces it (threads deciding at very different times only cost each other a recomputation).
 */
final class ZoneOffsets {
  static final long MS_PER_DAY = 86_400_000L;
  private static final ConcurrentHashMap<ZoneId, Span> SPANS = new ConcurrentHashMap<>();

  /** {@code offsetMs} holds for instants in [from, until). */
  private record Span(long from, long until, long offsetMs) {}

  private ZoneOffsets() {}

  /** The zone's offset from UTC at {@code t}, in milliseconds. */
  static long offsetMs(ZoneId zone, long t) {
    if (zone instanceof ZoneOffset fixed) {
      return fixed.getTotalSeconds() * 1000L;
    }
    Span s = SPANS.get(zone);
    if (s == null || t < s.from || t >= s.until) {
      s = span(zone.getRules(), t);
      SPANS.put(zone, s);
    }
    return s.offsetMs;
  }

  /** The local time at {@code t} as milliseconds since local 1970-01-01T00:00. */
  static long localMs(ZoneId zone, long t) {
    return t + offsetMs(zone, t);
  }

  private static Span span(ZoneRules rules, long t) {
    Instant at = Instant.ofEpochMilli(t);
    long offsetMs = rules.getOffset(at).getTotalSeconds() * 1000L;
    if (rules.isFixedOffset()) {
      return new Span(Long.MIN_VALUE, Long.MAX_VALUE, offsetMs);
    }
    ZoneOffsetTransition next = rules.nextTransition(at);
    // previousTransition is strictly before its argument, and t may be a transition's instant (the
    // zone's first one, where the answer would be null as if no transition preceded): a nanosecond
    // later it is the last transition at or before t, the one whose offset holds at t
    ZoneOffsetTransition last = rules.previousTransition(at.plusNanos(1));
    long from = last == null ? Long.MIN_VALUE : last.toEpochSecond() * 1000L;
    long until = next == null ? Long.MAX_VALUE : next.toEpochSecond() * 1000L;
    return new Span(from, until, offsetMs);
  }
}
