package dev.fcap.store;

/**
 * Asks a store whose suppression lists live beside the counters ({@link SuppressionList#checkedInStep})
 * to read the recipient's entry in the same atomic step as the request: an entry that covers a message
 * on {@code channel} of {@code category} (each may be null) at the step's time turns a DECIDE into a
 * dry run, and the answer carries the entry ({@link PartitionAnswer#suppressed}). Sent with the
 * request of the recipient's partition only.
 */
public record SuppressionCheck(String channel, String category) {}
