package dev.fcap.store;

/**
 * One counter of a partition in a request.
 *
 * @param key names the counter inside its partition; injective over the counter's identity
 * @param alignMs where calendar windows start: window starts are congruent to this modulo the window
 *     (0 = aligned to the epoch); only {@code fixed-window} reads it
 */
public record CounterRequest(byte[] key, CounterSpec spec, long alignMs) {}
