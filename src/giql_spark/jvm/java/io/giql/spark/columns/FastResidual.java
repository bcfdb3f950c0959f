package io.giql.spark.columns;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BinaryComparison;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GreaterThan;
import org.apache.spark.sql.catalyst.expressions.GreaterThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.LessThan;
import org.apache.spark.sql.catalyst.expressions.LessThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Subtract;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;

import io.giql.spark.compat.Scala;

import scala.collection.immutable.Seq;

/**
 * A residual made only of comparisons between integer columns of the two sides (each column
 * optionally plus or minus a constant), such as the half-open overlap test
 * {@code a.start < b.end AND b.start < a.end}, evaluated straight on the two rows instead of
 * through a JoinedRow and generated code. NULL compares as false, as in a join condition. A
 * constant that overflows a term returns {@link #UNKNOWN} so the caller can ask Spark's own
 * predicate (which then wraps or raises as Spark would).
 */
public final class FastResidual implements Serializable {
  private static final long serialVersionUID = 1L;
  public static final int FALSE = 0;
  public static final int TRUE = 1;
  public static final int UNKNOWN = 2;

  private static final int LT = 0, LE = 1, GT = 2, GE = 3, EQ = 4;

  // per comparison: op, and for each of its two terms: side (0 left, 1 right), ordinal,
  // int (vs long) column, nullable, constant added
  private final int[] op;
  private final int[][] side;
  private final int[][] ord;
  private final boolean[][] isInt;
  private final boolean[][] nullable;
  private final long[][] add;
  // per comparison and term: the index of its column in columns(side)
  private final int[][] col;
  private final int[][] columns = new int[2][];
  private final boolean[][] columnIsInt = new boolean[2][];

  private FastResidual(List<int[]> terms, List<Integer> ops, List<long[]> adds,
      List<boolean[]> ints, List<boolean[]> nulls) {
    int n = ops.size();
    op = new int[n];
    side = new int[n][2];
    ord = new int[n][2];
    isInt = new boolean[n][2];
    nullable = new boolean[n][2];
    add = new long[n][2];
    for (int i = 0; i < n; i++) {
      op[i] = ops.get(i);
      for (int t = 0; t < 2; t++) {
        side[i][t] = terms.get(i)[2 * t];
        ord[i][t] = terms.get(i)[2 * t + 1];
        isInt[i][t] = ints.get(i)[t];
        nullable[i][t] = nulls.get(i)[t];
        add[i][t] = adds.get(i)[t];
      }
    }
    col = new int[n][2];
    for (int sd = 0; sd < 2; sd++) {
      List<Integer> cs = new ArrayList<>();
      List<Boolean> ci = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        for (int t = 0; t < 2; t++) {
          if (side[i][t] != sd) continue;
          int k = cs.indexOf(ord[i][t]);
          if (k < 0) {
            k = cs.size();
            cs.add(ord[i][t]);
            ci.add(isInt[i][t]);
          }
          col[i][t] = k;
        }
      }
      columns[sd] = cs.stream().mapToInt(Integer::intValue).toArray();
      columnIsInt[sd] = new boolean[ci.size()];
      for (int k = 0; k < ci.size(); k++) columnIsInt[sd][k] = ci.get(k);
    }
  }

  /** No term adds a constant: {@link #evalValues} never answers {@link #UNKNOWN}. */
  public boolean exact() {
    for (long[] a : add) {
      if (a[0] != 0 || a[1] != 0) return false;
    }
    return true;
  }

  /** The ordinals of side {@code s}'s (0 left, 1 right) columns the residual reads. */
  public int[] columns(int s) {
    return columns[s];
  }

  public boolean[] columnsAreInt(int s) {
    return columnIsInt[s];
  }

  /**
   * As {@link #eval} on the values of {@link #columns} of each side, read once per row
   * ({@code ln}/{@code rn}: bit k set when column k is NULL); no row is kept for the pair.
   */
  public int evalValues(long[] lv, long ln, long[] rv, long rn) {
    for (int i = 0; i < op.length; i++) {
      int c0 = col[i][0];
      int c1 = col[i][1];
      boolean l0 = side[i][0] == 0;
      boolean l1 = side[i][1] == 0;
      int r = check(i, (((l0 ? ln : rn) >>> c0) & 1) != 0, l0 ? lv[c0] : rv[c0],
          (((l1 ? ln : rn) >>> c1) & 1) != 0, l1 ? lv[c1] : rv[c1]);
      if (r != TRUE) return r;
    }
    return TRUE;
  }

  /**
   * Comparison {@code i} on its two terms' column values and NULL flags, the constants added
   * here: FALSE at the first NULL, UNKNOWN at the first term that overflows, in term order.
   */
  private int check(int i, boolean null0, long v0, boolean null1, long v1) {
    if (null0) return FALSE;
    long k0 = add[i][0];
    long a = v0 + k0;
    if (((v0 ^ a) & (k0 ^ a)) < 0) return UNKNOWN;
    if (null1) return FALSE;
    long k1 = add[i][1];
    long b = v1 + k1;
    if (((v1 ^ b) & (k1 ^ b)) < 0) return UNKNOWN;
    boolean ok;
    switch (op[i]) {
      case LT: ok = a < b; break;
      case LE: ok = a <= b; break;
      case GT: ok = a > b; break;
      case GE: ok = a >= b; break;
      default: ok = a == b;
    }
    return ok ? TRUE : FALSE;
  }

  /** The fast form of {@code residual}, or null when some conjunct does not fit. */
  public static FastResidual compile(Expression residual, Seq<Attribute> left, Seq<Attribute> right) {
    List<Expression> conj = Conjuncts.of(residual);
    List<Attribute> l = Scala.list(left);
    List<Attribute> r = Scala.list(right);
    List<int[]> terms = new ArrayList<>();
    List<Integer> ops = new ArrayList<>();
    List<long[]> adds = new ArrayList<>();
    List<boolean[]> ints = new ArrayList<>();
    List<boolean[]> nulls = new ArrayList<>();
    for (Expression c : conj) {
      int o;
      if (c instanceof LessThan) o = LT;
      else if (c instanceof LessThanOrEqual) o = LE;
      else if (c instanceof GreaterThan) o = GT;
      else if (c instanceof GreaterThanOrEqual) o = GE;
      else if (c instanceof EqualTo) o = EQ;
      else return null;
      BinaryComparison b = (BinaryComparison) c;
      long[] t1 = term(b.left(), l, r);
      long[] t2 = term(b.right(), l, r);
      if (t1 == null || t2 == null) return null;
      terms.add(new int[] {(int) t1[0], (int) t1[1], (int) t2[0], (int) t2[1]});
      ops.add(o);
      adds.add(new long[] {t1[2], t2[2]});
      ints.add(new boolean[] {t1[3] == 1, t2[3] == 1});
      nulls.add(new boolean[] {t1[4] == 1, t2[4] == 1});
    }
    if (ops.isEmpty() || ops.size() > 32) return null; // at most 64 columns a side
    return new FastResidual(terms, ops, adds, ints, nulls);
  }


  /** {side, ordinal, constant, isInt, nullable} of an integer column +/- a constant, or null. */
  private static long[] term(Expression e, List<Attribute> l, List<Attribute> r) {
    long k = 0;
    while (e instanceof Add || e instanceof Subtract) {
      Expression a = e instanceof Add ? ((Add) e).left() : ((Subtract) e).left();
      Expression b = e instanceof Add ? ((Add) e).right() : ((Subtract) e).right();
      if (!(b instanceof Literal) || b.dataType() != LongType$.MODULE$
          && b.dataType() != IntegerType$.MODULE$ || ((Literal) b).value() == null) {
        return null;
      }
      long v = ((Number) ((Literal) b).value()).longValue();
      if (e.dataType() != LongType$.MODULE$) return null; // int arithmetic overflows differently
      try {
        k = e instanceof Add ? Math.addExact(k, v) : Math.subtractExact(k, v);
      } catch (ArithmeticException x) {
        return null;
      }
      e = a;
    }
    if (e instanceof Cast && e.dataType() == LongType$.MODULE$
        && ((Cast) e).child().dataType() == IntegerType$.MODULE$) {
      e = ((Cast) e).child();
    }
    if (!(e instanceof AttributeReference)) return null;
    DataType t = e.dataType();
    if (t != LongType$.MODULE$ && t != IntegerType$.MODULE$) return null;
    AttributeReference a = (AttributeReference) e;
    for (int s = 0; s < 2; s++) {
      List<Attribute> attrs = s == 0 ? l : r;
      for (int i = 0; i < attrs.size(); i++) {
        if (attrs.get(i).exprId().equals(a.exprId())) {
          return new long[] {s, i, k, t == IntegerType$.MODULE$ ? 1 : 0,
              attrs.get(i).nullable() ? 1 : 0};
        }
      }
    }
    return null;
  }

  /** TRUE, FALSE or UNKNOWN (a constant overflowed: evaluate with Spark's predicate). */
  public int eval(InternalRow left, InternalRow right) {
    for (int i = 0; i < op.length; i++) {
      InternalRow row0 = side[i][0] == 0 ? left : right;
      InternalRow row1 = side[i][1] == 0 ? left : right;
      int o0 = ord[i][0];
      int o1 = ord[i][1];
      int r = check(i, nullable[i][0] && row0.isNullAt(o0), isInt[i][0] ? row0.getInt(o0) : row0.getLong(o0),
          nullable[i][1] && row1.isNullAt(o1), isInt[i][1] ? row1.getInt(o1) : row1.getLong(o1));
      if (r != TRUE) return r;
    }
    return TRUE;
  }
}
