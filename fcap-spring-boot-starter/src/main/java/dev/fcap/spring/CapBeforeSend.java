package dev.fcap.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Decide before send: the annotated method runs only if fcap admits the message it describes;
 * otherwise it is not called and {@link MessageCappedException} (with the decision: which rules,
 * when to retry) is thrown. If the method throws, the send failed: the decision is released and the
 * exception propagates. A parameter of type {@link dev.fcap.client.Decision} receives the decision
 * (whatever the caller passed).
 *
 * <pre>{@code
 * @CapBeforeSend(recipient = "#to", content = "#text", channel = "sms")
 * public void send(String to, String text) { gateway.send(to, text); }
 * }</pre>
 *
 * <p>With {@link #defer()}, a message that may not go now is booked for the earliest instant every rule
 * admits it ({@link dev.fcap.client.Defer}). A method with a {@code Decision} parameter then runs with
 * the deferred decision, to schedule the send at its {@code sendAt} (if it throws, the booking is
 * released); a method without one is not called, and the {@link MessageCappedException} says
 * {@link MessageCappedException#deferred() deferred} and when to send. Either way the slot is already
 * counted: send the message then without deciding again, or release its {@code decisionId}.
 *
 * <pre>{@code
 * @CapBeforeSend(recipient = "#to", content = "#text", defer = true)
 * public void send(String to, String text, Decision slot) {
 *   if (slot.deferred()) {
 *     scheduler.schedule(() -> gateway.send(to, text), Instant.ofEpochMilli(slot.sendAt()));
 *   } else {
 *     gateway.send(to, text);
 *   }
 * }
 * }</pre>
 *
 * <p>{@link #recipient()}, {@link #content()}, {@link #contentKey()} and {@link #timeZone()} are Spring
 * expressions over the method's arguments ({@code #to}, {@code #sms.phone}, or {@code #p0} without
 * {@code -parameters}); {@link #tenant()}, {@link #channel()}, {@link #sender()} and {@link #category()}
 * are literal values. The bean must be a Spring bean whose class and method are not final (it is proxied).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface CapBeforeSend {
  /** Expression: the recipient (required). */
  String recipient();

  /** Expression: the exact content; empty: none. */
  String content() default "";

  /** Expression: the content's identity (template id and variables); empty: none. */
  String contentKey() default "";

  String tenant() default "";

  String channel() default "";

  String sender() default "";

  String category() default "";

  /**
   * Expression: the recipient's time zone, an IANA id or a {@link java.time.ZoneId} (e.g.
   * {@code #user.zone}); empty: none (the policy's zone, else UTC).
   */
  String timeZone() default "";

  /**
   * How much of a rule's limit the message may use, given the headroom a rule keeps for the classes
   * above it; a literal value, {@link dev.fcap.client.Priority#NORMAL} by default.
   */
  dev.fcap.client.Priority priority() default dev.fcap.client.Priority.NORMAL;

  /**
   * Book the message for later if it may not go now, rather than refuse it; if no instant by
   * {@link #notAfter()} admits it, it is refused as without a deferral.
   */
  boolean defer() default false;

  /**
   * Expression, with {@link #defer()}: the latest instant to book at, an {@link java.time.Instant}, epoch
   * milliseconds or ISO-8601 text (e.g. {@code #campaign.endsAt}); empty: the decision's time plus the
   * policy's longest window, at most 7 days.
   */
  String notAfter() default "";
}
