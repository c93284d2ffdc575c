package dev.fcap.policy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.fcap.model.Condition;
import dev.fcap.model.Mode;
import dev.fcap.model.Rule;
import dev.fcap.model.SendWindow;
import java.time.DateTimeException;
import java.time.DayOfWeek;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Reads and writes a send-window rule and its {@code sendWindow:} (zone, allow, closed), naming the field of
 * every error.
 */
final class SendWindows {
  static final int MAX_INTERVALS = 64;
  static final int MAX_CLOSED_DATES = 1_000;
  private static final Set<String> WINDOW_FIELDS = Set.of("zone", "allow", "closed");
  private static final Set<String> INTERVAL_FIELDS = Set.of("days", "from", "to");
  private static final Pattern TIME = Pattern.compile("([01][0-9]|2[0-3]):[0-5][0-9]");
  private static final Pattern DATE = Pattern.compile("[0-9]{4}-[0-9]{2}-[0-9]{2}");
  private static final DateTimeFormatter HH_MM = DateTimeFormatter.ofPattern("HH:mm");
  private static final List<String> DAY_NAMES = List.of("mon", "tue", "wed", "thu", "fri", "sat", "sun");
  /** The fields of a counting rule that a send-window rule does not have. */
  private static final List<String> COUNTER_FIELDS = List.of(
      "limit", "window", "key", "algorithm", "precision", "zone", "headroom");

  private SendWindows() {}

  /** A rule with a {@code sendWindow:}; {@code before} is the count of errors before the rule. */
  static Rule rule(JsonNode r, String id, String description, String tenant,
      List<PolicyError> errors, int before) {
    for (String f : COUNTER_FIELDS) {
      if (r.has(f)) {
        errors.add(new PolicyError(tenant, id, f, f + " does not apply to a send-window rule, which counts nothing; "
            + "put the cap in a rule of its own"));
      }
    }
    SendWindow window = parse(r.get("sendWindow"), tenant, id, errors);
    Condition match = PolicyParser.condition(r, "match", tenant, id, errors);
    Condition exempt = PolicyParser.condition(r, "exempt", tenant, id, errors);
    Mode mode = PolicyParser.enumField(r, "mode", Mode.ENFORCE, Mode::fromId, tenant, id, errors);
    Condition countOnly = PolicyParser.countOnly(r, tenant, id, errors);
    if (errors.size() > before || window == null) {
      return null;
    }
    return Rule.ofSendWindow(id, description.isEmpty() ? null : description, window, match, exempt, mode)
        .withCountOnly(countOnly);
  }

  static SendWindow parse(JsonNode n, String tenant, String id, List<PolicyError> errors) {
    if (n == null || !n.isObject()) {
      errors.add(new PolicyError(tenant, id, "sendWindow", "sendWindow must be a map with allow (a list of "
          + "{days, from, to}) and optionally zone and closed"));
      return null;
    }
    int before = errors.size();
    PolicyParser.unknownFields(n, WINDOW_FIELDS, tenant, id, "sendWindow.", errors);
    ZoneId zone = null;
    JsonNode z = n.get("zone");
    if (z != null && !(z.isTextual() && PolicyParser.RECIPIENT_ZONE.equals(z.asText()))) {
      zone = zone(z, "sendWindow.zone", tenant, id, errors);
    }
    List<SendWindow.Interval> allow = allow(n.get("allow"), tenant, id, errors);
    Set<LocalDate> closed = closed(n.get("closed"), tenant, id, errors);
    return errors.size() > before ? null : new SendWindow(zone, allow, closed);
  }

  /** An IANA zone id such as {@code America/New_York}. */
  static ZoneId zone(JsonNode n, String field, String tenant, String id, List<PolicyError> errors) {
    String hint = field.equals("timeZone") ? "" : " or " + PolicyParser.RECIPIENT_ZONE;
    if (!n.isTextual()) {
      errors.add(new PolicyError(tenant, id, field, field + " must be an IANA time zone id such as "
          + "America/New_York" + hint));
      return null;
    }
    try {
      return ZoneId.of(n.asText());
    } catch (DateTimeException e) {
      errors.add(new PolicyError(tenant, id, field, "unknown time zone '" + n.asText() + "'; use an IANA id such "
          + "as America/New_York or Asia/Kolkata" + hint));
      return null;
    }
  }

  private static List<SendWindow.Interval> allow(JsonNode n, String tenant, String id, List<PolicyError> errors) {
    List<SendWindow.Interval> out = new ArrayList<>();
    if (n == null || !n.isArray() || n.isEmpty()) {
      errors.add(new PolicyError(tenant, id, "sendWindow.allow", "allow must be a non-empty list of "
          + "{days, from, to}, e.g. {days: [mon, tue], from: \"08:00\", to: \"21:00\"}"));
      return out;
    }
    if (n.size() > MAX_INTERVALS) {
      errors.add(new PolicyError(tenant, id, "sendWindow.allow", "at most " + MAX_INTERVALS + " intervals"));
      return out;
    }
    for (int i = 0; i < n.size(); i++) {
      SendWindow.Interval interval = interval(n.get(i), "sendWindow.allow[" + i + "]", tenant, id, errors);
      if (interval != null) {
        out.add(interval);
      }
    }
    return out;
  }

  private static SendWindow.Interval interval(JsonNode n, String field, String tenant, String id,
      List<PolicyError> errors) {
    if (!n.isObject()) {
      errors.add(new PolicyError(tenant, id, field, "each interval must be a map {days, from, to}"));
      return null;
    }
    int before = errors.size();
    PolicyParser.unknownFields(n, INTERVAL_FIELDS, tenant, id, field + ".", errors);
    Set<DayOfWeek> days = days(n.get("days"), field + ".days", tenant, id, errors);
    LocalTime from = time(n.get("from"), field + ".from", tenant, id, errors);
    LocalTime to = time(n.get("to"), field + ".to", tenant, id, errors);
    if (from != null && from.equals(to)) {
      errors.add(new PolicyError(tenant, id, field + ".to", "from and to are both " + n.get("from").asText()
          + "; an interval must not be empty (from > to spans midnight)"));
    }
    return errors.size() > before ? null : new SendWindow.Interval(days, from, to);
  }

  private static Set<DayOfWeek> days(JsonNode n, String field, String tenant, String id, List<PolicyError> errors) {
    if (n == null) {
      return EnumSet.allOf(DayOfWeek.class);
    }
    if (!n.isArray() || n.isEmpty()) {
      errors.add(new PolicyError(tenant, id, field, "days must be a non-empty list of mon, tue, wed, thu, fri, sat, "
          + "sun (leave it out for every day)"));
      return null;
    }
    Set<DayOfWeek> days = EnumSet.noneOf(DayOfWeek.class);
    for (JsonNode d : n) {
      int at = d.isTextual() ? DAY_NAMES.indexOf(d.asText().toLowerCase(Locale.ROOT)) : -1;
      if (at < 0) {
        errors.add(new PolicyError(tenant, id, field, "unknown day " + d + "; use mon, tue, wed, thu, fri, sat, sun"));
      } else if (!days.add(DayOfWeek.of(at + 1))) {
        errors.add(new PolicyError(tenant, id, field, "day " + d + " appears twice"));
      }
    }
    return days;
  }

  private static LocalTime time(JsonNode n, String field, String tenant, String id, List<PolicyError> errors) {
    String name = field.substring(field.lastIndexOf('.') + 1);
    if (n == null || n.isNull()) {
      errors.add(new PolicyError(tenant, id, field, name + " is required, a local time \"HH:MM\""));
      return null;
    }
    if (!n.isTextual() || !TIME.matcher(n.asText()).matches()) {
      errors.add(new PolicyError(tenant, id, field, name + " must be a local time \"HH:MM\" from 00:00 to 23:59 "
          + "(in quotes), got " + n));
      return null;
    }
    return LocalTime.parse(n.asText());
  }

  private static Set<LocalDate> closed(JsonNode n, String tenant, String id, List<PolicyError> errors) {
    Set<LocalDate> dates = new TreeSet<>();
    if (n == null || n.isNull()) {
      return dates;
    }
    if (!n.isArray()) {
      errors.add(new PolicyError(tenant, id, "sendWindow.closed", "closed must be a list of local dates "
          + "\"YYYY-MM-DD\""));
      return dates;
    }
    if (n.size() > MAX_CLOSED_DATES) {
      errors.add(new PolicyError(tenant, id, "sendWindow.closed", "at most " + MAX_CLOSED_DATES + " closed dates"));
      return dates;
    }
    for (int i = 0; i < n.size(); i++) {
      JsonNode d = n.get(i);
      String field = "sendWindow.closed[" + i + "]";
      try {
        if (!d.isTextual() || !DATE.matcher(d.asText()).matches()) {
          throw new DateTimeParseException("", d.asText(), 0);
        }
        dates.add(LocalDate.parse(d.asText()));
      } catch (DateTimeParseException e) {
        errors.add(new PolicyError(tenant, id, field, "not a date " + d + "; write a local date \"YYYY-MM-DD\", "
            + "e.g. \"2026-12-25\""));
      }
    }
    return dates;
  }

  static ObjectNode toTree(SendWindow w, ObjectMapper mapper) {
    ObjectNode n = mapper.createObjectNode();
    n.put("zone", w.recipientZone() ? PolicyParser.RECIPIENT_ZONE : w.zone().getId());
    ArrayNode allow = n.putArray("allow");
    for (SendWindow.Interval i : w.allow()) {
      ObjectNode o = allow.addObject();
      if (i.days().size() < 7) {
        ArrayNode days = o.putArray("days");
        i.days().forEach(d -> days.add(DAY_NAMES.get(d.getValue() - 1)));
      }
      o.put("from", HH_MM.format(i.from()));
      o.put("to", HH_MM.format(i.to()));
    }
    if (!w.closed().isEmpty()) {
      ArrayNode closed = n.putArray("closed");
      w.closed().forEach(d -> closed.add(d.toString()));
    }
    return n;
  }
}
