package dev.fcap.store;

import dev.fcap.model.Algorithm;

/** The raw state of one counter, as read by {@link Store#read}; interpreted by the algorithm. */
public record StoredCounter(byte[] key, Algorithm algorithm, byte[] state) {}
