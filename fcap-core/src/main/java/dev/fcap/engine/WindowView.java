package dev.fcap.engine;

import dev.fcap.model.Condition;
import java.time.ZoneId;

/**
 * One send-window rule of a recipient's policy as {@code inspect} shows it. Whether a window applies
 * to a message may depend on the message ({@code match}, {@code exempt}), so inspection lists every
 * send-window rule of the policy with its conditions.
 *
 * @param zone the zone whose wall clock the window reads for this recipient
 * @param open whether the window is open at the inspection's time
 * @param opensAt the inspection's time if open; otherwise the epoch milliseconds of its next opening,
 *     -1 if it never opens
 */
public record WindowView(
    String ruleId,
    boolean enforced,
    ZoneId zone,
    boolean open,
    long opensAt,
    Condition match,
    Condition exempt) {}
