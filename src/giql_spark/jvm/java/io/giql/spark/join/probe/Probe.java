package io.giql.spark.join.probe;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataType;

import io.giql.spark.columns.Bind;
import io.giql.spark.compat.Scala;
import io.giql.spark.index.IntervalIndex;
import io.giql.spark.index.Nearest;
import io.giql.spark.index.PerRow;

import scala.collection.immutable.Seq;


/** Everything a task needs to probe; serialised into the task closure. */
public final class Probe implements Serializable {
  private static final long serialVersionUID = 1L;
  final ProbeMode mode;
  final Broadcast<IntervalIndex> bc;
  final Seq<Expression> streamKeys;
  final Expression streamLo;
  final Expression streamHi;
  final Expression residual;
  final Seq<Attribute> residualInput;
  final Seq<Attribute> leftOut;
  final Seq<Attribute> rightOut;
  final Seq<Expression> output;     // the output expressions over joinedInput
  final Seq<Attribute> joinedInput;
  final boolean buildRight;
  final int streamFields;
  final int buildFields;
  final DataType[] streamTypes;
  final SQLMetric numOut;
  final SQLMetric numCand;
  public PerRow perRow;
  public boolean keepsUnmatched; // a per-row count's unmatched left rows report a row
  public Nearest nearest;       // a k-nearest join: the candidates are the nearest rows

  public Probe(ProbeMode mode, Broadcast<IntervalIndex> bc, Seq<Expression> streamKeys, Expression streamLo,
      Expression streamHi, Expression residual, Seq<Attribute> residualInput,
      Seq<Attribute> leftOut, Seq<Attribute> rightOut, Seq<Expression> output, Seq<Attribute> joinedInput, boolean buildRight, int streamFields,
      int buildFields, DataType[] streamTypes, SQLMetric numOut, SQLMetric numCand) {
    this.mode = mode;
    this.bc = bc;
    this.streamKeys = streamKeys;
    this.streamLo = streamLo;
    this.streamHi = streamHi;
    this.residual = residual;
    this.residualInput = residualInput;
    this.leftOut = leftOut;
    this.rightOut = rightOut;
    this.output = output;
    this.joinedInput = joinedInput;
    this.buildRight = buildRight;
    this.streamFields = streamFields;
    this.streamTypes = streamTypes;
    this.buildFields = buildFields;
    this.numOut = numOut;
    this.numCand = numCand;
  }

  public Probe with(ProbeMode m) {
    Probe q = new Probe(m, bc, streamKeys, streamLo, streamHi, residual, residualInput, leftOut,
        rightOut, output,
        joinedInput, buildRight, streamFields, buildFields, streamTypes, numOut, numCand);
    q.perRow = perRow;
    q.keepsUnmatched = keepsUnmatched;
    q.nearest = nearest;
    return q;
  }

  UnsafeProjection resultProjection() {
    return UnsafeProjection.create(output, joinedInput);
  }

  /**
   * The probe of a k-nearest join whose right side is indexed a unit at a time by a merge join
   * ({@code io.giql.spark.join.merge.MergeIntervalJoinExec}), with no broadcast: the left rows stream, inner or left outer.
   * {@code output} is over the left then the right attributes (both nullable).
   */
  public static Probe forUnit(boolean leftOuter, Seq<Attribute> leftOut, Seq<Attribute> rightOut,
      Seq<Expression> leftKeys, Expression lo, Expression hi, Expression residual,
      Seq<Expression> output, Nearest nearest, SQLMetric numOut, SQLMetric numCand) {
    List<Expression> keys = new ArrayList<>();
    for (Expression k : Scala.list(leftKeys)) keys.add(Bind.bind(k, leftOut));
    List<Attribute> joinedAttrs = new ArrayList<>();
    for (Attribute a : Scala.list(leftOut)) joinedAttrs.add(a.withNullability(true));
    for (Attribute a : Scala.list(rightOut)) joinedAttrs.add(a.withNullability(true));
    Probe q = new Probe(leftOuter ? ProbeMode.PAIRS_OR_PAD : ProbeMode.PAIRS, null, Scala.seq(keys),
        Bind.bind(lo, leftOut), Bind.bind(hi, leftOut), residual, Scala.concat(leftOut, rightOut),
        Scala.imm(leftOut), Scala.imm(rightOut), output, Scala.seq(joinedAttrs), true,
        leftOut.size(), rightOut.size(), Bind.types(leftOut), numOut, numCand);
    q.keepsUnmatched = leftOuter;
    q.nearest = nearest;
    return q;
  }
}
