package dev.fcap.store.memory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;

/**
 * A journal file on a disk with {@link #room} bytes left, as the kernel writes on one: a write
 * takes what fits and returns short, the next fails with "No space left on device"; a force fails
 * while {@link #failForce} is set; a truncation gives its bytes back. Everything else goes to the
 * real file.
 */
final class FullDiskChannel extends FileChannel {
  private final FileChannel file;
  volatile long room;
  volatile boolean failForce;

  FullDiskChannel(FileChannel file, long room) {
    this.file = file;
    this.room = room;
  }

  @Override
  public int write(ByteBuffer src) throws IOException {
    if (room <= 0 && src.hasRemaining()) {
      throw new IOException("No space left on device");
    }
    int fits = (int) Math.min(src.remaining(), room);
    ByteBuffer part = src.duplicate();
    part.limit(part.position() + fits);
    int n = file.write(part);
    src.position(src.position() + n);
    room -= n;
    return n;
  }

  @Override
  public FileChannel truncate(long size) throws IOException {
    room += Math.max(0, file.size() - size);
    file.truncate(size);
    return this;
  }

  @Override
  public void force(boolean metaData) throws IOException {
    if (failForce) {
      throw new IOException("Input/output error");
    }
    file.force(metaData);
  }

  @Override
  public long position() throws IOException {
    return file.position();
  }

  @Override
  public FileChannel position(long newPosition) throws IOException {
    file.position(newPosition);
    return this;
  }

  @Override
  public long size() throws IOException {
    return file.size();
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    return file.read(dst);
  }

  @Override
  public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
    return file.read(dsts, offset, length);
  }

  @Override
  public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
    throw new UnsupportedOperationException("the journal writes one buffer at a time");
  }

  @Override
  public int read(ByteBuffer dst, long position) throws IOException {
    return file.read(dst, position);
  }

  @Override
  public int write(ByteBuffer src, long position) throws IOException {
    throw new UnsupportedOperationException("the journal writes at its position");
  }

  @Override
  public long transferTo(long position, long count, WritableByteChannel target) throws IOException {
    return file.transferTo(position, count, target);
  }

  @Override
  public long transferFrom(ReadableByteChannel src, long position, long count) throws IOException {
    throw new UnsupportedOperationException("the journal writes one buffer at a time");
  }

  @Override
  public MappedByteBuffer map(MapMode mode, long position, long size) throws IOException {
    return file.map(mode, position, size);
  }

  @Override
  public FileLock lock(long position, long size, boolean shared) throws IOException {
    return file.lock(position, size, shared);
  }

  @Override
  public FileLock tryLock(long position, long size, boolean shared) throws IOException {
    return file.tryLock(position, size, shared);
  }

  @Override
  protected void implCloseChannel() throws IOException {
    file.close();
  }
}
