package io.giql.spark.index;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.StructType;

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
 * With {@link #covered}, it also outputs the points of the left row's hull that its matches'
 * hulls cover ({@code giql_covered} of the join's own hulls): each match adds the intersection
 * of the two hulls to the row's {@link Runs}.
 */
public final class PerRow implements Serializable {
  private static final long serialVersionUID = 3L;
  public final Attribute count;
  final boolean floorOne;
  public final List<Expression> sums;    // integral, over the left then the right side's attributes
  final List<Attribute> sumAttrs; // nullable bigints, one per sum
  public final Attribute covered;  // a bigint of covered points, or null

  public PerRow(Attribute count, boolean floorOne) {
    this(count, floorOne, new ArrayList<>(), new ArrayList<>(), null);
  }

  public PerRow(Attribute count, boolean floorOne, List<Expression> sums, List<Attribute> sumAttrs,
      Attribute covered) {
    this.count = count;
    this.floorOne = floorOne;
    this.sums = sums;
    this.sumAttrs = sumAttrs;
    this.covered = covered;
  }

  /** The attributes after the left row's projection: the count, the sums, the covered points. */
  public List<Attribute> outputs() {
    List<Attribute> out = new ArrayList<>();
    out.add(count);
    out.addAll(sumAttrs);
    if (covered != null) out.add(covered);
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
        + (sums.isEmpty() ? "" : ", sums " + sums + " as " + sumAttrs)
        + (covered == null ? "" : ", covered points as " + covered);
  }

  /** One left row's running sums and covered runs. */
  public static final class Sums {
    final long[] v;   // the sums, then the bits of the sums that saw a value
    final Runs runs;  // or null

    Sums(int k, boolean covered) {
      this.v = k == 0 ? null : new long[k + 1];
      this.runs = covered ? new Runs() : null;
    }

    /** Back to no join row, for the next left row. */
    public void clear() {
      if (v != null) java.util.Arrays.fill(v, 0L);
      if (runs != null) runs.clear();
    }
  }

  /**
   * One task's sums: each left row keeps {@link Sums}: a {@code long[]} of running sums, where bit
   * k of the last slot says the k-th sum has seen a non-NULL value, and its covered runs.
   * Overflow fails the task (as ANSI {@code SUM} does) rather than wrap.
   */
  public static final class Acc {
    private final int k;
    private final boolean covered;
    private final UnsafeProjection values;
    // typed slots: a GenericInternalRow boxed every count it was given, 8% of a 10M
    // count_overlaps' task time (profiled)
    private final SpecificInternalRow row;
    private final List<Expression> exprs;

    private Acc(PerRow p, Seq<Attribute> joinedAttrs) {
      this.k = p.sums.size();
      this.covered = p.covered != null;
      this.exprs = p.sums;
      List<Expression> casts = new ArrayList<>();
      for (Expression e : p.sums) {
        casts.add(new Cast(e, LongType$.MODULE$, Option.empty()));
      }
      this.values = k == 0 ? null : UnsafeProjection.create(Scala.seq(casts), joinedAttrs);
      StructType longs = new StructType();
      for (int i = 0, n = 1 + k + (covered ? 1 : 0); i < n; i++) {
        longs = longs.add("v" + i, LongType$.MODULE$);
      }
      this.row = new SpecificInternalRow(longs);
    }

    /** A fresh row's sums; null when there are none. */
    public Sums fresh() {
      return k == 0 && !covered ? null : new Sums(k, covered);
    }

    /** Whether the sums read the join rows' columns (else only the hulls). */
    public boolean readsRows() {
      return k > 0;
    }

    /**
     * Adds one join row ({@code joined}: left then right) to {@code s}: its values to the sums,
     * and to the covered runs the intersection of the closed hulls {@code [llo, lhi]} and
     * {@code [rlo, rhi]} (a padded row has {@code rlo > rhi}: it adds no point).
     */
    public void add(Sums s, InternalRow joined, long llo, long lhi, long rlo, long rhi) {
      if (s == null) return;
      if (s.runs != null) s.runs.add(Math.max(llo, rlo), Math.min(lhi, rhi));
      if (k == 0) return;
      long[] acc = s.v;
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

    /** {@link #row(long, Sums)} with no sums: {@code n} and, when asked for, {@code covered}. */
    public InternalRow row(long n, long covered) {
      row.setLong(0, n);
      if (this.covered) row.setLong(1 + k, covered);
      return row;
    }

    /** The row after the left row's projection: {@code n}, the sums, the covered points. */
    public InternalRow row(long n, Sums s) {
      row.setLong(0, n);
      for (int i = 0; i < k; i++) {
        long[] acc = s.v;
        if ((acc[k] >>> i & 1) == 0) row.setNullAt(1 + i);
        else row.setLong(1 + i, acc[i]);
      }
      if (covered) row.setLong(1 + k, s.runs.points());
      return row;
    }
  }
}
