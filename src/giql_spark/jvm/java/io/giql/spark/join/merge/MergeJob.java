package io.giql.spark.join.merge;

import java.io.Serializable;

import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.execution.metric.SQLMetric;

import io.giql.spark.index.PerRow;

import scala.collection.immutable.Seq;

/** Everything one task needs, shipped in its closure. */
public final class MergeJob implements Serializable {
  private static final long serialVersionUID = 1L;
  final JoinKind kind;
  final boolean count;
  final SideSpec left;
  final SideSpec right;
  final Expression residual;          // over left side ++ right side, or null
  final Seq<Attribute> leftAttrs;
  final Seq<Attribute> rightAttrs;
  final Seq<Expression> output;       // over leftAttrs ++ rightAttrs (nullable), pairs/pads
  final Seq<Attribute> joinedAttrs;
  final MergePlan plan;
  final SQLMetric numOut;
  final SQLMetric numCand;
  final SQLMetric numFailover;
  final SQLMetric rowsRead;
  final long slack;
  final PerRow perRow;                // one row per left row with its count, or null

  public MergeJob withPerRow(PerRow p) {
    MergeJob j = new MergeJob(kind, count, left, right, residual, leftAttrs, rightAttrs, output,
        joinedAttrs, plan, numOut, numCand, numFailover, rowsRead, slack, p);
    return j;
  }

  public MergeJob(JoinKind kind, boolean count, SideSpec left, SideSpec right, Expression residual,
      Seq<Attribute> leftAttrs, Seq<Attribute> rightAttrs, Seq<Expression> output,
      Seq<Attribute> joinedAttrs, MergePlan plan, SQLMetric numOut, SQLMetric numCand,
      SQLMetric numFailover, SQLMetric rowsRead, long slack) {
    this(kind, count, left, right, residual, leftAttrs, rightAttrs, output, joinedAttrs, plan,
        numOut, numCand, numFailover, rowsRead, slack, null);
  }

  public MergeJob(JoinKind kind, boolean count, SideSpec left, SideSpec right, Expression residual,
      Seq<Attribute> leftAttrs, Seq<Attribute> rightAttrs, Seq<Expression> output,
      Seq<Attribute> joinedAttrs, MergePlan plan, SQLMetric numOut, SQLMetric numCand,
      SQLMetric numFailover, SQLMetric rowsRead, long slack, PerRow perRow) {
    this.perRow = perRow;
    this.slack = slack;
    this.kind = kind;
    this.count = count;
    this.left = left;
    this.right = right;
    this.residual = residual;
    this.leftAttrs = leftAttrs;
    this.rightAttrs = rightAttrs;
    this.output = output;
    this.joinedAttrs = joinedAttrs;
    this.plan = plan;
    this.numOut = numOut;
    this.numCand = numCand;
    this.numFailover = numFailover;
    this.rowsRead = rowsRead;
  }
}
