package io.giql.spark.plan;

import java.io.Serializable;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.aggregate.ImperativeAggregate;
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.LongType$;

import io.giql.spark.compat.Scala;
import io.giql.spark.index.Runs;

import scala.collection.immutable.Seq;

/**
 * {@code giql_covered(left_lo, left_hi, right_lo, right_hi)}: the number of integer points in
 * the union, over a group's rows, of the intersection of the closed hulls
 * {@code [least(lo, hi), greatest(lo, hi)]} of the two sides; a row with a NULL argument adds
 * nothing, and a group with no point covered gives 0. With the hulls of a {@code giql_band}
 * join, grouped by the left row, it is the bases of the left interval that the right side covers,
 * each base once however many right rows cover it: bioframe's {@code coverage}.
 *
 * <p>Spark can evaluate it as any aggregate (each group keeps its runs); {@link GroupedCount}
 * hands it to the join operator instead where its arguments are the join's own hulls and each
 * group is one left row, and the operator keeps one left row's runs while it sweeps.
 */
public final class Covered extends TypedImperativeAggregate<Runs> implements Serializable {
  private static final long serialVersionUID = 1L;

  public static final String NAME = "giql_covered";

  private final Seq<Expression> args;
  private final int mutableOffset;
  private final int inputOffset;

  public Covered(Seq<Expression> args, int mutableOffset, int inputOffset) {
    this.args = args;
    this.mutableOffset = mutableOffset;
    this.inputOffset = inputOffset;
  }

  /** The function builder behind {@code giql_covered(...)} in SQL. */
  public static Expression build(scala.collection.Seq<Expression> all) {
    List<Expression> a = Scala.list(all);
    if (a.size() != 4) {
      throw new IllegalArgumentException(NAME + "(left_lo, left_hi, right_lo, right_hi) takes 4 "
          + "arguments; got " + a.size());
    }
    return new Covered(Scala.seq(a), 0, 0);
  }

  /** The arguments: left lo, left hi, right lo, right hi. */
  public List<Expression> bounds() {
    return Scala.list(args);
  }

  @Override
  public TypeCheckResult checkInputDataTypes() {
    for (Expression b : Scala.list(args)) {
      if (!BandMarker.isBoundType(b.dataType())) {
        return new TypeCheckResult.TypeCheckFailure(NAME + ": bounds must be integers"
            + " (tinyint, smallint, int or bigint); " + b.sql() + " is " + b.dataType().sql());
      }
    }
    return TypeCheckResult.TypeCheckSuccess$.MODULE$;
  }

  @Override
  public Runs createAggregationBuffer() {
    return new Runs();
  }

  @Override
  public Runs update(Runs buffer, InternalRow input) {
    long[] v = new long[4];
    for (int i = 0; i < 4; i++) {
      Object x = args.apply(i).eval(input);
      if (x == null) return buffer;
      v[i] = ((Number) x).longValue();
    }
    long lo = Math.max(Math.min(v[0], v[1]), Math.min(v[2], v[3]));
    long hi = Math.min(Math.max(v[0], v[1]), Math.max(v[2], v[3]));
    buffer.add(lo, hi);
    return buffer;
  }

  @Override
  public Runs merge(Runs buffer, Runs input) {
    buffer.addAll(input);
    return buffer;
  }

  @Override
  public Object eval(Runs buffer) {
    return buffer.points();
  }

  @Override
  public byte[] serialize(Runs buffer) {
    return buffer.toBytes();
  }

  @Override
  public Runs deserialize(byte[] bytes) {
    return Runs.fromBytes(bytes);
  }

  @Override
  public int mutableAggBufferOffset() {
    return mutableOffset;
  }

  @Override
  public int inputAggBufferOffset() {
    return inputOffset;
  }

  @Override
  public ImperativeAggregate withNewMutableAggBufferOffset(int offset) {
    return new Covered(args, offset, inputOffset);
  }

  @Override
  public ImperativeAggregate withNewInputAggBufferOffset(int offset) {
    return new Covered(args, mutableOffset, offset);
  }

  @Override
  public Seq<Expression> children() {
    return args;
  }

  public final Expression withNewChildrenInternal(scala.collection.IndexedSeq<Expression> c) {
    return new Covered(Scala.seq(Scala.list(c)), mutableOffset, inputOffset);
  }

  public final Expression withNewChildrenInternal(
      scala.collection.immutable.IndexedSeq<Expression> c) {
    return new Covered(Scala.seq(Scala.list(c)), mutableOffset, inputOffset);
  }

  @Override
  public boolean nullable() {
    return false;
  }

  @Override
  public DataType dataType() {
    return LongType$.MODULE$;
  }

  @Override
  public String prettyName() {
    return NAME;
  }

  @Override
  public int productArity() {
    return 3;
  }

  @Override
  public Object productElement(int n) {
    switch (n) {
      case 0: return args;
      case 1: return mutableOffset;
      case 2: return inputOffset;
      default: throw new IndexOutOfBoundsException(String.valueOf(n));
    }
  }

  @Override
  public boolean canEqual(Object other) {
    return other instanceof Covered;
  }

  @Override
  public boolean equals(Object other) {
    if (!(other instanceof Covered)) return false;
    Covered o = (Covered) other;
    return args.equals(o.args) && mutableOffset == o.mutableOffset
        && inputOffset == o.inputOffset;
  }

  @Override
  public int hashCode() {
    return args.hashCode() * 31 + mutableOffset * 7 + inputOffset;
  }
}
