package io.giql.spark.columns;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.CaseWhen;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.GreaterThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.LessThan;
import org.apache.spark.sql.catalyst.expressions.LessThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

import scala.Tuple2;

/**
 * A scan filter made only of checks, {@code CASE WHEN c THEN <error> ELSE true END} with
 * {@code c} comparisons of integer columns and constants joined by AND / OR, tested a batch at a
 * time: when {@code c} holds on no row of a batch (and no column it reads has a NULL there), the
 * filter passes every row of the batch and is not evaluated row by row.
 *
 * <p>Why: the DataFrame API validates each interval this way ({@code 0 <= start <= end < 2^60},
 * failing the query with a line naming the row otherwise); Spark's generated predicate per row
 * was about 6% of a 10M coverage. A batch where some row meets {@code c} is left to that
 * predicate row by row, so the error and its message stay Spark's, and a row the scan skips
 * for another reason is not tested.
 */
public final class BatchChecks {
  private final List<Node> conds;
  private final List<Integer> ordinals = new ArrayList<>();

  private BatchChecks(List<Node> conds, List<Integer> ordinals) {
    this.conds = conds;
    this.ordinals.addAll(ordinals);
  }

  /** The checks of bound {@code filter}, or null when a conjunct is not such a check. */
  public static BatchChecks of(List<Expression> conjuncts) {
    List<Node> conds = new ArrayList<>();
    List<Integer> ords = new ArrayList<>();
    for (Expression e : conjuncts) {
      Node n = check(e, ords);
      if (n == null) return null;
      conds.add(n);
    }
    return conds.isEmpty() ? null : new BatchChecks(conds, ords);
  }

  /** Whether every row of {@code b} passes every check (false: some row must be tested). */
  public boolean allPass(ColumnarBatch b) {
    for (int o : ordinals) {
      if (b.column(o).hasNull()) return false;
    }
    int n = b.numRows();
    for (Node c : conds) {
      boolean[] hit = c.eval(b, n);
      for (int i = 0; i < n; i++) {
        if (hit[i]) return false;
      }
    }
    return true;
  }

  private static Node check(Expression e, List<Integer> ords) {
    if (!(e instanceof CaseWhen)) return null;
    CaseWhen w = (CaseWhen) e;
    if (w.branches().size() != 1 || w.elseValue().isEmpty()) return null;
    Expression otherwise = w.elseValue().get();
    if (!(otherwise instanceof Literal) || !Boolean.TRUE.equals(((Literal) otherwise).value())) return null;
    Tuple2<Expression, Expression> branch = w.branches().apply(0);
    return cond(branch._1(), ords);
  }

  private static Node cond(Expression e, List<Integer> ords) {
    if (e instanceof Or || e instanceof And) {
      Node a = cond(e.children().apply(0), ords);
      Node b = cond(e.children().apply(1), ords);
      return a == null || b == null ? null : new Logic(a, b, e instanceof Or);
    }
    if (e instanceof BinaryComparison) {
      int op = e instanceof LessThan ? LT : e instanceof LessThanOrEqual ? LE : e instanceof GreaterThan ? GT
          : e instanceof GreaterThanOrEqual ? GE : e instanceof EqualTo ? EQ : -1;
      if (op < 0) return null;
      Term a = term(e.children().apply(0), ords);
      Term b = term(e.children().apply(1), ords);
      return a == null || b == null ? null : new Compare(op, a, b);
    }
    return null;
  }

  private static Term term(Expression e, List<Integer> ords) {
    if (e instanceof Literal) {
      Object v = ((Literal) e).value();
      return v instanceof Long || v instanceof Integer ? new Term(-1, false, ((Number) v).longValue()) : null;
    }
    if (e instanceof BoundReference) {
      boolean isInt = e.dataType() == IntegerType$.MODULE$;
      if (!isInt && e.dataType() != LongType$.MODULE$) return null;
      int o = ((BoundReference) e).ordinal();
      ords.add(o);
      return new Term(o, isInt, 0);
    }
    return null;
  }

  private static final int LT = 0, LE = 1, GT = 2, GE = 3, EQ = 4;

  private abstract static class Node {
    boolean[] out = new boolean[0];

    boolean[] room(int n) {
      if (out.length < n) out = new boolean[n];
      return out;
    }

    abstract boolean[] eval(ColumnarBatch b, int n);
  }

  /** A column (ordinal >= 0) or a constant; a column's values are read into one array a batch. */
  private static final class Term {
    final int ordinal;
    final boolean isInt;
    final long constant;
    long[] values = new long[0];

    Term(int ordinal, boolean isInt, long constant) {
      this.ordinal = ordinal;
      this.isInt = isInt;
      this.constant = constant;
    }

    long[] read(ColumnarBatch b, int n) {
      if (values.length < n) values = new long[n];
      if (ordinal < 0) {
        java.util.Arrays.fill(values, 0, n, constant);
      } else {
        ColumnVector v = b.column(ordinal);
        if (isInt) {
          for (int i = 0; i < n; i++) values[i] = v.getInt(i);
        } else {
          for (int i = 0; i < n; i++) values[i] = v.getLong(i);
        }
      }
      return values;
    }
  }

  private static final class Compare extends Node {
    final int op;
    final Term a;
    final Term b;

    Compare(int op, Term a, Term b) {
      this.op = op;
      this.a = a;
      this.b = b;
    }

    @Override
    boolean[] eval(ColumnarBatch batch, int n) {
      long[] x = a.read(batch, n);
      long[] y = b.read(batch, n);
      boolean[] r = room(n);
      switch (op) {
        case LT: for (int i = 0; i < n; i++) r[i] = x[i] < y[i]; break;
        case LE: for (int i = 0; i < n; i++) r[i] = x[i] <= y[i]; break;
        case GT: for (int i = 0; i < n; i++) r[i] = x[i] > y[i]; break;
        case GE: for (int i = 0; i < n; i++) r[i] = x[i] >= y[i]; break;
        default: for (int i = 0; i < n; i++) r[i] = x[i] == y[i]; break;
      }
      return r;
    }
  }

  private static final class Logic extends Node {
    final Node a;
    final Node b;
    final boolean or;

    Logic(Node a, Node b, boolean or) {
      this.a = a;
      this.b = b;
      this.or = or;
    }

    @Override
    boolean[] eval(ColumnarBatch batch, int n) {
      boolean[] x = a.eval(batch, n);
      boolean[] y = b.eval(batch, n);
      boolean[] r = room(n);
      if (or) {
        for (int i = 0; i < n; i++) r[i] = x[i] | y[i];
      } else {
        for (int i = 0; i < n; i++) r[i] = x[i] & y[i];
      }
      return r;
    }
  }
}
