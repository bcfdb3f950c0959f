package io.giql.spark.join.merge;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.expressions.Add;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.CaseWhen;
import org.apache.spark.sql.catalyst.expressions.Cast;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Greatest;
import org.apache.spark.sql.catalyst.expressions.If;
import org.apache.spark.sql.catalyst.expressions.Least;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Multiply;
import org.apache.spark.sql.catalyst.expressions.Subtract;
import org.apache.spark.sql.types.BooleanType$;
import org.apache.spark.sql.types.ByteType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.ShortType$;

import io.giql.spark.compat.Scala;

/**
 * Bounds of a side's sweep positions over one row group, from the footers' min/max of the
 * columns its lo and hi read (interval arithmetic over the expressions): the least lo and the
 * greatest lo and hi any row of the group can have. A range of a chromosome reads the row groups
 * whose bounds reach it, so these must hold for every row; an expression the arithmetic does not
 * know gives no bounds (the chromosome is then not cut).
 */
final class Bounds {
  private final Expression lo;
  private final Expression hi;
  /** The columns lo and hi read, by name; {@link ParquetLayout} keeps their min/max. */
  final String[] columns;

  /** lo and hi have a value wherever the columns they read have one ({@link #valued(Expression)}). */
  private final boolean alwaysValued;

  private Bounds(Expression lo, Expression hi, String[] columns) {
    this.lo = lo;
    this.hi = hi;
    this.columns = columns;
    this.alwaysValued = valued(lo) && valued(hi);
  }

  /**
   * {@code lo} and {@code hi} over the scan's columns ({@code names[i]} the name of
   * {@code attrs[i]}); null when they read anything but those columns.
   */
  static Bounds of(Expression lo, Expression hi, List<AttributeReference> attrs, String[] names) {
    List<String> cols = new ArrayList<>();
    for (Expression e : new Expression[] {lo, hi}) {
      for (Object a : Scala.list(e.references().toSeq())) {
        int i = index(attrs, (org.apache.spark.sql.catalyst.expressions.Attribute) a);
        if (i < 0) return null;
        if (!cols.contains(names[i])) cols.add(names[i]);
      }
    }
    Expression l = named(lo, attrs, names);
    Expression h = named(hi, attrs, names);
    return new Bounds(l, h, cols.toArray(new String[0]));
  }

  /** Where {@code a} is in {@code attrs}, by expression id (qualifiers and nullability aside). */
  private static int index(List<AttributeReference> attrs,
      org.apache.spark.sql.catalyst.expressions.Attribute a) {
    for (int i = 0; i < attrs.size(); i++) {
      if (attrs.get(i).exprId().equals(a.exprId())) return i;
    }
    return -1;
  }

  /** The expression with each column as an attribute named by its relation column. */
  private static Expression named(Expression e, List<AttributeReference> attrs, String[] names) {
    return e.transformUp(new scala.runtime.AbstractPartialFunction<Expression, Expression>() {
      @Override
      public boolean isDefinedAt(Expression x) {
        return x instanceof AttributeReference && index(attrs, (AttributeReference) x) >= 0;
      }

      @Override
      public Expression apply(Expression x) {
        return ((AttributeReference) x).withName(names[index(attrs, (AttributeReference) x)]);
      }
    });
  }

  /**
   * {least lo, greatest lo, greatest hi} of a sweep row ({@code lo = min(lo, hi)},
   * {@code hi = max(lo, hi)}) over a row group, or null when unknown.
   */
  long[] group(ParquetLayout.RowGroup g) {
    if (g.colMin == null) return null;
    long[] a = eval(lo, g);
    long[] b = eval(hi, g);
    if (a == null || b == null) return null;
    if (a == NONE || b == NONE) return EMPTY;
    return new long[] {Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[1], b[1])};
  }

  /**
   * Whether no row of the group can have a NULL lo or hi: the footer counts no NULL in the
   * columns they read, and nothing in them turns values into a NULL.
   */
  boolean neverNull(ParquetLayout.RowGroup g) {
    if (!alwaysValued || g.colNoNull == null) return false;
    for (boolean b : g.colNoNull) {
      if (!b) return false;
    }
    return true;
  }

  /** Whether {@code e} has a value wherever the columns it reads have one. */
  private static boolean valued(Expression e) {
    if (e instanceof AttributeReference) return true;
    if (e instanceof Literal) return ((Literal) e).value() != null;
    if (e instanceof Cast) {
      // integral and boolean values convert to integers without a NULL (ANSI fails instead)
      DataType from = ((Cast) e).child().dataType();
      return integral(e.dataType()) && (integral(from) || from == BooleanType$.MODULE$)
          && valued(((Cast) e).child());
    }
    if (e instanceof Add || e instanceof Subtract || e instanceof Multiply
        || e instanceof EqualTo) {
      return valued(e.children().apply(0)) && valued(e.children().apply(1));
    }
    if (e instanceof Least || e instanceof Greatest || e instanceof Coalesce) {
      // NULL only when every term is
      for (Expression t : Scala.list(e.children())) {
        if (valued(t)) return true;
      }
      return false;
    }
    if (e instanceof If) return valued(((If) e).trueValue()) && valued(((If) e).falseValue());
    if (e instanceof CaseWhen) {
      CaseWhen cw = (CaseWhen) e;
      if (!cw.elseValue().isDefined() || !valued(cw.elseValue().get())) return false;
      for (scala.Tuple2<Expression, Expression> b : Scala.list(cw.branches())) {
        if (!valued(b._2())) return false;
      }
      return true;
    }
    return false;
  }

  /**
   * Whether {@code e} has a value in every row of the group: it has one wherever its columns do,
   * and the footer counts no NULL in any of them.
   */
  private boolean present(Expression e, ParquetLayout.RowGroup g) {
    if (!valued(e) || g.colNoNull == null) return false;
    for (Object a : Scala.list(e.references().toSeq())) {
      String name = ((org.apache.spark.sql.catalyst.expressions.Attribute) a).name();
      int i = java.util.Arrays.asList(columns).indexOf(name);
      if (i < 0 || !g.colNoNull[i]) return false;
    }
    return true;
  }

  /** {@link #group} of a row group whose rows all have NULL bounds (they match nothing). */
  static final long[] EMPTY = {Long.MAX_VALUE, Long.MIN_VALUE, Long.MIN_VALUE};

  static boolean empty(long[] b) {
    return b == EMPTY;
  }

  /** An expression that is NULL in every row of the group. */
  private static final long[] NONE = new long[0];

  private long[] column(String name, ParquetLayout.RowGroup g) {
    for (int i = 0; i < columns.length; i++) {
      if (columns[i].equals(name)) {
        if (g.colAllNull[i]) return NONE;
        return g.colKnown[i] ? new long[] {g.colMin[i], g.colMax[i]} : null;
      }
    }
    return null;
  }

  private static boolean integral(DataType t) {
    return t == LongType$.MODULE$ || t == IntegerType$.MODULE$ || t == ShortType$.MODULE$
        || t == ByteType$.MODULE$;
  }

  /** [min, max] of {@code e}'s non-NULL values over the group, or null. */
  private long[] eval(Expression e, ParquetLayout.RowGroup g) {
    if (!integral(e.dataType())) return null;
    try {
      if (e instanceof AttributeReference) return column(((AttributeReference) e).name(), g);
      if (e instanceof Literal) {
        Object v = ((Literal) e).value();
        if (v == null) return null;
        long x = ((Number) v).longValue();
        return new long[] {x, x};
      }
      if (e instanceof Cast) {
        Expression c = ((Cast) e).child();
        // a test as a number (a zero-length interval's end moved up by one: end = start): 0 or 1
        if (c.dataType() == BooleanType$.MODULE$) return new long[] {0, 1};
        long[] b = eval(c, g);
        if (b == null || b == NONE) return b;
        DataType t = e.dataType();
        // a narrowing cast can wrap: its bounds hold only when the child's fit
        if (t == IntegerType$.MODULE$ && (b[0] < Integer.MIN_VALUE || b[1] > Integer.MAX_VALUE)) {
          return null;
        }
        if (t == ShortType$.MODULE$ || t == ByteType$.MODULE$) return null;
        return b;
      }
      if (e instanceof Add || e instanceof Subtract) {
        long[] a = eval(e.children().apply(0), g);
        long[] b = eval(e.children().apply(1), g);
        if (a == null || b == null) return null;
        if (a == NONE || b == NONE) return NONE; // NULL in, NULL out
        long[] r = e instanceof Add
            ? new long[] {Math.addExact(a[0], b[0]), Math.addExact(a[1], b[1])}
            : new long[] {Math.subtractExact(a[0], b[1]), Math.subtractExact(a[1], b[0])};
        // an int result wraps where a long one would not
        if (e.dataType() != LongType$.MODULE$
            && (r[0] < Integer.MIN_VALUE || r[1] > Integer.MAX_VALUE)) {
          return null;
        }
        return r;
      }
      if (e instanceof Multiply) {
        // a position scaled (a k-nearest hull doubles its ends so that a half position is one)
        long[] a = eval(e.children().apply(0), g);
        long[] b = eval(e.children().apply(1), g);
        if (a == null || b == null) return null;
        if (a == NONE || b == NONE) return NONE;
        long p = Math.multiplyExact(a[0], b[0]);
        long q = Math.multiplyExact(a[0], b[1]);
        long u = Math.multiplyExact(a[1], b[0]);
        long v = Math.multiplyExact(a[1], b[1]);
        long[] r = {Math.min(Math.min(p, q), Math.min(u, v)), Math.max(Math.max(p, q), Math.max(u, v))};
        if (e.dataType() != LongType$.MODULE$
            && (r[0] < Integer.MIN_VALUE || r[1] > Integer.MAX_VALUE)) {
          return null;
        }
        return r;
      }
      List<Expression> terms = null;
      if (e instanceof Least || e instanceof Greatest || e instanceof Coalesce) {
        terms = Scala.list(e.children());
      } else if (e instanceof If) {
        terms = List.of(((If) e).trueValue(), ((If) e).falseValue());
      } else if (e instanceof CaseWhen) {
        CaseWhen cw = (CaseWhen) e;
        terms = new ArrayList<>();
        for (scala.Tuple2<Expression, Expression> b : Scala.list(cw.branches())) terms.add(b._2());
        if (cw.elseValue().isDefined()) terms.add(cw.elseValue().get());
      }
      if (terms == null) return null;
      // any term's value (a NULL term skipped): the hull of the terms' bounds; a NULL literal
      // contributes no value. Where every term has a value in every row of the group, least
      // and greatest are tighter: least(x, y) is at most the lesser of their greatest values
      // (a hull [least(start, end), greatest(start, end)] would otherwise give a group's
      // greatest lo as its greatest end, and a range starting at the next group's first lo
      // would read this group too).
      boolean tight = e instanceof Least || e instanceof Greatest;
      long mn = Long.MAX_VALUE;
      long mx = Long.MIN_VALUE;
      long lowMax = Long.MAX_VALUE; // least: the lesser of the terms' greatest values
      long highMin = Long.MIN_VALUE; // greatest: the greater of the terms' least values
      boolean any = false;
      for (Expression t : terms) {
        if (t instanceof Literal && ((Literal) t).value() == null) {
          tight = false;
          continue;
        }
        long[] b = eval(t, g);
        if (b == null) return null;
        if (b == NONE) {
          tight = false;
          continue;
        }
        tight &= present(t, g);
        mn = Math.min(mn, b[0]);
        mx = Math.max(mx, b[1]);
        lowMax = Math.min(lowMax, b[1]);
        highMin = Math.max(highMin, b[0]);
        any = true;
      }
      if (!any) return NONE;
      if (tight && e instanceof Least) return new long[] {mn, lowMax};
      if (tight && e instanceof Greatest) return new long[] {highMin, mx};
      return new long[] {mn, mx};
    } catch (ArithmeticException overflow) {
      return null;
    }
  }
}
