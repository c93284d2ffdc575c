package dev.fcap.store.internal;

import dev.fcap.store.Store;
import dev.fcap.store.StoreException;

/**
 * A store that can answer on the calling thread (the embedded one): the engine's fast path. Not
 * part of the storage SPI: a store author implements {@link Store} alone, and the engine then asks
 * {@link Store#apply}; decorators do not implement this, so every request behind one takes
 * {@code apply}.
 */
public interface CallingThreadStore extends Store {
  /**
   * {@link #apply} on the calling thread: reads {@code request} (what {@link ReusableRequest#toRequest()}
   * would be) and writes what {@code apply}'s future would complete with into {@code out}, both owned
   * and reused by the caller, and returns true, so a decision allocates no request, result, arrays or
   * future. The store keeps nothing of {@code request}: the caller may reuse its key arrays once this
   * returns. Returns false, with nothing done, when the store cannot answer here this time (it waits
   * for a write's sync): the caller then calls {@link #apply}.
   *
   * @throws StoreException where {@code apply}'s future would fail with it
   */
  boolean applyInto(ReusableRequest request, ReusableResult out);

  /**
   * Whether {@link #applyInto} answers on the calling thread. It depends on the store's settings
   * alone, so a caller asks once, and builds its requests where they will be read: in buffers it
   * reuses for such a store, in arrays of their own for one that may keep them.
   */
  boolean answersOnCallingThread();
}
