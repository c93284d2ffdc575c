package dev.fcap.store.memory;

import java.util.Collection;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Which recipients a tenant's suppression list may hold: a Bloom filter of one 64-bit word per
 * recipient (three bits set in it), 8 to 16 bits per entry, so that a decision for one of the
 * millions of recipients not on a long list reads one word (in the cache: 1 to 2 MB for 10^6
 * entries) instead of a random slot of the list's map (a miss to memory). A "maybe" (the entries,
 * and a few percent of the others) is answered by the map.
 *
 * <p>Only grows: a removed entry leaves its bits (a "maybe" the map answers "no"); a list that
 * outgrows the filter gets a new one, built from the map before anything is added to it. Bits are
 * set before the map holds the entry, with volatile writes, so a decision that sees the entry's
 * effects can never miss its bits.
 */
final class RecipientFilter {
  private final AtomicLongArray words;
  private final int mask;
  /** The entries it holds at 8 bits each or more; past that its "maybe" rate grows. */
  final int capacity;

  private RecipientFilter(int capacity) {
    int n = Integer.highestOneBit(Math.max(64, capacity / 8) - 1) << 1;
    this.words = new AtomicLongArray(n);
    this.mask = n - 1;
    this.capacity = n * 8;
  }

  /** A filter for at least {@code capacity} entries holding {@code recipients}. */
  static RecipientFilter of(int capacity, Collection<String> recipients) {
    RecipientFilter f = new RecipientFilter(Math.max(capacity, recipients.size()));
    for (String r : recipients) {
      f.add(r);
    }
    return f;
  }

  void add(String recipient) {
    long m = mix(recipient.hashCode());
    words.getAndAccumulate(index(m), bits(m), (a, b) -> a | b);
  }

  /** False only if the list never held {@code recipient}. */
  boolean mayContain(String recipient) {
    long m = mix(recipient.hashCode());
    long bits = bits(m);
    return (words.get(index(m)) & bits) == bits;
  }

  private int index(long m) {
    return (int) (m >>> 40) & mask;
  }

  private static long bits(long m) {
    return 1L << (m & 63) | 1L << (m >>> 6 & 63) | 1L << (m >>> 12 & 63);
  }

  /** A 64-bit mix of a string's cached hash (SplitMix64's finalizer). */
  private static long mix(int h) {
    long x = h * 0x9E3779B97F4A7C15L;
    x = (x ^ x >>> 30) * 0xBF58476D1CE4E5B9L;
    x = (x ^ x >>> 27) * 0x94D049BB133111EBL;
    return x ^ x >>> 31;
  }
}
