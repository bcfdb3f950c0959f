package io.giql.spark.join.broadcast;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.FullOuter$;
import org.apache.spark.sql.catalyst.plans.InnerLike;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftAnti$;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.sql.catalyst.plans.RightOuter$;
import org.apache.spark.sql.catalyst.plans.physical.BroadcastDistribution;
import org.apache.spark.sql.catalyst.plans.physical.Distribution;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.sql.catalyst.plans.physical.UnspecifiedDistribution$;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.metric.SQLMetric;
import org.apache.spark.sql.types.DataType;

import io.giql.spark.columns.Bind;
import io.giql.spark.compat.Scala;
import io.giql.spark.compat.PartitionFn;
import io.giql.spark.compat.Partitions;
import io.giql.spark.index.IntervalIndex;
import io.giql.spark.index.IntervalIndexMode;
import io.giql.spark.index.Nearest;
import io.giql.spark.index.PerRow;
import io.giql.spark.exec.ExecNode;
import io.giql.spark.exec.Jobs;
import io.giql.spark.join.probe.BuildRows;
import io.giql.spark.join.probe.SortedCount;
import io.giql.spark.join.probe.ProbeMode;
import io.giql.spark.join.probe.Probe;
import io.giql.spark.join.probe.ProbeIterator;

import scala.Option;
import scala.collection.immutable.Seq;

/**
 * Interval join with one side broadcast as an {@link IntervalIndex} and the other streamed past it
 * without a shuffle. A pair joins when its keys are equal, the closed hulls [least(lo,hi),
 * greatest(lo,hi)] share a point, and the residual is TRUE.
 *
 * <p>Join types: inner, left/right/full outer, left semi, left anti, with either side built. When
 * the build side is preserved (full outer, right outer building right, left outer / semi / anti
 * building left), a first job ORs per-task bitsets of matched build rows and the build rows are
 * then emitted once from one extra partition, as BroadcastNestedLoopJoinExec does.
 *
 * <p>With {@link Nearest} (inner or left outer, building the right side) each left row joins
 * the k right rows of its keys whose hulls are nearest to its own, found by the index, instead
 * of the rows whose hulls meet; the residual then filters those.
 */
public final class BroadcastIntervalJoinExec extends ExecNode {
  private static final long serialVersionUID = 1L;

  private final SparkPlan left;
  private final SparkPlan right;
  private final JoinType joinType;
  private final String buildSide;
  private final Seq<Expression> leftKeys;
  private final Expression leftLo;
  private final Expression leftHi;
  private final Seq<Expression> rightKeys;
  private final Expression rightLo;
  private final Expression rightHi;
  private final Option<Expression> residual;
  private final String index;
  private final Option<Seq<NamedExpression>> projection;
  private final PerRow perRow; // one row per left row with its count (build right), or null
  private final Nearest nearest; // a k-nearest join (build right), or null
  private final Attribute countAttr; // one row per task with its number of join rows, or null

  public BroadcastIntervalJoinExec(SparkPlan left, SparkPlan right, JoinType joinType,
      String buildSide, Seq<Expression> leftKeys, Expression leftLo, Expression leftHi,
      Seq<Expression> rightKeys, Expression rightLo, Expression rightHi,
      Option<Expression> residual, String index, Option<Seq<NamedExpression>> projection) {
    this(left, right, joinType, buildSide, leftKeys, leftLo, leftHi, rightKeys, rightLo, rightHi,
        residual, index, projection, Option.empty());
  }

  public BroadcastIntervalJoinExec(SparkPlan left, SparkPlan right, JoinType joinType,
      String buildSide, Seq<Expression> leftKeys, Expression leftLo, Expression leftHi,
      Seq<Expression> rightKeys, Expression rightLo, Expression rightHi,
      Option<Expression> residual, String index, Option<Seq<NamedExpression>> projection,
      Option<PerRow> perRow) {
    this(left, right, joinType, buildSide, leftKeys, leftLo, leftHi, rightKeys, rightLo, rightHi,
        residual, index, projection, perRow, Option.empty());
  }

  public BroadcastIntervalJoinExec(SparkPlan left, SparkPlan right, JoinType joinType,
      String buildSide, Seq<Expression> leftKeys, Expression leftLo, Expression leftHi,
      Seq<Expression> rightKeys, Expression rightLo, Expression rightHi,
      Option<Expression> residual, String index, Option<Seq<NamedExpression>> projection,
      Option<PerRow> perRow, Option<Nearest> nearest) {
    this(left, right, joinType, buildSide, leftKeys, leftLo, leftHi, rightKeys, rightLo, rightHi,
        residual, index, projection, perRow, nearest, Option.empty());
  }

  public BroadcastIntervalJoinExec(SparkPlan left, SparkPlan right, JoinType joinType,
      String buildSide, Seq<Expression> leftKeys, Expression leftLo, Expression leftHi,
      Seq<Expression> rightKeys, Expression rightLo, Expression rightHi,
      Option<Expression> residual, String index, Option<Seq<NamedExpression>> projection,
      Option<PerRow> perRow, Option<Nearest> nearest, Option<Attribute> count) {
    this.countAttr = count.isDefined() ? count.get() : null;
    this.perRow = perRow.isDefined() ? perRow.get() : null;
    this.nearest = nearest.isDefined() ? nearest.get() : null;
    this.left = left;
    this.right = right;
    this.joinType = joinType;
    this.buildSide = buildSide;
    this.leftKeys = leftKeys;
    this.leftLo = leftLo;
    this.leftHi = leftHi;
    this.rightKeys = rightKeys;
    this.rightLo = rightLo;
    this.rightHi = rightHi;
    this.residual = residual;
    this.index = index;
    this.projection = projection;
  }

  public SparkPlan left() {
    return left;
  }

  public SparkPlan right() {
    return right;
  }

  public JoinType joinType() {
    return joinType;
  }

  private boolean buildRight() {
    return "right".equals(buildSide);
  }

  private SparkPlan streamed() {
    return buildRight() ? left : right;
  }

  private SparkPlan built() {
    return buildRight() ? right : left;
  }

  static boolean isInner(JoinType t) {
    return t instanceof InnerLike;
  }

  /** Does the output keep unmatched rows of the left / right input? */
  private boolean preservesLeft() {
    return joinType == LeftOuter$.MODULE$ || joinType == FullOuter$.MODULE$;
  }

  private boolean preservesRight() {
    return joinType == RightOuter$.MODULE$ || joinType == FullOuter$.MODULE$;
  }

  private boolean existence() {
    return joinType == LeftSemi$.MODULE$ || joinType == LeftAnti$.MODULE$;
  }

  /** The build side's rows appear in the output on their own (not only in pairs). */
  private boolean buildPreserved() {
    if (existence()) return !buildRight();
    return buildRight() ? preservesRight() : preservesLeft();
  }

  private boolean streamPreserved() {
    return buildRight() ? preservesLeft() : preservesRight();
  }

  // ------------------------------------------------------------------ plan node plumbing

  @Override
  public Seq<Attribute> output() {
    if (countAttr != null) return Scala.seqOf(countAttr);
    if (projection.isDefined()) {
      List<Attribute> out = new ArrayList<>();
      for (NamedExpression e : Scala.list(projection.get())) out.add(e.toAttribute());
      return Scala.seq(out);
    }
    return joinOutput();
  }

  /** The join's own output, before any fused projection. */
  private Seq<Attribute> joinOutput() {
    List<Attribute> out = new ArrayList<>();
    if (existence()) {
      return Scala.imm(left.output());
    }
    for (Attribute a : Scala.list(left.output())) {
      out.add(preservesRight() ? a.withNullability(true) : a);
    }
    for (Attribute a : Scala.list(right.output())) {
      out.add(preservesLeft() ? a.withNullability(true) : a);
    }
    return Scala.seq(out);
  }

  @Override
  public Seq<SparkPlan> children() {
    return Scala.seqOf(left, right);
  }

  @Override
  protected SparkPlan withChildren(List<SparkPlan> c) {
    return new BroadcastIntervalJoinExec(c.get(0), c.get(1), joinType, buildSide, leftKeys,
        leftLo, leftHi, rightKeys, rightLo, rightHi, residual, index, projection,
        Option.apply(perRow), Option.apply(nearest), Option.apply(countAttr));
  }

  /**
   * This join (inner or left outer, building the right side) as one row per left row:
   * {@code keep}, over the left output and the per-row attributes ({@link PerRow#outputs}), is its
   * output; the left side streams past the index.
   */
  public BroadcastIntervalJoinExec withPerRow(Seq<NamedExpression> keep, PerRow p) {
    return new BroadcastIntervalJoinExec(left, right, joinType, "right", leftKeys, leftLo,
        leftHi, rightKeys, rightLo, rightHi, residual, index, Option.apply(keep), Option.apply(p));
  }

  /**
   * This inner join as a count of its rows: one row per task, {@code count}, for
   * {@link SumCountsExec} to add up. No joined row is built.
   */
  public BroadcastIntervalJoinExec withCount(Attribute count) {
    return new BroadcastIntervalJoinExec(left, right, joinType, buildSide, leftKeys, leftLo,
        leftHi, rightKeys, rightLo, rightHi, residual, index, Option.empty(), Option.empty(),
        Option.empty(), Option.apply(count));
  }

  /** This join (inner or left outer) as a k-nearest join building the right side. */
  public BroadcastIntervalJoinExec withNearest(Nearest n) {
    return new BroadcastIntervalJoinExec(left, right, joinType, "right", leftKeys, leftLo,
        leftHi, rightKeys, rightLo, rightHi, residual, index, projection, Option.empty(),
        Option.apply(n));
  }

  @Override
  protected Object[] fields() {
    return new Object[] {
        left, right, joinType, buildSide, leftKeys, leftLo, leftHi, rightKeys, rightLo, rightHi,
        residual, index, projection, Option.apply(perRow), Option.apply(nearest),
        Option.apply(countAttr)};
  }

  @Override
  protected java.util.Map<String, String> metricDescriptions() {
    return joinMetrics();
  }

  @Override
  public String nodeName() {
    return "BroadcastIntervalJoin";
  }

  @Override
  public String simpleString(int maxFields) {
    return nodeName() + " " + joinType + ", build " + buildSide + ", keys "
        + leftKeys.mkString("[", ", ", "]") + " = " + rightKeys.mkString("[", ", ", "]")
        + ", hull [" + leftLo + ", " + leftHi + "] ~ [" + rightLo + ", " + rightHi + "]"
        + ", index " + index
        + (residual.isDefined() ? ", residual " + residual.get() : "")
        + (projection.isDefined() ? ", output " + projection.get().mkString("[", ", ", "]") : "")
        + (perRow != null ? ", " + perRow : "")
        + (nearest != null ? ", " + nearest : "")
        + (countAttr != null ? ", count of join rows as " + countAttr : "");
  }

  @Override
  public Seq<Distribution> requiredChildDistribution() {
    SparkPlan b = built();
    scala.collection.Seq<Attribute> attrs = b.output();
    List<Expression> keys = new ArrayList<>();
    for (Expression k : Scala.list(buildRight() ? rightKeys : leftKeys)) keys.add(Bind.bind(k, attrs));
    Expression lo = Bind.bind(buildRight() ? rightLo : leftLo, attrs);
    Expression hi = Bind.bind(buildRight() ? rightHi : leftHi, attrs);
    DataType[] types = new DataType[attrs.size()];
    for (int i = 0; i < types.length; i++) types[i] = attrs.apply(i).dataType();
    Distribution bd = new BroadcastDistribution(
        new IntervalIndexMode(Scala.seq(keys), lo, hi, index, types));
    Distribution any = UnspecifiedDistribution$.MODULE$;
    return buildRight() ? Scala.seqOf(any, bd) : Scala.seqOf(bd, any);
  }

  @Override
  public Partitioning outputPartitioning() {
    if (!buildPreserved() && projection.isEmpty() && countAttr == null) {
      return streamed().outputPartitioning();
    }
    return new UnknownPartitioning(0);
  }

  // ------------------------------------------------------------------ execution

  @Override
  public RDD<InternalRow> doExecute() {
    Broadcast<IntervalIndex> bc = built().executeBroadcast();
    SQLMetric numOut = longMetric("numOutputRows");
    SQLMetric numCand = longMetric("numCandidates");
    Probe base = probe(ProbeMode.PAIRS, numOut, numCand, bc);
    RDD<InternalRow> stream = streamed().execute();
    if (countAttr != null) {
      return Partitions.mapWithIndex(stream, PartitionFn.scala(SortedCount.fn(base)), false,
          false, Scala.tag(InternalRow.class));
    }
    if (perRow != null) {
      return Partitions.mapWithIndex(stream, PartitionFn.scala(ProbeIterator.fn(base.with(ProbeMode.COUNT))), false,
          false, Scala.tag(InternalRow.class));
    }
    if (!buildPreserved()) {
      ProbeMode m;
      if (joinType == LeftSemi$.MODULE$) m = ProbeMode.SEMI;
      else if (joinType == LeftAnti$.MODULE$) m = ProbeMode.ANTI;
      else if (streamPreserved()) m = ProbeMode.PAIRS_OR_PAD;
      else m = ProbeMode.PAIRS;
      return Partitions.mapWithIndex(stream, PartitionFn.scala(ProbeIterator.fn(base.with(m))), false, false,
          Scala.tag(InternalRow.class));
    }
    // The build side is preserved: one job marks the build rows that match anything.
    Probe marker = base.with(ProbeMode.MARK);
    RDD<long[]> marks = Partitions.mapWithIndex(stream, PartitionFn.scala(ProbeIterator.marks(marker)), false, false,
        Scala.tag(long[].class));
    List<long[]> parts = Jobs.each(marks, new Jobs.Only<>(), long[].class);
    int n = bc.value().numRows();
    long[] matched = new long[(n + 63) >>> 6];
    for (long[] p : parts) {
      for (int i = 0; i < matched.length; i++) matched[i] |= p[i];
    }
    boolean wantMatched = joinType == LeftSemi$.MODULE$;
    RDD<Object> one = sparkContext().parallelize(Scala.<Object>seqOf(0), 1, Scala.tag(Object.class));
    RDD<InternalRow> rest = Partitions.mapWithIndex(one, new BuildRows(base, matched, wantMatched, existence()),
            false, false, Scala.tag(InternalRow.class));
    if (existence()) {
      return rest;
    }
    ProbeMode m = streamPreserved() ? ProbeMode.PAIRS_OR_PAD : ProbeMode.PAIRS;
    RDD<InternalRow> pairs = Partitions.mapWithIndex(stream, PartitionFn.scala(ProbeIterator.fn(base.with(m))), false, false,
        Scala.tag(InternalRow.class));
    return pairs.union(rest);
  }

  private Probe probe(ProbeMode mode, SQLMetric numOut, SQLMetric numCand,
      Broadcast<IntervalIndex> bc) {
    scala.collection.Seq<Attribute> sAttrs = streamed().output();
    List<Expression> keys = new ArrayList<>();
    for (Expression k : Scala.list(buildRight() ? leftKeys : rightKeys)) keys.add(Bind.bind(k, sAttrs));
    Expression lo = Bind.bind(buildRight() ? leftLo : rightLo, sAttrs);
    Expression hi = Bind.bind(buildRight() ? leftHi : rightHi, sAttrs);
    List<Attribute> joinedAttrs = new ArrayList<>();
    for (Attribute a : Scala.list(left.output())) joinedAttrs.add(a.withNullability(true));
    for (Attribute a : Scala.list(right.output())) joinedAttrs.add(a.withNullability(true));
    List<Expression> result = new ArrayList<>();
    if (countAttr != null) {
      // a count builds no joined row
    } else if (projection.isDefined()) {
      for (NamedExpression e : Scala.list(projection.get())) result.add((Expression) e);
    } else {
      result.addAll(Scala.list(output()));
    }
    if (perRow != null) {
      // the result reads the left row and the per-row attributes
      joinedAttrs = new ArrayList<>(Scala.list(left.output()));
      joinedAttrs.addAll(perRow.outputs());
    }
    Probe q = new Probe(mode, bc, Scala.seq(keys), lo, hi, residual.isDefined() ? residual.get() : null,
        Scala.concat(left.output(), right.output()), Scala.imm(left.output()),
        Scala.imm(right.output()),
        Scala.seq(result), Scala.seq(joinedAttrs),
        buildRight(), streamed().output().size(), built().output().size(),
        Bind.types(streamed().output()), numOut, numCand);
    q.perRow = perRow;
    q.keepsUnmatched = preservesLeft();
    q.nearest = nearest;
    return q;
  }
}
