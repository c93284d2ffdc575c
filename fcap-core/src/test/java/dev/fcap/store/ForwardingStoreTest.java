package dev.fcap.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Every method of {@link Store} reaches the wrapped store through {@link ForwardingStore}, with the
 * arguments it was called with: a method added to {@code Store} and not passed on fails here. The
 * forms of {@code apply} are held to their own rule (every request through {@code apply}).
 */
class ForwardingStoreTest {
  /** A store that records every call made to it and answers with nothing. */
  private static final class Recorder {
    final List<Object[]> calls = new ArrayList<>();
    final Store store = (Store) Proxy.newProxyInstance(Store.class.getClassLoader(), new Class<?>[] {Store.class},
        (proxy, method, args) -> {
          Object[] call = new Object[1 + (args == null ? 0 : args.length)];
          call[0] = method.getName();
          if (args != null) {
            System.arraycopy(args, 0, call, 1, args.length);
          }
          calls.add(call);
          return empty(method.getReturnType());
        });
  }

  /** Methods whose rule is not "pass the same call on", each checked below. */
  private static final Set<String> OWN_RULE = Set.of("applyAll", "decorate");

  @Test
  void passesEveryMethodOfStoreOnWithItsArguments() throws Exception {
    Set<String> checked = new TreeSet<>();
    for (Method m : Store.class.getMethods()) {
      if (Modifier.isStatic(m.getModifiers()) || OWN_RULE.contains(m.getName())) {
        continue;
      }
      Recorder delegate = new Recorder();
      Object[] args = arguments(m.getParameterTypes());
      m.invoke(new ForwardingStore(delegate.store) {}, args);
      assertThat(delegate.calls).as("calls passed on by %s", m).hasSize(1);
      Object[] call = delegate.calls.get(0);
      assertThat(call[0]).as("the method %s passed on", m).isEqualTo(m.getName());
      for (int i = 0; i < args.length; i++) {
        if (m.getParameterTypes()[i].isPrimitive()) {
          assertThat(call[1 + i]).as("argument %d of %s", i, m).isEqualTo(args[i]);
        } else {
          assertThat(call[1 + i]).as("argument %d of %s", i, m).isSameAs(args[i]);
        }
      }
      checked.add(m.getName());
    }
    assertThat(checked).contains("apply", "read", "delete", "advanceCallerTimeFloor", "prefetch", "now", "close", "as");
  }

  @Test
  void aBatchComesThroughApplyOneRequestAtATime() {
    Recorder delegate = new Recorder();
    List<String> seen = new ArrayList<>();
    Store store = new ForwardingStore(delegate.store) {
      @Override
      public java.util.concurrent.CompletableFuture<PartitionResult> apply(PartitionRequest request) {
        seen.add("apply");
        return super.apply(request);
      }
    };
    store.applyAll(Arrays.asList(null, null));
    assertThat(seen).containsExactly("apply", "apply");
    assertThat(delegate.calls).extracting(c -> c[0]).containsExactly("apply", "apply");
  }

  @Test
  void nothingIsAnsweredOnTheCallingThreadPastTheDecorator() {
    Recorder delegate = new Recorder();
    Store store = new ForwardingStore(dev.fcap.store.memory.MemoryStore.builder().build()) {};
    assertThat(store).isNotInstanceOf(dev.fcap.store.internal.CallingThreadStore.class);
    assertThat(store.as(dev.fcap.store.internal.CallingThreadStore.class)).as("found behind it, not used through it")
        .isPresent();
  }

  @Test
  void findsItselfThenTheStoreItWrapsAndIsWrappedByDecorate() {
    Recorder delegate = new Recorder();
    ForwardingStore store = new ForwardingStore(delegate.store) {};
    assertThat(store.as(ForwardingStore.class)).containsSame(store);
    assertThat(delegate.calls).isEmpty();
    Store outer = store.decorate(inner -> new ForwardingStore(inner) {});
    assertThat(outer.as(Store.class)).containsSame(outer);
    assertThat(((ForwardingStore) outer).delegate()).isSameAs(store);
  }

  private static Object[] arguments(Class<?>[] types) {
    Object[] args = new Object[types.length];
    for (int i = 0; i < types.length; i++) {
      Class<?> t = types[i];
      args[i] = t == long.class ? (Object) 42L : t == int.class ? (Object) 7 : t == boolean.class ? (Object) true
          : t == byte[].class ? new byte[] {1} : t == byte[][].class ? new byte[][] {{2}}
          : t == Class.class ? String.class : t == List.class ? List.of() : null;
    }
    return args;
  }

  private static Object empty(Class<?> type) {
    if (type == long.class) {
      return 0L;
    }
    if (type == int.class) {
      return 0;
    }
    if (type == boolean.class) {
      return false;
    }
    return null;
  }
}
