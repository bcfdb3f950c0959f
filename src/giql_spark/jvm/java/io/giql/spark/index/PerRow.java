package io.giql.spark.index;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.LongType$;

import io.giql.spark.compat.Scala;
import io.giql.spark.compat.UserErrors;

import scala.Option;
import scala.collection.immutable.Seq;

/**
 * A join asked for one row per left row with the number of join rows it makes, in place of the
 * pairs: what a {@code COUNT} grouped by left columns needs ({@link GroupedCount}). The operator
 * outputs its projection of the left row, {@link #count} and one value per {@link #sums}
 * expression: its sum over the row's join rows (NULL when every value was NULL), as a
 * {@code SUM} of it grouped by left columns needs. A left row that makes no join row is
 * dropped, unless the join keeps it (left outer): then it makes one row, its padded join row,
 * and counts 1 where {@link #floorOne} (a {@code COUNT(*)} counts the padded row), else 0.
 */
public final class PerRow implements Serializable {
  private static final long serialVersionUID = 2L;
  final Attribute count;
  final boolean floorOne;
  public final List<Expression> sums;    // integral, over the left then the right side's attributes
  final List<Attribute> sumAttrs; // nullable bigints, one per sum

  public PerRow(Attribute count, boolean floorOne) {
    this(count, floorOne, new ArrayList<>(), new ArrayList<>());
  }

  public PerRow(Attribute count, boolean floorOne, List<Expression> sums, List<Attribute> sumAttrs) {
    this.count = count;
    this.floorOne = floorOne;
    this.sums = sums;
    this.sumAttrs = sumAttrs;
  }

  /** The attributes after the left row's projection: the count, then the sums. */
  public List<Attribute> outputs() {
    List<Attribute> out = new ArrayList<>();
    out.add(count);
    out.addAll(sumAttrs);
    return out;
  }

  /** The count a left row reports for {@code n} matches; negative: it reports no row. */
  public long value(long n, boolean keepsUnmatched) {
    if (n > 0) return n;
    if (!keepsUnmatched) return -1;
    return floorOne ? 1 : 0;
  }

  /** A task's evaluator of the sums over joined rows ({@code joinedAttrs}: left then right). */
  public Acc acc(Seq<Attribute> joinedAttrs) {
    return new Acc(this, joinedAttrs);
  }

  @Override
  public String toString() {
    return "count per left row as " + count + (floorOne ? " (unmatched: 1)" : "")
        + (sums.isEmpty() ? "" : ", sums " + sums + " as " + sumAttrs);
  }

  /**
   * One task's sums: each left row keeps a {@code long[]} of running sums, and bit k of
   * its last slot says the k-th sum has seen a non-NULL value. Overflow fails the task
   * (as ANSI {@code SUM} does) rather than wrap.
   */
  public static final class Acc {
    private final int k;
    private final UnsafeProjection values;
    private final GenericInternalRow row;
    private final List<Expression> exprs;

    private Acc(PerRow p, Seq<Attribute> joinedAttrs) {
      this.k = p.sums.size();
      this.exprs = p.sums;
      List<Expression> casts = new ArrayList<>();
      for (Expression e : p.sums) {
        casts.add(new Cast(e, LongType$.MODULE$, Option.empty()));
      }
      this.values = k == 0 ? null : UnsafeProjection.create(Scala.seq(casts), joinedAttrs);
      this.row = new GenericInternalRow(1 + k);
    }

    /** A fresh row's sums; null when there are none. */
    public long[] fresh() {
      return k == 0 ? null : new long[k + 1];
    }

    /** Adds the values of one join row ({@code joined}: left then right) to {@code acc}. */
    public void add(long[] acc, InternalRow joined) {
      if (acc == null) return;
      UnsafeRow v = values.apply(joined);
      for (int i = 0; i < k; i++) {
        if (v.isNullAt(i)) continue;
        try {
          acc[i] = Math.addExact(acc[i], v.getLong(i));
        } catch (ArithmeticException e) {
          throw UserErrors.raised("giql per-row count: SUM(" + exprs.get(i).sql()
              + ") overflows BIGINT for one left row");
        }
        acc[k] |= 1L << i;
      }
    }

    /** The row after the left row's projection: {@code n} and the sums. */
    public InternalRow row(long n, long[] acc) {
      row.setLong(0, n);
      for (int i = 0; i < k; i++) {
        if ((acc[k] >>> i & 1) == 0) row.setNullAt(1 + i);
        else row.setLong(1 + i, acc[i]);
      }
      return row;
    }
  }
}
