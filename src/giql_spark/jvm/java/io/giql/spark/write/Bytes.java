package io.giql.spark.write;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;

/** A growable byte array written little-endian, as Parquet's PLAIN encoding lays values out. */
final class Bytes {
  private static final VarHandle LONG = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

  byte[] buf;
  int len;

  Bytes(int capacity) {
    buf = new byte[Math.max(16, capacity)];
  }

  void clear() {
    len = 0;
  }

  void reserve(int more) {
    if (len + more > buf.length) {
      buf = Arrays.copyOf(buf, Math.max(len + more, buf.length * 2));
    }
  }

  void putLong(long v) {
    reserve(8);
    LONG.set(buf, len, v);
    len += 8;
  }

  void putInt(int v) {
    reserve(4);
    INT.set(buf, len, v);
    len += 4;
  }

  /** An int at a position already written (a length written before what it counts). */
  void setInt(int at, int v) {
    INT.set(buf, at, v);
  }

  void put(byte b) {
    reserve(1);
    buf[len++] = b;
  }

  void put(byte[] src, int off, int n) {
    reserve(n);
    System.arraycopy(src, off, buf, len, n);
    len += n;
  }

  /** The values of rows [from, end) that are not NULL ({@code isNull} null: none is). */
  void putLongs(long[] v, boolean[] isNull, int from, int end) {
    reserve((end - from) * 8);
    byte[] b = buf;
    int at = len;
    for (int i = from; i < end; i++) {
      if (isNull == null || !isNull[i]) {
        LONG.set(b, at, v[i]);
        at += 8;
      }
    }
    len = at;
  }

  void putInts(int[] v, boolean[] isNull, int from, int end) {
    reserve((end - from) * 4);
    byte[] b = buf;
    int at = len;
    for (int i = from; i < end; i++) {
      if (isNull == null || !isNull[i]) {
        INT.set(b, at, v[i]);
        at += 4;
      }
    }
    len = at;
  }
}
