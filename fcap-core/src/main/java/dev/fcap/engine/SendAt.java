package dev.fcap.engine;

import java.time.ZoneId;

/**
 * The earliest instant at which every send window that applies to a message is open at once, from the
 * instant its counters free.
 *
 * <p><b>Design.</b> Counters free monotonically when nothing else is sent, so they all admit from the
 * latest of their retry instants on; the answer is the first instant from there at which every window
 * is open. Starting at {@code from}, each round asks every window in turn for its next opening from the
 * instant reached so far: no step passes the answer (every window is open there, so its next opening
 * from an earlier instant is at most the answer), and a round that moves nothing has every window open. Windows that are never open
 * together (Monday mornings and Tuesday mornings) move the instant a day or so per round; the search
 * gives up after {@value #HORIZON_DAYS} days.
 *
 * <p>Example: a counter frees at 20:59:30 inside a window that closes at 21:00: the answer is 20:59:30.
 * One that frees at 21:00:10 gives the window's next opening, 08:00 the next day, if a second window is
 * open then too; if that one opens only at 09:00, the answer is 09:00 (and the first window is still
 * open at 09:00).
 */
final class SendAt {
  /** How far past {@code from} an instant with every window open is looked for. */
  static final int HORIZON_DAYS = 800;

  private SendAt() {}

  /**
   * The earliest instant at or after {@code from} at which each of the first {@code count} windows is
   * open by the wall clock of its zone ({@code zones[i]} for {@code windows[i]}); -1 if none within
   * {@value #HORIZON_DAYS} days, or if {@code from} is -1 (a counter never frees).
   */
  static long earliest(long from, WindowSchedule[] windows, ZoneId[] zones, int count) {
    if (from < 0) {
      return -1;
    }
    long limit = from + HORIZON_DAYS * ZoneOffsets.MS_PER_DAY;
    long at = from;
    while (at <= limit) {
      long next = at;
      for (int i = 0; i < count; i++) {
        long opens = windows[i].nextOpening(next, zones[i]);
        if (opens < 0) {
          return -1;
        }
        next = opens;
      }
      if (next == at) {
        return at;
      }
      at = next;
    }
    return -1;
  }
}
