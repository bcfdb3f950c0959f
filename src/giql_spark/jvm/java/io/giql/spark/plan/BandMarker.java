package io.giql.spark.plan;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Coalesce;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Greatest;
import org.apache.spark.sql.catalyst.expressions.IsNotNull;
import org.apache.spark.sql.catalyst.expressions.Least;
import org.apache.spark.sql.catalyst.expressions.LessThanOrEqual;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.types.BooleanType$;
import org.apache.spark.sql.types.ByteType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.NullType$;
import org.apache.spark.sql.types.ShortType$;
import org.apache.spark.sql.types.StringType;

import io.giql.spark.compat.GiqlExpression;
import io.giql.spark.compat.Scala;

import scala.collection.immutable.Seq;

/**
 * {@code giql_band(options, lk1..lkn, llo, lhi, rk1..rkn, rlo, rhi)}: the marker of an interval
 * join. As a plain boolean it is the key-equality-and-hull test: every key pair equal (a NULL key
 * matches nothing), and the closed hulls {@code [least(llo,lhi), greatest(llo,lhi)]} and
 * {@code [least(rlo,rhi), greatest(rlo,rhi)]} share a point (a NULL bound matches nothing). It is
 * never NULL. {@link BandJoinStrategy} recognises it in a join condition and plans an interval
 * join operator in place of Spark's nested loop.
 */
public final class BandMarker extends GiqlExpression {
  private static final long serialVersionUID = 1L;

  public static final String NAME = "giql_band";

  private final String options;
  private final Seq<Expression> args;
  private transient Expression plain;

  public BandMarker(String options, Seq<Expression> args) {
    this.options = options;
    this.args = args;
  }

  /** The function builder behind {@code giql_band(...)} in SQL. */
  public static Expression build(scala.collection.Seq<Expression> all) {
    List<Expression> a = Scala.list(all);
    if (a.isEmpty() || !a.get(0).foldable() || !(a.get(0).dataType() instanceof StringType)) {
      throw new IllegalArgumentException(
          NAME + ": the first argument must be a string literal of options, e.g. 'algo=auto'");
    }
    Object opt = a.get(0).eval(null);
    String options = opt == null ? "" : opt.toString();
    BandParams.parse(options); // throws IllegalArgumentException with a readable message
    List<Expression> rest = a.subList(1, a.size());
    if (rest.size() < 4 || rest.size() % 2 != 0) {
      throw new IllegalArgumentException(
          NAME + "(options, left keys..., left lo, left hi, right keys..., right lo, right hi)"
              + " takes the same number of keys on each side; got " + rest.size()
              + " arguments after the options");
    }
    return new BandMarker(options, Scala.seq(new ArrayList<>(rest)));
  }

  public String options() {
    return options;
  }

  public BandParams params() {
    return BandParams.parse(options);
  }

  public int numKeys() {
    return (args.size() - 4) / 2;
  }

  public List<Expression> leftKeys() {
    return Scala.list(args).subList(0, numKeys());
  }

  public Expression leftLo() {
    return args.apply(numKeys());
  }

  public Expression leftHi() {
    return args.apply(numKeys() + 1);
  }

  public List<Expression> rightKeys() {
    int n = numKeys();
    return Scala.list(args).subList(n + 2, 2 * n + 2);
  }

  public Expression rightLo() {
    return args.apply(2 * numKeys() + 2);
  }

  public Expression rightHi() {
    return args.apply(2 * numKeys() + 3);
  }

  /** Every expression of the left side (keys and bounds). */
  public List<Expression> leftSide() {
    List<Expression> out = new ArrayList<>(leftKeys());
    out.add(leftLo());
    out.add(leftHi());
    return out;
  }

  public List<Expression> rightSide() {
    List<Expression> out = new ArrayList<>(rightKeys());
    out.add(rightLo());
    out.add(rightHi());
    return out;
  }

  /** The same test written with Spark's own expressions. */
  public Expression plain() {
    if (plain == null) {
      List<Expression> terms = new ArrayList<>();
      List<Expression> lk = leftKeys();
      List<Expression> rk = rightKeys();
      for (int i = 0; i < lk.size(); i++) {
        terms.add(new EqualTo(lk.get(i), rk.get(i)));
      }
      for (Expression b : List.of(leftLo(), leftHi(), rightLo(), rightHi())) {
        terms.add(new IsNotNull(b));
      }
      terms.add(hullTest(leftLo(), leftHi(), rightLo(), rightHi()));
      Expression cond = terms.get(0);
      for (int i = 1; i < terms.size(); i++) {
        cond = new And(cond, terms.get(i));
      }
      plain = new Coalesce(Scala.seqOf(cond, Literal.FalseLiteral()));
    }
    return plain;
  }

  /** lo_l <= hi_r AND lo_r <= hi_l over the closed hulls of the two sides. */
  static Expression hullTest(Expression llo, Expression lhi, Expression rlo, Expression rhi) {
    Expression l1 = new Least(Scala.seqOf(llo, lhi));
    Expression h1 = new Greatest(Scala.seqOf(llo, lhi));
    Expression l2 = new Least(Scala.seqOf(rlo, rhi));
    Expression h2 = new Greatest(Scala.seqOf(rlo, rhi));
    return new And(new LessThanOrEqual(l1, h2), new LessThanOrEqual(l2, h1));
  }

  static boolean isBoundType(DataType t) {
    return t == LongType$.MODULE$ || t == IntegerType$.MODULE$ || t == ShortType$.MODULE$
        || t == ByteType$.MODULE$ || t == NullType$.MODULE$;
  }

  @Override
  public TypeCheckResult checkInputDataTypes() {
    for (Expression b : List.of(leftLo(), leftHi(), rightLo(), rightHi())) {
      if (!isBoundType(b.dataType())) {
        return new TypeCheckResult.TypeCheckFailure(NAME + ": interval bounds must be integers"
            + " (tinyint, smallint, int or bigint); " + b.sql() + " is " + b.dataType().sql());
      }
    }
    List<Expression> lk = leftKeys();
    List<Expression> rk = rightKeys();
    for (int i = 0; i < lk.size(); i++) {
      DataType l = lk.get(i).dataType();
      DataType r = rk.get(i).dataType();
      if (!DataType.equalsIgnoreNullability(l, r)) {
        return new TypeCheckResult.TypeCheckFailure(NAME + ": key " + (i + 1) + " has type "
            + l.sql() + " on the left and " + r.sql() + " on the right; cast them to one type");
      }
      TypeCheckResult eq = new EqualTo(lk.get(i), rk.get(i)).checkInputDataTypes();
      if (eq.isFailure()) {
        return new TypeCheckResult.TypeCheckFailure(
            NAME + ": key " + (i + 1) + " of type " + l.sql() + " cannot be compared for equality");
      }
    }
    return TypeCheckResult.TypeCheckSuccess$.MODULE$;
  }

  @Override
  public Seq<Expression> children() {
    return args;
  }

  @Override
  public boolean nullable() {
    return false;
  }

  @Override
  public DataType dataType() {
    return BooleanType$.MODULE$;
  }

  @Override
  public Object eval(InternalRow row) {
    refuseNearest();
    return plain().eval(row);
  }

  @Override
  public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
    refuseNearest();
    return plain().genCode(ctx);
  }

  /** A k-nearest marker is no row test: only its operator may run it. */
  private void refuseNearest() {
    if (params().nearest > 0) {
      throw new IllegalStateException(NAME + " with nearest=" + params().nearest
          + " runs only as the broadcast interval join; this plan evaluates it as a condition");
    }
  }

  @Override
  protected Expression withChildren(java.util.List<Expression> newChildren) {
    return new BandMarker(options, Scala.seq(newChildren));
  }

  @Override
  public String prettyName() {
    return NAME;
  }

  @Override
  public String sql() {
    StringBuilder sb = new StringBuilder(NAME).append("('")
        .append(options.replace("\\", "\\\\").replace("'", "\\'")).append('\'');
    for (Expression e : Scala.list(args)) {
      sb.append(", ").append(e.sql());
    }
    return sb.append(')').toString();
  }

  @Override
  public int productArity() {
    return 2;
  }

  @Override
  public Object productElement(int n) {
    switch (n) {
      case 0: return options;
      case 1: return args;
      default: throw new IndexOutOfBoundsException(String.valueOf(n));
    }
  }

  @Override
  public boolean canEqual(Object other) {
    return other instanceof BandMarker;
  }

  @Override
  public boolean equals(Object other) {
    if (!(other instanceof BandMarker)) return false;
    BandMarker o = (BandMarker) other;
    return options.equals(o.options) && args.equals(o.args);
  }

  @Override
  public int hashCode() {
    return 31 * options.hashCode() + args.hashCode();
  }
}
