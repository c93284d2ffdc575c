package dev.fcap.bench;

import dev.fcap.model.Algorithm;
import dev.fcap.model.CalendarUnit;
import dev.fcap.model.Condition;
import dev.fcap.model.Dimension;
import dev.fcap.model.Message;
import dev.fcap.model.Mode;
import dev.fcap.model.Policy;
import dev.fcap.model.Rule;
import dev.fcap.model.SendWindow;
import java.time.DayOfWeek;
import java.time.Duration;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The seed policy plus the rules that read the recipient's own time, as a marketing sender adds them:
 * quiet hours (messages go 08:00-21:00 local time, every day) and at most {@link #PER_LOCAL_DAY} per
 * recipient per local calendar day. Every message carries its recipient's zone, one of {@link #ZONES}
 * chosen by the recipient id, so a recipient keeps its zone and the traffic spans the day's hours: at
 * any instant some zones are inside the window and some are refused by it.
 */
public final class LocalTimePolicy {
  /** The recipients' zones: the Americas, Europe, India, China and Australia. */
  public static final List<ZoneId> ZONES = List.of(ZoneId.of("America/New_York"), ZoneId.of("Europe/London"),
      ZoneId.of("Asia/Kolkata"), ZoneId.of("Asia/Shanghai"), ZoneId.of("Australia/Sydney"));
  public static final int PER_LOCAL_DAY = 50;

  static final Rule QUIET_HOURS = Rule.ofSendWindow("quiet-hours", null,
      new SendWindow(null, List.of(new SendWindow.Interval(EnumSet.allOf(DayOfWeek.class), LocalTime.of(8, 0),
          LocalTime.of(21, 0))), Set.of()), null, null, Mode.ENFORCE);
  static final Rule PER_DAY_LOCAL = new Rule("recipient-per-local-day", null, PER_LOCAL_DAY, Duration.ofDays(1),
      List.of(Dimension.RECIPIENT), Condition.ANY, null, Algorithm.FIXED_WINDOW, 0, Mode.ENFORCE, null, true,
      CalendarUnit.DAY, null);

  private LocalTimePolicy() {}

  /** {@code seed} with the send window and the local-day cap after its rules. */
  public static Policy of(Policy seed) {
    List<Rule> rules = new ArrayList<>(seed.rules());
    rules.add(QUIET_HOURS);
    rules.add(PER_DAY_LOCAL);
    return seed.withRules(rules);
  }

  /** The same message carrying its recipient's zone. */
  public static Message inZone(Message m) {
    return new Message(m.tenant(), m.recipient(), m.channel(), m.sender(), m.category(), m.content(), m.contentKey(),
        m.attributes(), m.cost(), m.messageId(), zoneOf(m.recipient()));
  }

  /** The zone of a recipient: fixed for the recipient, spread evenly over {@link #ZONES}. */
  public static ZoneId zoneOf(String recipient) {
    return ZONES.get(Math.floorMod(recipient.hashCode() * 0x9E3779B9, ZONES.size()));
  }
}
