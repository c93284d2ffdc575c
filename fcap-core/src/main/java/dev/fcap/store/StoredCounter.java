package dev.fcap.store;

import dev.fcap.model.Algorithm;

/**
 * The raw state of one counter, as read by {@link Store#read}; interpreted by the algorithm. A
 * {@code null} state is a large sliding log ({@code LargeLog}: up to 10^7 entries), which is not
 * read whole (on Redis that would block the server for seconds): ask a dry run
 * ({@link Operation#CHECK}) of that counter instead, which evaluates it in O(log n).
 */
public record StoredCounter(byte[] key, Algorithm algorithm, byte[] state) {}
