package io.giql.spark.write;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

import org.apache.parquet.format.ConvertedType;
import org.apache.parquet.format.DateType;
import org.apache.parquet.format.IntType;
import org.apache.parquet.format.LogicalType;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.Statistics;
import org.apache.parquet.format.Type;
import org.apache.spark.sql.catalyst.InternalRow;

/** The fixed-width columns: PLAIN values, little-endian. */
final class Numbers {
  private Numbers() {}

  static byte[] le(long v, int bytes) {
    ByteBuffer b = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    if (bytes == 8) {
      b.putLong(v);
    } else {
      b.putInt((int) v);
    }
    return b.array();
  }

  static void setMinMax(Statistics s, byte[] min, byte[] max) {
    s.setMin_value(min);
    s.setMax_value(max);
    // The old fields too, for readers of old footers; signed order is these types' order.
    s.setMin(min);
    s.setMax(max);
  }

  /** INT64: Spark's long. */
  static final class Longs extends Column {
    long[] v = new long[0];

    Longs(String name, boolean optional) {
      super(name, optional, Type.INT64);
    }

    @Override int width() { return 8; }
    @Override int capacity() { return v.length; }
    @Override void grow(int c) { v = Arrays.copyOf(v, c); }
    @Override void set(InternalRow row, int ord, int at) { v[at] = row.getLong(ord); }

    @Override
    void values(Bytes to, int from, int end) {
      to.putLongs(v, nullRows(), from, end);
    }

    @Override
    void minMax(Statistics s) {
      long lo = Long.MAX_VALUE, hi = Long.MIN_VALUE;
      boolean[] isNull = nullRows();
      for (int i = 0; i < rows; i++) {
        if (isNull == null || !isNull[i]) {
          lo = Math.min(lo, v[i]);
          hi = Math.max(hi, v[i]);
        }
      }
      setMinMax(s, le(lo, 8), le(hi, 8));
    }
  }

  /** INT32: Spark's byte, short, int and date (days since 1970-01-01). */
  static final class Ints extends Column {
    enum Kind { BYTE, SHORT, INT, DATE }

    final Kind kind;
    int[] v = new int[0];

    Ints(String name, boolean optional, Kind kind) {
      super(name, optional, Type.INT32);
      this.kind = kind;
    }

    @Override int width() { return 4; }
    @Override int capacity() { return v.length; }
    @Override void grow(int c) { v = Arrays.copyOf(v, c); }

    @Override
    void set(InternalRow row, int ord, int at) {
      switch (kind) {
        case BYTE: v[at] = row.getByte(ord); break;
        case SHORT: v[at] = row.getShort(ord); break;
        default: v[at] = row.getInt(ord);
      }
    }

    @Override
    void annotate(SchemaElement e) {
      switch (kind) {
        case BYTE:
          e.setConverted_type(ConvertedType.INT_8);
          e.setLogicalType(LogicalType.INTEGER(new IntType((byte) 8, true)));
          break;
        case SHORT:
          e.setConverted_type(ConvertedType.INT_16);
          e.setLogicalType(LogicalType.INTEGER(new IntType((byte) 16, true)));
          break;
        case DATE:
          e.setConverted_type(ConvertedType.DATE);
          e.setLogicalType(LogicalType.DATE(new DateType()));
          break;
        default:
      }
    }

    @Override
    void values(Bytes to, int from, int end) {
      to.putInts(v, nullRows(), from, end);
    }

    @Override
    void minMax(Statistics s) {
      int lo = Integer.MAX_VALUE, hi = Integer.MIN_VALUE;
      boolean[] isNull = nullRows();
      for (int i = 0; i < rows; i++) {
        if (isNull == null || !isNull[i]) {
          lo = Math.min(lo, v[i]);
          hi = Math.max(hi, v[i]);
        }
      }
      setMinMax(s, le(lo, 4), le(hi, 4));
    }
  }

  /** DOUBLE and FLOAT; no min and max when a NaN is among the values, as parquet-mr does. */
  static final class Doubles extends Column {
    final boolean single;
    double[] v = new double[0];

    Doubles(String name, boolean optional, boolean single) {
      super(name, optional, single ? Type.FLOAT : Type.DOUBLE);
      this.single = single;
    }

    @Override int width() { return single ? 4 : 8; }
    @Override int capacity() { return v.length; }
    @Override void grow(int c) { v = Arrays.copyOf(v, c); }

    @Override
    void set(InternalRow row, int ord, int at) {
      v[at] = single ? row.getFloat(ord) : row.getDouble(ord);
    }

    @Override
    void values(Bytes to, int from, int end) {
      to.reserve((end - from) * 8);
      for (int i = from; i < end; i++) {
        if (!isNull(i)) {
          if (single) {
            to.putInt(Float.floatToRawIntBits((float) v[i]));
          } else {
            to.putLong(Double.doubleToRawLongBits(v[i]));
          }
        }
      }
    }

    @Override
    void minMax(Statistics s) {
      double lo = Double.POSITIVE_INFINITY, hi = Double.NEGATIVE_INFINITY;
      for (int i = 0; i < rows; i++) {
        if (!isNull(i)) {
          if (Double.isNaN(v[i])) {
            return;
          }
          lo = Math.min(lo, v[i]);
          hi = Math.max(hi, v[i]);
        }
      }
      // A zero bound is written -0.0 as a minimum and +0.0 as a maximum (the format's rule).
      if (lo == 0.0) {
        lo = -0.0;
      }
      if (hi == 0.0) {
        hi = 0.0;
      }
      if (single) {
        setMinMax(s, le(Float.floatToRawIntBits((float) lo), 4), le(Float.floatToRawIntBits((float) hi), 4));
      } else {
        setMinMax(s, le(Double.doubleToRawLongBits(lo), 8), le(Double.doubleToRawLongBits(hi), 8));
      }
    }
  }

  /** BOOLEAN: PLAIN packs a bit per value, the first value in the lowest bit. */
  static final class Booleans extends Column {
    boolean[] v = new boolean[0];

    Booleans(String name, boolean optional) {
      super(name, optional, Type.BOOLEAN);
    }

    @Override int width() { return 1; }
    @Override int capacity() { return v.length; }
    @Override void grow(int c) { v = Arrays.copyOf(v, c); }
    @Override void set(InternalRow row, int ord, int at) { v[at] = row.getBoolean(ord); }

    @Override
    void values(Bytes to, int from, int end) {
      int bit = 0;
      int acc = 0;
      for (int i = from; i < end; i++) {
        if (isNull(i)) {
          continue;
        }
        if (v[i]) {
          acc |= 1 << bit;
        }
        if (++bit == 8) {
          to.put((byte) acc);
          bit = 0;
          acc = 0;
        }
      }
      if (bit > 0) {
        to.put((byte) acc);
      }
    }

    @Override
    void minMax(Statistics s) {
      boolean anyFalse = false, anyTrue = false;
      for (int i = 0; i < rows; i++) {
        if (!isNull(i)) {
          anyFalse |= !v[i];
          anyTrue |= v[i];
        }
      }
      setMinMax(s, new byte[] {(byte) (anyFalse ? 0 : 1)}, new byte[] {(byte) (anyTrue ? 1 : 0)});
    }
  }
}
