package io.giql.spark.exec;

import java.io.Serializable;

import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataType;

import io.giql.spark.index.IntervalIndex;
import io.giql.spark.index.Nearest;
import io.giql.spark.index.PerRow;

import scala.collection.immutable.Seq;

import io.giql.spark.exec.BroadcastIntervalJoinExec.Mode;

/** Everything a task needs to probe; serialised into the task closure. */
public final class Probe implements Serializable {
  private static final long serialVersionUID = 1L;
  final Mode mode;
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
  PerRow perRow;
  boolean keepsUnmatched; // a per-row count's unmatched left rows report a row
  Nearest nearest;        // a k-nearest join: the candidates are the nearest rows

  Probe(Mode mode, Broadcast<IntervalIndex> bc, Seq<Expression> streamKeys, Expression streamLo,
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

  Probe with(Mode m) {
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
}
