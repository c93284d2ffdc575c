package dev.fcap.store.memory;

import dev.fcap.model.Suppression;
import dev.fcap.store.SuppressionList;
import dev.fcap.time.Clock;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.CRC32;

/**
 * The embedded store's suppression lists: a concurrent map per tenant, read by every decision in
 * this process without a lock, and (for a durable store) a log file beside the journal.
 *
 * <p><b>Durability.</b> Every change is appended to the log as a framed record ({@code len:i32
 * crc32:i32 payload}) and forced to disk before the map changes and the call returns, so a change
 * that answered survives a {@code kill -9} or a power loss. An import forces once per batch. On
 * open the log is replayed; a torn or damaged tail (a crash mid-append) is cut off. When the log
 * holds many more records than live entries it is rewritten (a temporary file, forced, then renamed
 * over it), dropping removed and expired entries.
 *
 * <p>Writers are serialized (one lock: the log's order is the map's); readers never wait.
 */
public final class LocalSuppressions implements SuppressionList {
  /** The log's name in the store's state directory. */
  static final String FILE = "suppressions.log";
  private static final byte PUT = 1;
  private static final byte REMOVE = 2;
  private static final int MAX_RECORD = 1 << 20;

  private final Clock clock;
  private final ConcurrentHashMap<String, ConcurrentHashMap<String, Suppression>> tenants = new ConcurrentHashMap<>();
  /** Per tenant with a list: which recipients it may hold, read first by {@link #find}. */
  private final ConcurrentHashMap<String, RecipientFilter> filters = new ConcurrentHashMap<>();
  /** Null: memory only. */
  private final Path file;
  private FileChannel log;

  private LocalSuppressions(Clock clock, Path file) {
    this.clock = clock;
    this.file = file;
  }

  /** Lists kept in memory only. */
  public static LocalSuppressions inMemory(Clock clock) {
    return new LocalSuppressions(clock, null);
  }

  /** Lists kept in {@code dir} (its log replayed now). */
  public static LocalSuppressions open(Path dir, Clock clock) {
    LocalSuppressions s = new LocalSuppressions(clock, dir.resolve(FILE));
    try {
      Files.createDirectories(dir);
      s.recover();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the suppression list " + s.file, e);
    }
    return s;
  }

  @Override
  public Suppression find(String tenant, String recipient, String channel, String category, long now) {
    RecipientFilter filter = filters.get(tenant); // every tenant that ever had an entry has one
    if (filter == null || !filter.mayContain(recipient)) {
      return null; // the usual case: no list, or a recipient not on it (one word in the cache, no miss into the map)
    }
    Map<String, Suppression> list = tenants.get(tenant);
    Suppression s = list == null ? null : list.get(recipient);
    return s != null && s.covers(channel, category, now) ? s : null;
  }

  @Override
  public void put(String tenant, Suppression entry) {
    putAll(tenant, List.of(entry));
  }

  @Override
  public synchronized void putAll(String tenant, List<Suppression> entries) {
    if (entries.isEmpty()) {
      return;
    }
    ByteArrayOutputStream records = new ByteArrayOutputStream(entries.size() * 64);
    for (Suppression e : entries) {
      frame(records, payload(PUT, tenant, e.recipient(), e));
    }
    append(records.toByteArray());
    ConcurrentHashMap<String, Suppression> list = tenants.computeIfAbsent(tenant, t -> new ConcurrentHashMap<>());
    RecipientFilter filter = filterFor(tenant, list, list.size() + entries.size());
    for (Suppression e : entries) {
      filter.add(e.recipient()); // before the map holds it: a reader that finds the entry finds its bits
      list.put(e.recipient(), e);
    }
  }

  @Override
  public Optional<Suppression> get(String tenant, String recipient) {
    Map<String, Suppression> list = tenants.get(tenant);
    Suppression s = list == null ? null : list.get(recipient);
    return s == null || s.expiredAt(clock.millis()) ? Optional.empty() : Optional.of(s);
  }

  @Override
  public synchronized boolean remove(String tenant, String recipient) {
    Map<String, Suppression> list = tenants.get(tenant);
    Suppression s = list == null ? null : list.get(recipient);
    if (s == null) {
      return false;
    }
    ByteArrayOutputStream record = new ByteArrayOutputStream(64);
    frame(record, payload(REMOVE, tenant, recipient, null));
    append(record.toByteArray());
    list.remove(recipient);
    return !s.expiredAt(clock.millis());
  }

  /**
   * A page in recipient order: one pass over the tenant's entries keeping the {@code limit} smallest
   * after the cursor (a heap), so a page costs one scan and no sorted copy of the list.
   */
  @Override
  public List<Suppression> page(String tenant, String cursor, int limit) {
    Map<String, Suppression> list = tenants.get(tenant);
    if (list == null || limit <= 0) {
      return List.of();
    }
    long now = clock.millis();
    PriorityQueue<Suppression> largestFirst = new PriorityQueue<>(
        Comparator.comparing(Suppression::recipient).reversed());
    for (Suppression s : list.values()) {
      if ((cursor == null || s.recipient().compareTo(cursor) > 0) && !s.expiredAt(now)) {
        largestFirst.add(s);
        if (largestFirst.size() > limit) {
          largestFirst.poll();
        }
      }
    }
    List<Suppression> page = new ArrayList<>(largestFirst);
    page.sort(Comparator.comparing(Suppression::recipient));
    return page;
  }

  @Override
  public long size(String tenant) {
    Map<String, Suppression> list = tenants.get(tenant);
    return list == null ? 0 : list.size();
  }

  /** The tenant's filter, replaced by a larger one (holding the list) when it would hold more than it was built for. */
  private RecipientFilter filterFor(String tenant, Map<String, Suppression> list, int entries) {
    RecipientFilter f = filters.get(tenant);
    if (f == null || entries > f.capacity) {
      f = RecipientFilter.of(entries + entries / 2, list.keySet());
      filters.put(tenant, f);
    }
    return f;
  }

  /** The tenants with a list, for metrics. */
  public List<String> tenants() {
    return List.copyOf(tenants.keySet());
  }

  /** Forces nothing more (every change was forced when made) and closes the log. */
  public synchronized void close() {
    if (log != null) {
      try {
        log.close();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } finally {
        log = null;
      }
    }
  }

  private void append(byte[] records) {
    if (file == null) {
      return;
    }
    try {
      if (log == null) {
        log = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
      }
      ByteBuffer b = ByteBuffer.wrap(records);
      while (b.hasRemaining()) {
        log.write(b);
      }
      log.force(false);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the suppression list " + file, e);
    }
  }

  private static void frame(ByteArrayOutputStream out, byte[] payload) {
    CRC32 crc = new CRC32();
    crc.update(payload);
    out.writeBytes(ByteBuffer.allocate(8).putInt(payload.length).putInt((int) crc.getValue()).array());
    out.writeBytes(payload);
  }

  private static byte[] payload(byte op, String tenant, String recipient, Suppression e) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(64);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(op);
      out.writeUTF(tenant);
      out.writeUTF(recipient);
      if (e != null) {
        writeList(out, e.channels());
        writeList(out, e.categories());
        out.writeUTF(e.reason());
        out.writeUTF(e.addedBy());
        out.writeLong(e.addedAt());
        out.writeLong(e.expiresAt());
      }
    } catch (IOException impossible) {
      throw new UncheckedIOException(impossible);
    }
    return bytes.toByteArray();
  }

  private static void writeList(DataOutputStream out, List<String> values) throws IOException {
    out.writeByte(values.size());
    for (String v : values) {
      out.writeUTF(v);
    }
  }

  private static List<String> readList(DataInputStream in) throws IOException {
    int n = in.readUnsignedByte();
    List<String> values = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      values.add(in.readUTF());
    }
    return values;
  }

  /** Replays the log; cuts a damaged tail; rewrites the log when it holds mostly dead records. */
  private void recover() throws IOException {
    if (!Files.exists(file)) {
      return;
    }
    long good = 0;
    long records = 0;
    try (InputStream raw = Files.newInputStream(file);
        DataInputStream in = new DataInputStream(new java.io.BufferedInputStream(raw, 1 << 16))) {
      while (true) {
        int len;
        try {
          len = in.readInt();
        } catch (EOFException end) {
          break;
        }
        int crc = in.readInt();
        if (len <= 0 || len > MAX_RECORD) {
          break;
        }
        byte[] payload = new byte[len];
        in.readFully(payload);
        CRC32 c = new CRC32();
        c.update(payload);
        if ((int) c.getValue() != crc) {
          break;
        }
        replay(payload);
        good += 8 + len;
        records++;
      }
    } catch (EOFException torn) {
      // a record cut short by a crash: it never answered, so it is dropped below
    }
    if (good < Files.size(file)) {
      try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
        c.truncate(good);
        c.force(true);
      }
    }
    long live = 0;
    for (Map.Entry<String, ConcurrentHashMap<String, Suppression>> t : tenants.entrySet()) {
      live += t.getValue().size();
      filters.put(t.getKey(), RecipientFilter.of(t.getValue().size() + t.getValue().size() / 2, t.getValue().keySet()));
    }
    if (records > 2 * live + 1024) {
      rewrite();
    }
  }

  private void replay(byte[] payload) throws IOException {
    DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(payload));
    byte op = in.readByte();
    String tenant = in.readUTF();
    String recipient = in.readUTF();
    if (op == REMOVE) {
      Map<String, Suppression> list = tenants.get(tenant);
      if (list != null) {
        list.remove(recipient);
      }
      return;
    }
    Suppression e = new Suppression(recipient, readList(in), readList(in), in.readUTF(), in.readUTF(), in.readLong(),
        in.readLong());
    tenants.computeIfAbsent(tenant, t -> new ConcurrentHashMap<>()).put(recipient, e);
  }

  /** The live entries alone, in a new log that replaces the old one atomically. */
  private void rewrite() throws IOException {
    long now = clock.millis();
    Path tmp = file.resolveSibling(FILE + ".tmp");
    try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
        StandardOpenOption.TRUNCATE_EXISTING);
        var stream = new java.io.BufferedOutputStream(Channels.newOutputStream(out), 1 << 16)) {
      for (Map.Entry<String, ConcurrentHashMap<String, Suppression>> t : tenants.entrySet()) {
        for (Suppression e : t.getValue().values()) {
          if (e.expiredAt(now)) {
            t.getValue().remove(e.recipient());
            continue;
          }
          ByteArrayOutputStream record = new ByteArrayOutputStream(64);
          frame(record, payload(PUT, t.getKey(), e.recipient(), e));
          record.writeTo(stream);
        }
      }
      stream.flush();
      out.force(true);
    }
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
      dir.force(true);
    }
  }
}
