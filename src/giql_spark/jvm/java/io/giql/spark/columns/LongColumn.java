package io.giql.spark.columns;

import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Greatest;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.Least;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Subtract;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * An integer expression over the scan row evaluated straight on the batch's column vectors:
 * a column, {@code least} / {@code greatest} of two (the hull of an interval's two ends), the
 * sum or difference of two terms or a term and a constant, or an equality of two terms as 0 or
 * 1 (the exact hull end {@code end - 1 + CAST(end = start AS BIGINT)} of a half-open interval),
 * or {@code IF(a = b, x, y)} of two such terms or NULL (the hull end
 * {@code IF(end = start, NULL, end - 1)} of an interval whose empty form covers no point).
 * A sum is read here only under ANSI arithmetic (elsewhere Spark would wrap), and an
 * overflow fails the task with one line, as Spark's own ANSI overflow does.
 *
 * <p>Why: a merge count needs of each row only its bounds and the columns its residual reads;
 * projecting every row into an UnsafeRow to read them back cost more than reading them. Anything
 * else is left to Spark's projection ({@link #of} returns null).
 */
public abstract class LongColumn {
  /**
   * Whether a row of the current batch can be NULL, set by {@link #batch}. Why: most batches
   * hold no NULL, and testing this field spares the nested calls a row's null test otherwise
   * makes through the evaluator tree (about 6% of a 10M coverage).
   */
  boolean mayNull = true;

  public abstract void batch(ColumnarBatch b);

  public final boolean isNull(int row) {
    return mayNull && nullAt(row);
  }

  /** Whether row {@code row} is NULL; called only when {@link #mayNull}. */
  abstract boolean nullAt(int row);

  /** The value; call only when not {@link #isNull}. */
  public abstract long get(int row);

  /**
   * The evaluators of bound {@code es}, or null when one is not of the forms above. They share
   * one reader per column, which decodes a row's value once however many of them read it (the
   * bounds and the residual all read start and end).
   */
  public static LongColumn[] of(java.util.List<Expression> es) {
    java.util.Map<Integer, Col> cols = new java.util.HashMap<>();
    LongColumn[] out = new LongColumn[es.size()];
    for (int i = 0; i < out.length; i++) {
      if ((out[i] = of(es.get(i), cols)) == null) return null;
    }
    return out;
  }

  private static LongColumn of(Expression e, java.util.Map<Integer, Col> cols) {
    while (e instanceof Alias) e = ((Alias) e).child();
    if (e instanceof BoundReference) {
      DataType t = e.dataType();
      int ord = ((BoundReference) e).ordinal();
      if (t != LongType$.MODULE$ && t != IntegerType$.MODULE$) return null;
      return cols.computeIfAbsent(ord, k -> new Col(k, t == IntegerType$.MODULE$));
    }
    boolean least = e instanceof Least;
    if (least || e instanceof Greatest) {
      scala.collection.Seq<Expression> ch = e.children();
      if (ch.size() != 2) return null;
      LongColumn a = of(ch.apply(0), cols);
      LongColumn b = of(ch.apply(1), cols);
      return a == null || b == null ? null : new MinMax(a, b, least);
    }
    boolean add = e instanceof Add;
    if ((add || e instanceof Subtract) && e.dataType() == LongType$.MODULE$
        && !ansiOff()) {
      LongColumn a = term(e.children().apply(0), cols);
      LongColumn b = term(e.children().apply(1), cols);
      return a == null || b == null ? null : new Sum(a, b, add, e.sql());
    }
    if (e instanceof If && e.dataType() == LongType$.MODULE$
        && ((If) e).predicate() instanceof EqualTo) {
      EqualTo eq = (EqualTo) ((If) e).predicate();
      LongColumn a = of(eq.left(), cols);
      LongColumn b = of(eq.right(), cols);
      LongColumn x = branch(((If) e).trueValue(), cols);
      LongColumn y = branch(((If) e).falseValue(), cols);
      return a == null || b == null || x == null || y == null ? null
          : new Choice(new Equal(a, b), x, y);
    }
    if (e instanceof Cast && e.dataType() == LongType$.MODULE$
        && ((Cast) e).child() instanceof EqualTo) {
      EqualTo eq = (EqualTo) ((Cast) e).child();
      LongColumn a = of(eq.left(), cols);
      LongColumn b = of(eq.right(), cols);
      return a == null || b == null ? null : new Equal(a, b);
    }
    return null;
  }

  /** A term of a sum: an evaluator, or a constant as one. */
  private static LongColumn term(Expression e, java.util.Map<Integer, Col> cols) {
    if (e instanceof Literal && e.dataType() == LongType$.MODULE$) {
      Object v = ((Literal) e).value();
      return v == null ? null : new Constant((Long) v);
    }
    return of(e, cols);
  }

  /** A branch of an {@code IF}: a term, or a NULL constant. */
  private static LongColumn branch(Expression e, java.util.Map<Integer, Col> cols) {
    if (e instanceof Literal && ((Literal) e).value() == null) return new Null();
    return term(e, cols);
  }

  /** Whether Spark wraps a sum on overflow (ANSI off), which this evaluator would not. */
  private static boolean ansiOff() {
    return !org.apache.spark.sql.internal.SQLConf.get().ansiEnabled();
  }

  private static final class Constant extends LongColumn {
    private final long v;

    Constant(long v) {
      this.v = v;
      this.mayNull = false;
    }

    @Override
    public void batch(ColumnarBatch b) {}

    @Override
    boolean nullAt(int row) {
      return false;
    }

    @Override
    public long get(int row) {
      return v;
    }
  }

  private static final class Null extends LongColumn {
    @Override
    public void batch(ColumnarBatch b) {}

    @Override
    boolean nullAt(int row) {
      return true;
    }

    @Override
    public long get(int row) {
      throw new IllegalStateException("a NULL has no value");
    }
  }

  /** IF(c, x, y): x where c is 1, else y (a NULL condition takes y, as Spark's IF does). */
  private static final class Choice extends LongColumn {
    private final LongColumn c;
    private final LongColumn x;
    private final LongColumn y;

    Choice(LongColumn c, LongColumn x, LongColumn y) {
      this.c = c;
      this.x = x;
      this.y = y;
    }

    private int pickedRow = -1;  // the row last picked for: a row is asked isNull, then get
    private LongColumn picked;

    private LongColumn pick(int row) {
      if (row != pickedRow) {
        picked = !c.isNull(row) && c.get(row) == 1 ? x : y;
        pickedRow = row;
      }
      return picked;
    }

    @Override
    public void batch(ColumnarBatch b) {
      c.batch(b);
      x.batch(b);
      y.batch(b);
      pickedRow = -1;
      mayNull = x.mayNull || y.mayNull;
    }

    @Override
    boolean nullAt(int row) {
      return pick(row).isNull(row);
    }

    @Override
    public long get(int row) {
      return pick(row).get(row);
    }
  }

  /** a + b or a - b: NULL when either is; overflow fails as ANSI arithmetic does. */
  private static final class Sum extends Binary {
    private final boolean add;
    private final String sql;

    Sum(LongColumn a, LongColumn b, boolean add, String sql) {
      super(a, b);
      this.add = add;
      this.sql = sql;
    }

    @Override
    public long get(int row) {
      try {
        return add ? Math.addExact(a.get(row), b.get(row))
            : Math.subtractExact(a.get(row), b.get(row));
      } catch (ArithmeticException x) {
        throw io.giql.spark.compat.UserErrors.raised("giql interval join: " + sql
            + " overflows BIGINT");
      }
    }
  }

  /** a = b as 1 or 0: NULL when either is. */
  private static final class Equal extends Binary {
    Equal(LongColumn a, LongColumn b) {
      super(a, b);
    }

    @Override
    public long get(int row) {
      return a.get(row) == b.get(row) ? 1 : 0;
    }
  }

  private static final class Col extends LongColumn {
    private final int ord;
    private final boolean isInt;
    private ColumnVector v;
    private int row = -1;     // the row whose value is cached
    private long value;

    Col(int ord, boolean isInt) {
      this.ord = ord;
      this.isInt = isInt;
    }

    @Override
    public void batch(ColumnarBatch b) {
      v = b.column(ord);
      row = -1;
      mayNull = v.hasNull();
    }

    @Override
    boolean nullAt(int r) {
      return v.isNullAt(r);
    }

    @Override
    public long get(int r) {
      if (r != row) {
        value = isInt ? v.getInt(r) : v.getLong(r);
        row = r;
      }
      return value;
    }
  }

  /** A function of two evaluators, NULL when either is (by default). */
  private abstract static class Binary extends LongColumn {
    final LongColumn a;
    final LongColumn b;

    Binary(LongColumn a, LongColumn b) {
      this.a = a;
      this.b = b;
    }

    @Override
    public void batch(ColumnarBatch batch) {
      a.batch(batch);
      b.batch(batch);
      mayNull = a.mayNull || b.mayNull;
    }

    @Override
    boolean nullAt(int row) {
      return a.isNull(row) || b.isNull(row);
    }
  }

  /** Spark's least / greatest: NULLs are skipped; NULL only when both are. */
  private static final class MinMax extends Binary {
    private final boolean least;

    MinMax(LongColumn a, LongColumn b, boolean least) {
      super(a, b);
      this.least = least;
    }

    @Override
    public void batch(ColumnarBatch batch) {
      super.batch(batch);
      mayNull = a.mayNull && b.mayNull;
    }

    @Override
    boolean nullAt(int row) {
      return a.isNull(row) && b.isNull(row);
    }

    @Override
    public long get(int row) {
      if (a.isNull(row)) return b.get(row);
      if (b.isNull(row)) return a.get(row);
      long x = a.get(row);
      long y = b.get(row);
      return least ? Math.min(x, y) : Math.max(x, y);
    }
  }
}
