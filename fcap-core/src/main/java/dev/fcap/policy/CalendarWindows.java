package dev.fcap.policy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.fcap.model.Algorithm;
import dev.fcap.model.CalendarUnit;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;

/**
 * Reads the calendar of a counting rule: a window of {@code 1d}, {@code 1w} or {@code 1mo} on a fixed-window
 * rule, and the {@code zone:} (an IANA id, or {@code recipient}) whose local days it counts in.
 */
final class CalendarWindows {
  /** What a rule's window and zone say about the calendar it counts in. */
  record Local(CalendarUnit calendar, ZoneId zone, boolean recipientZone) {}

  private CalendarWindows() {}

  /** The calendar unit a window of {@code 1w} or {@code 1mo} names; null for other windows. */
  static CalendarUnit calendarWindow(JsonNode r) {
    JsonNode n = r.get("window");
    if (n == null || !n.isTextual()) {
      return null;
    }
    CalendarUnit unit = CalendarUnit.fromId(n.asText()).orElse(null);
    return unit == CalendarUnit.DAY ? null : unit;
  }

  /** The calendar and zone of a rule whose window is {@code unit} (when a calendar one) or {@code window}. */
  static Local local(JsonNode r, CalendarUnit unit, Algorithm algorithm, Duration window, String tenant, String id,
      List<PolicyError> errors) {
    CalendarUnit calendar = calendar(unit, algorithm, window, tenant, id, errors);
    boolean recipientZone = r.has("zone") && PolicyParser.RECIPIENT_ZONE.equals(r.get("zone").asText());
    ZoneId zone = recipientZone ? null : zone(r, algorithm, window, tenant, id, errors);
    if (recipientZone && calendar == null) {
      errors.add(new PolicyError(tenant, id, "zone", "zone: " + PolicyParser.RECIPIENT_ZONE + " applies to "
          + "fixed-window rules whose window is 1d, 1w or 1mo"));
    }
    return new Local(calendar, zone, recipientZone);
  }

  /** The calendar a fixed-window rule of one day, week or month follows; null for other rules. */
  private static CalendarUnit calendar(CalendarUnit unit, Algorithm algorithm, Duration window, String tenant,
      String id, List<PolicyError> errors) {
    if (unit != null && algorithm != Algorithm.FIXED_WINDOW) {
      errors.add(new PolicyError(tenant, id, "window", "window " + unit.id() + " is a calendar "
          + (unit == CalendarUnit.WEEK ? "week" : "month") + " and applies to fixed-window rules; for a sliding "
          + "window write " + (unit == CalendarUnit.WEEK ? "7d" : "30d")));
      return null;
    }
    if (unit != null) {
      return unit;
    }
    return algorithm == Algorithm.FIXED_WINDOW && window != null && window.equals(Duration.ofDays(1))
        ? CalendarUnit.DAY : null;
  }

  private static ZoneId zone(JsonNode r, Algorithm algorithm, Duration window, String tenant, String id,
      List<PolicyError> errors) {
    JsonNode n = r.get("zone");
    if (n == null) {
      return null;
    }
    if (algorithm != Algorithm.FIXED_WINDOW || window == null || window.toMillis() % 86_400_000L != 0) {
      errors.add(new PolicyError(tenant, id, "zone", "zone applies to fixed-window rules whose window is whole days"));
      return null;
    }
    try {
      return ZoneId.of(n.asText());
    } catch (DateTimeException e) {
      errors.add(new PolicyError(tenant, id, "zone", "unknown time zone '" + n.asText() + "'"));
      return null;
    }
  }
}
