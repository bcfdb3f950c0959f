package io.giql.spark.columns;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.vectorized.Dictionary;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.BooleanType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType$;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType$;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.ShortType$;
import org.apache.spark.sql.types.StringType$;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

import io.giql.spark.Check;
import io.giql.spark.compat.Scala;

/**
 * {@link VectorRow} against Spark's projection of the same batch rows: random batches of
 * fixed-width and string columns with NULLs, strings plain and dictionary-encoded (long runs of
 * one id and random ids, a new dictionary per batch), columns projected in any order, some
 * twice, some not at all, with and without a bigint slot the caller fills per row; and the
 * projections it must refuse.
 */
public final class VectorRowTest {
  private VectorRowTest() {}

  private static final DataType[] TYPES = {LongType$.MODULE$, IntegerType$.MODULE$,
    ShortType$.MODULE$, DoubleType$.MODULE$, BooleanType$.MODULE$, DateType$.MODULE$,
    StringType$.MODULE$, StringType$.MODULE$};

  private static String word(Random rnd) {
    return "chr" + rnd.nextInt(30) + "x".repeat(rnd.nextInt(12));
  }

  private static ColumnVector column(Random rnd, DataType t, int n, boolean dictionary) {
    OnHeapColumnVector v = new OnHeapColumnVector(n, t);
    if (t == StringType$.MODULE$ && dictionary) {
      String[] words = new String[1 + rnd.nextInt(6)];
      for (int i = 0; i < words.length; i++) words[i] = word(rnd);
      WritableColumnVector ids = v.reserveDictionaryIds(n);
      boolean runs = rnd.nextBoolean();
      int id = 0;
      for (int r = 0; r < n; r++) {
        if (!runs || rnd.nextInt(50) == 0) id = rnd.nextInt(words.length);
        ids.putInt(r, id);
        if (rnd.nextInt(7) == 0) v.putNull(r);
      }
      v.setDictionary(new Dictionary() {
        public int decodeToInt(int i) { throw new UnsupportedOperationException(); }
        public long decodeToLong(int i) { throw new UnsupportedOperationException(); }
        public float decodeToFloat(int i) { throw new UnsupportedOperationException(); }
        public double decodeToDouble(int i) { throw new UnsupportedOperationException(); }
        public byte[] decodeToBinary(int i) { return words[i].getBytes(StandardCharsets.UTF_8); }
      });
      return v;
    }
    for (int r = 0; r < n; r++) {
      if (rnd.nextInt(7) == 0) {
        v.putNull(r);
      } else if (t == LongType$.MODULE$) {
        v.putLong(r, rnd.nextLong());
      } else if (t == IntegerType$.MODULE$ || t == DateType$.MODULE$) {
        v.putInt(r, rnd.nextInt());
      } else if (t == ShortType$.MODULE$) {
        v.putShort(r, (short) rnd.nextInt());
      } else if (t == DoubleType$.MODULE$) {
        v.putDouble(r, rnd.nextDouble());
      } else if (t == BooleanType$.MODULE$) {
        v.putBoolean(r, rnd.nextBoolean());
      } else {
        v.putByteArray(r, word(rnd).getBytes(StandardCharsets.UTF_8));
      }
    }
    return v;
  }

  public static void run(Check c) {
    c.test("VectorRow: rows off the vectors, as Spark projects the batch rows", () -> {
      Random rnd = new Random(5);
      for (int round = 0; round < 100; round++) {
        int cols = 1 + rnd.nextInt(6);
        DataType[] types = new DataType[cols];
        for (int i = 0; i < cols; i++) types[i] = TYPES[rnd.nextInt(TYPES.length)];
        List<Expression> project = new ArrayList<>();
        for (int k = 1 + rnd.nextInt(cols + 2); k > 0; k--) {
          int o = rnd.nextInt(cols);
          project.add(new BoundReference(o, types[o], true));
        }
        // a slot: Spark's projection reads it as the column after the scan's, off a joined row
        int slot = rnd.nextBoolean() ? rnd.nextInt(project.size() + 1) : -1;
        VectorRow vr = slot < 0 ? VectorRow.of(Scala.seq(project))
            : VectorRow.of(Scala.seq(project), slot);
        Check.equal(true, vr != null, "a writer for scan columns of these types");
        List<Expression> full = new ArrayList<>(project);
        if (slot >= 0) full.add(slot, new BoundReference(cols, LongType$.MODULE$, false));
        UnsafeProjection proj = UnsafeProjection.create(Scala.seq(full));
        GenericInternalRow slotRow = new GenericInternalRow(1);
        JoinedRow joined = new JoinedRow();
        for (int b = 0; b < 3; b++) {
          int n = 1 + rnd.nextInt(300);
          ColumnVector[] vs = new ColumnVector[cols];
          for (int i = 0; i < cols; i++) vs[i] = column(rnd, types[i], n, rnd.nextBoolean());
          ColumnarBatch batch = new ColumnarBatch(vs, n);
          vr.batch(batch);
          for (int r = 0; r < n; r++) {
            long v = rnd.nextLong();
            slotRow.setLong(0, v);
            UnsafeRow expected = proj.apply(joined.apply(batch.getRow(r), slotRow));
            UnsafeRow got = slot < 0 ? vr.apply(r) : vr.apply(r, v);
            if (!expected.equals(got)) {
              throw new AssertionError("row " + r + " of batch " + b + ": expected " + expected
                  + ", got " + got + " (types " + java.util.Arrays.toString(types) + ")");
            }
          }
        }
      }
    });
    c.test("VectorRow: a computed column or another type is refused", () -> {
      Expression l = new BoundReference(0, LongType$.MODULE$, true);
      Check.equal(null, VectorRow.of(Scala.seqOf(l, new Add(l, l))), "a computed column");
      Check.equal(null, VectorRow.of(Scala.seqOf(l, new BoundReference(1, new DecimalType(10, 2), true))),
          "a decimal column");
      Check.equal(null, VectorRow.of(Scala.seqOf(l), 2), "a slot past the columns");
    });
  }
}
