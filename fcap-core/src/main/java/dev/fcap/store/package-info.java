/**
 * The storage SPI: what the engine asks of a store. A new store implements {@link dev.fcap.store.Store}
 * (one atomic {@link dev.fcap.store.PartitionRequest} at a time, answered by a
 * {@link dev.fcap.store.PartitionResult}) and passes {@code StoreContract}; the
 * {@link dev.fcap.store.CounterSpec} a request carries is handed on to {@code PartitionStep}, never built
 * by a store. {@link dev.fcap.store.Varint} is public only because the memory store's journal
 * ({@code store.memory}) and fcap-redis encode keys with it: it is not API and may change (Java shares a
 * type across packages and jars only by making it public; a {@code module-info} per jar would have to
 * be kept working by the tests in the same packages, the shaded {@code fcap} jar and the Spring starter,
 * for a boundary this note states).
 */
package dev.fcap.store;
