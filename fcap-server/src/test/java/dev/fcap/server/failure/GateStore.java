package dev.fcap.server.failure;

import dev.fcap.store.ForwardingStore;
import dev.fcap.store.PartitionRequest;
import dev.fcap.store.PartitionResult;
import dev.fcap.store.PartitionSnapshot;
import dev.fcap.store.Store;
import dev.fcap.store.StoreException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * A real store behind a gate the test controls: {@link Mode#UP} passes calls, {@link Mode#DOWN} fails
 * them as unreachable, {@link Mode#HOLD} keeps them (each already applied to the store, as Redis
 * would have run a script whose answer is late) until {@link #release()} delivers the answers;
 * {@link Mode#UNACKED} runs every write and reads but answers each write as failed (as a Redis whose
 * {@code WAIT} saw no replica acknowledge: the write stays, the caller hears "unavailable").
 */
final class GateStore extends ForwardingStore {
  enum Mode { UP, DOWN, HOLD, UNACKED }

  volatile Mode mode = Mode.UP;
  final List<Integer> callSizes = new ArrayList<>();
  /** The hints ({@code prefetch}) and caller-time floors that reached the store, in order. */
  final List<String> passedOn = new ArrayList<>();
  private final List<Runnable> held = new ArrayList<>();

  GateStore(Store delegate) {
    super(delegate);
  }

  private synchronized <T> CompletableFuture<T> gate(Supplier<CompletableFuture<T>> call) {
    return gate(call, false);
  }

  private synchronized <T> CompletableFuture<T> gate(Supplier<CompletableFuture<T>> call, boolean writes) {
    return switch (mode) {
      case UP -> call.get();
      case UNACKED -> writes ? call.get().thenCompose(v -> CompletableFuture.failedFuture(
          new StoreException(StoreException.Reason.UNAVAILABLE, "written, but no replica acknowledged (test)")))
          : call.get();
      case DOWN -> CompletableFuture.failedFuture(new StoreException(StoreException.Reason.UNAVAILABLE,
          "connection refused (test)"));
      case HOLD -> {
        CompletableFuture<T> answer = call.get();
        CompletableFuture<T> late = new CompletableFuture<>();
        held.add(() -> answer.whenComplete((v, e) -> {
          if (e == null) {
            late.complete(v);
          } else {
            late.completeExceptionally(e);
          }
        }));
        yield late;
      }
    };
  }

  /** Delivers every held answer. */
  void release() {
    List<Runnable> now;
    synchronized (this) {
      now = new ArrayList<>(held);
      held.clear();
    }
    now.forEach(Runnable::run);
  }

  @Override
  public CompletableFuture<PartitionResult> apply(PartitionRequest request) {
    return gate(() -> super.apply(request), true);
  }

  @Override
  public List<CompletableFuture<PartitionResult>> applyAll(List<PartitionRequest> requests) {
    synchronized (this) {
      callSizes.add(requests.size());
    }
    List<CompletableFuture<PartitionResult>> out = new ArrayList<>();
    for (PartitionRequest r : requests) {
      out.add(apply(r));
    }
    return out;
  }

  @Override
  public synchronized void prefetch(byte[][] partitions, int n) {
    passedOn.add("prefetch " + n);
    super.prefetch(partitions, n);
  }

  @Override
  public synchronized void advanceCallerTimeFloor(long time) {
    passedOn.add("floor " + time);
    super.advanceCallerTimeFloor(time);
  }

  @Override
  public CompletableFuture<PartitionSnapshot> read(byte[] partition) {
    return gate(() -> super.read(partition));
  }

  @Override
  public CompletableFuture<Boolean> delete(byte[] partition) {
    return gate(() -> super.delete(partition));
  }
}
