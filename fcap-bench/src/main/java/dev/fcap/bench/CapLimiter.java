package dev.fcap.bench;

import dev.fcap.model.Message;

/** One implementation under test: answers (and records) whether a message may go out now. */
interface CapLimiter {

  /** True iff admitted; an admitted message is counted against every limit. */
  boolean tryAcquire(Message m);

  /** Releases what the implementation holds (files, threads). */
  default void close() {}

  /** Key of the per-(recipient, content) limiters of the peers: cheap hash, no string building. */
  record RecipientContent(String recipient, String content) {}
}
