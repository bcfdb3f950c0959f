package io.giql.spark;

import java.io.Serializable;

import org.apache.spark.sql.ExperimentalMethods;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.FunctionIdentifier;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import org.apache.spark.sql.execution.SparkStrategy;

import io.giql.spark.compat.FunctionIds;
import io.giql.spark.compat.Scala;
import io.giql.spark.compat.Sessions;
import io.giql.spark.plan.BandJoinStrategy;
import io.giql.spark.plan.BandMarker;
import io.giql.spark.plan.Covered;

import scala.Tuple3;
import scala.runtime.AbstractFunction1;
import scala.runtime.BoxedUnit;

/**
 * {@code spark.sql.extensions=io.giql.spark.GiqlSparkExtensions}: registers the
 * {@code giql_band} marker function, the {@code giql_covered} aggregate and the interval-join
 * planner strategy.
 */
public final class GiqlSparkExtensions extends AbstractFunction1<SparkSessionExtensions, BoxedUnit> {
  /** Bumped whenever the SQL surface changes; Python checks it. */
  public static final String VERSION = "1";

  // A function builder is a Scala Seq[Expression] => Expression: collection.Seq in Scala 2.12
  // (Spark 3.5), immutable.Seq in 2.13 (Spark 4). Builder takes the common supertype, and is
  // handed over raw: erased, both lines call the same apply(Object).
  @Override
  @SuppressWarnings({"unchecked", "rawtypes"})
  public BoxedUnit apply(SparkSessionExtensions ext) {
    ext.injectFunction(new Tuple3(FunctionIdentifier.apply(BandMarker.NAME), info(),
        new Builder(Builder.BAND)));
    ext.injectFunction(new Tuple3(FunctionIdentifier.apply(Covered.NAME), coveredInfo(),
        new Builder(Builder.COVERED)));
    for (boolean decode : new boolean[] {false, true}) {
      ext.injectFunction(new Tuple3(FunctionIdentifier.apply(rowName(decode)), rowInfo(decode),
          new Builder(decode ? Builder.ROW : Builder.ROW_BYTES)));
    }
    ext.injectPlannerStrategy(new StrategyBuilder());
    return BoxedUnit.UNIT;
  }

  static ExpressionInfo info() {
    return new ExpressionInfo(BandMarker.class.getName(), null, BandMarker.NAME,
        "_FUNC_(options, left_key..., left_lo, left_hi, right_key..., right_lo, right_hi) - "
            + "true when every key pair is equal and the closed hulls [least(lo, hi), "
            + "greatest(lo, hi)] of the two sides share a point; in a join condition it plans a "
            + "giql-spark interval join.",
        "");
  }

  static ExpressionInfo coveredInfo() {
    return new ExpressionInfo(Covered.class.getName(), null, Covered.NAME,
        "_FUNC_(left_lo, left_hi, right_lo, right_hi) - the number of integer points in the "
            + "union, over a group's rows, of the intersection of the closed hulls [least(lo, hi), "
            + "greatest(lo, hi)] of the two sides; rows with a NULL argument add nothing.",
        "");
  }

  static String rowName(boolean decode) {
    return decode ? io.giql.spark.stream.RowBytes.DECODE : io.giql.spark.stream.RowBytes.ENCODE;
  }

  static ExpressionInfo rowInfo(boolean decode) {
    return new ExpressionInfo(io.giql.spark.stream.RowBytes.class.getName(), null, rowName(decode),
        decode ? "_FUNC_(bytes, 'struct type as JSON') - the struct whose Spark row bytes these are."
            : "_FUNC_(struct) - the bytes of the struct's Spark row (for giql-spark's stream operator).",
        "");
  }

  /**
   * Adds the function and the strategy to a running classic session (one that was not started
   * with the extension). Returns a short description of what it did.
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static String install(Object session) {
    Sessions.classic(session).sessionState().functionRegistry().registerFunction(
        FunctionIds.builtin(BandMarker.NAME), info(), (scala.Function1) new Builder(Builder.BAND));
    Sessions.classic(session).sessionState().functionRegistry().registerFunction(
        FunctionIds.builtin(Covered.NAME), coveredInfo(), (scala.Function1) new Builder(Builder.COVERED));
    for (boolean decode : new boolean[] {false, true}) {
      Sessions.classic(session).sessionState().functionRegistry().registerFunction(
          FunctionIds.builtin(rowName(decode)), rowInfo(decode),
          (scala.Function1) new Builder(decode ? Builder.ROW : Builder.ROW_BYTES));
    }
    ExperimentalMethods experimental = Sessions.classic(session).experimental();
    scala.collection.Seq<SparkStrategy> extra = experimental.extraStrategies();
    for (SparkStrategy s : Scala.list(extra)) {
      if (s instanceof BandJoinStrategy) return "function registered; strategy already present";
    }
    java.util.List<SparkStrategy> l = Scala.list(extra);
    l.add(new BandJoinStrategy());
    experimental.extraStrategies_$eq(Scala.seq(l));
    return "function registered; strategy added";
  }

  /** The class name of the physical operator, for Python's plan checks. */
  public static String operatorName() {
    return "BroadcastIntervalJoin";
  }

  static final class Builder extends AbstractFunction1<scala.collection.Seq<Expression>, Expression>
      implements Serializable {
    private static final long serialVersionUID = 1L;
    static final int BAND = 0, COVERED = 1, ROW_BYTES = 2, ROW = 3;
    private final int function;

    Builder(int function) {
      this.function = function;
    }

    @Override
    public Expression apply(scala.collection.Seq<Expression> args) {
      switch (function) {
        case COVERED: return Covered.build(args);
        case ROW_BYTES: return io.giql.spark.stream.RowBytes.build(args, false);
        case ROW: return io.giql.spark.stream.RowBytes.build(args, true);
        default: return BandMarker.build(args);
      }
    }
  }

  static final class StrategyBuilder
      extends AbstractFunction1<org.apache.spark.sql.SparkSession, SparkStrategy>
      implements Serializable {
    private static final long serialVersionUID = 1L;

    @Override
    public SparkStrategy apply(org.apache.spark.sql.SparkSession s) {
      return new BandJoinStrategy();
    }
  }
}
