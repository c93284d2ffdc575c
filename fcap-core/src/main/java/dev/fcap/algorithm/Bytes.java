package dev.fcap.algorithm;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** Big-endian reads and writes into byte arrays: the wire format shared with the Lua scripts. */
final class Bytes {
  private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
  private static final VarHandle SHORT = MethodHandles.byteArrayViewVarHandle(short[].class, ByteOrder.BIG_ENDIAN);

  private Bytes() {}

  /** The length of a whole state (null, the empty counter: 0), for the slice forms of the algorithms. */
  static int length(byte[] state) {
    return state == null ? 0 : state.length;
  }

  static long getLong(byte[] b, int at) {
    return (long) LONG.get(b, at);
  }

  static void putLong(byte[] b, int at, long v) {
    LONG.set(b, at, v);
  }

  static long getUint(byte[] b, int at) {
    return Integer.toUnsignedLong((int) INT.get(b, at));
  }

  static void putUint(byte[] b, int at, long v) {
    INT.set(b, at, (int) v);
  }

  static int getUshort(byte[] b, int at) {
    return Short.toUnsignedInt((short) SHORT.get(b, at));
  }

  static void putUshort(byte[] b, int at, int v) {
    SHORT.set(b, at, (short) v);
  }
}
