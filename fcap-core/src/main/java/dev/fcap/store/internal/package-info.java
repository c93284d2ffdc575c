/**
 * Not API: what the engine and the embedded store share beside the storage SPI, for a decision that
 * allocates nothing but its {@code Decision}: a request and an answer that the caller owns and refills
 * ({@link dev.fcap.store.internal.ReusableRequest}, {@link dev.fcap.store.internal.ReusableResult}),
 * the read view of either answer ({@link dev.fcap.store.PartitionAnswer}) and the store that
 * answers on the calling thread ({@link dev.fcap.store.internal.CallingThreadStore}). Public only
 * because Java shares a type across packages that way; nothing outside fcap-core uses it
 * (fcap-core's and fcap-server's {@code PackageLayoutTest}).
 */
package dev.fcap.store.internal;
