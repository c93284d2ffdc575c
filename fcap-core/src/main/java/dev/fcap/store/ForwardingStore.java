package dev.fcap.store;

import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The base of a decorator: a store that passes every call on to the store it wraps, so that a
 * decorator overrides only what it adds to and no method is lost on the way (a hint, a promise).
 *
 * <p>Every request comes through {@link #apply}, so that a decorator that overrides it sees them all:
 * {@link #applyAll} keeps the default (one {@code apply} per request), and a decorator is no
 * {@code CallingThreadStore} (nothing is answered past it on the calling thread). A
 * decorator that can pass a whole batch on (to keep a network store's pipeline) overrides
 * {@code applyAll} too. {@link #as} looks at this decorator, then at the store it wraps;
 * {@link #decorate} wraps this one. Abstract: a decorator that adds nothing is no decorator.
 */
public abstract class ForwardingStore implements Store {
  private final Store delegate;

  protected ForwardingStore(Store delegate) {
    this.delegate = Objects.requireNonNull(delegate, "delegate");
  }

  /** The store this one wraps. */
  protected final Store delegate() {
    return delegate;
  }

  @Override
  public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
    return delegate.apply(request);
  }

  @Override
  public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
    return delegate.read(partition);
  }

  @Override
  public CompletableFuture<Boolean> delete(byte[] partition) {
    return delegate.delete(partition);
  }

  @Override
  public void advanceCallerTimeFloor(long time) {
    delegate.advanceCallerTimeFloor(time);
  }

  @Override
  public void prefetch(byte[][] partitions, int n) {
    delegate.prefetch(partitions, n);
  }

  @Override
  public long now() {
    return delegate.now();
  }

  @Override
  public boolean keepsIdentity() {
    return delegate.keepsIdentity();
  }

  @Override
  public CompletableFuture<Optional<String>> checkIdentity() {
    return delegate.checkIdentity();
  }

  @Override
  public void close() {
    delegate.close();
  }

  @Override
  public boolean books() {
    return delegate.books();
  }

  @Override
  public <T> Optional<T> as(Class<T> type) {
    return type.isInstance(this) ? Optional.of(type.cast(this)) : delegate.as(type);
  }
}
