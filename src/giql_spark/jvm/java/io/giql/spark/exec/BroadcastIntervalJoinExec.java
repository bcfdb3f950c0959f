package io.giql.spark.exec;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
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
import io.giql.spark.columns.FastResidual;
import io.giql.spark.columns.Residual;
import io.giql.spark.columns.RowConcat;
import io.giql.spark.compat.Scala;
import io.giql.spark.compat.PartitionFn;
import io.giql.spark.compat.Partitions;
import io.giql.spark.index.IntervalIndex;
import io.giql.spark.index.IntervalIndexMode;
import io.giql.spark.index.Nearest;
import io.giql.spark.index.PerRow;

import scala.Option;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;
import scala.runtime.AbstractFunction2;

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
    for (Expression k : Scala.list(buildRight() ? rightKeys : leftKeys)) keys.add(bind(k, attrs));
    Expression lo = bind(buildRight() ? rightLo : leftLo, attrs);
    Expression hi = bind(buildRight() ? rightHi : leftHi, attrs);
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

  static DataType[] types(scala.collection.Seq<Attribute> attrs) {
    DataType[] t = new DataType[attrs.size()];
    for (int i = 0; i < t.length; i++) t[i] = attrs.apply(i).dataType();
    return t;
  }

  static Expression bind(Expression e, scala.collection.Seq<Attribute> attrs) {
    return Bind.bind(e, attrs);
  }

  // ------------------------------------------------------------------ execution

  /** What one pass over the streamed side does. */
  enum Mode { PAIRS, PAIRS_OR_PAD, SEMI, ANTI, MARK, COUNT }

  @Override
  public RDD<InternalRow> doExecute() {
    Broadcast<IntervalIndex> bc = built().executeBroadcast();
    SQLMetric numOut = longMetric("numOutputRows");
    SQLMetric numCand = longMetric("numCandidates");
    Probe base = probe(Mode.PAIRS, numOut, numCand, bc);
    RDD<InternalRow> stream = streamed().execute();
    if (countAttr != null) {
      return Partitions.mapWithIndex(stream, PartitionFn.scala(SortedCount.fn(base)), false,
          false, Scala.tag(InternalRow.class));
    }
    if (perRow != null) {
      return Partitions.mapWithIndex(stream, PartitionFn.scala(probeFn(base.with(Mode.COUNT))), false,
          false, Scala.tag(InternalRow.class));
    }
    if (!buildPreserved()) {
      Mode m;
      if (joinType == LeftSemi$.MODULE$) m = Mode.SEMI;
      else if (joinType == LeftAnti$.MODULE$) m = Mode.ANTI;
      else if (streamPreserved()) m = Mode.PAIRS_OR_PAD;
      else m = Mode.PAIRS;
      return Partitions.mapWithIndex(stream, PartitionFn.scala(probeFn(base.with(m))), false, false,
          Scala.tag(InternalRow.class));
    }
    // The build side is preserved: one job marks the build rows that match anything.
    Probe marker = base.with(Mode.MARK);
    RDD<long[]> marks = Partitions.mapWithIndex(stream, PartitionFn.scala(markFn(marker)), false, false,
        Scala.tag(long[].class));
    List<long[]> parts = Jobs.each(marks, new Jobs.Only<>(), long[].class);
    int n = bc.value().numRows();
    long[] matched = new long[(n + 63) >>> 6];
    for (long[] p : parts) {
      for (int i = 0; i < matched.length; i++) matched[i] |= p[i];
    }
    boolean wantMatched = joinType == LeftSemi$.MODULE$;
    RDD<Object> one = sparkContext().parallelize(Scala.<Object>seqOf(0), 1, Scala.tag(Object.class));
    RDD<InternalRow> rest = Partitions.mapWithIndex(one, new BuildRowsFn(base, matched, wantMatched, existence()),
            false, false, Scala.tag(InternalRow.class));
    if (existence()) {
      return rest;
    }
    Mode m = streamPreserved() ? Mode.PAIRS_OR_PAD : Mode.PAIRS;
    RDD<InternalRow> pairs = Partitions.mapWithIndex(stream, PartitionFn.scala(probeFn(base.with(m))), false, false,
        Scala.tag(InternalRow.class));
    return pairs.union(rest);
  }

  /**
   * The probe of a k-nearest join whose right side is indexed a unit at a time by a merge join
   * ({@link MergeIntervalJoinExec}), with no broadcast: the left rows stream, inner or left outer.
   * {@code output} is over the left then the right attributes (both nullable).
   */
  static Probe unitProbe(boolean leftOuter, Seq<Attribute> leftOut, Seq<Attribute> rightOut,
      Seq<Expression> leftKeys, Expression lo, Expression hi, Expression residual,
      Seq<Expression> output, Nearest nearest, SQLMetric numOut, SQLMetric numCand) {
    List<Expression> keys = new ArrayList<>();
    for (Expression k : Scala.list(leftKeys)) keys.add(bind(k, leftOut));
    List<Attribute> joinedAttrs = new ArrayList<>();
    for (Attribute a : Scala.list(leftOut)) joinedAttrs.add(a.withNullability(true));
    for (Attribute a : Scala.list(rightOut)) joinedAttrs.add(a.withNullability(true));
    Probe q = new Probe(leftOuter ? Mode.PAIRS_OR_PAD : Mode.PAIRS, null, Scala.seq(keys),
        bind(lo, leftOut), bind(hi, leftOut), residual, Scala.concat(leftOut, rightOut),
        Scala.imm(leftOut), Scala.imm(rightOut), output, Scala.seq(joinedAttrs), true,
        leftOut.size(), rightOut.size(), types(leftOut), numOut, numCand);
    q.keepsUnmatched = leftOuter;
    q.nearest = nearest;
    return q;
  }

  /** Per unit of a merge task: its right rows indexed by {@code mode}, its left rows probed. */
  static Iterator<InternalRow> unitsProbed(Probe p, IntervalIndexMode mode, int partition,
      io.giql.spark.merge.UnitReader units) {
    return new scala.collection.AbstractIterator<InternalRow>() {
      private Iterator<InternalRow> cur = Scala.iterator(java.util.Collections.emptyIterator());

      @Override
      public boolean hasNext() {
        while (!cur.hasNext()) {
          if (!units.next()) return false;
          IntervalIndex idx = (IntervalIndex) mode.transform(units.right(), Option.empty());
          ProbeIterator it = new ProbeIterator(p, idx, partition, units.left());
          if (units.partial()) {
            it.reach = new Reach(units.restHi(), units.restLo(),
                () -> (IntervalIndex) mode.transform(units.allRight(), Option.empty()));
          }
          cur = it;
        }
        return true;
      }

      @Override
      public InternalRow next() {
        return cur.next();
      }
    };
  }

  private Probe probe(Mode mode, SQLMetric numOut, SQLMetric numCand,
      Broadcast<IntervalIndex> bc) {
    scala.collection.Seq<Attribute> sAttrs = streamed().output();
    List<Expression> keys = new ArrayList<>();
    for (Expression k : Scala.list(buildRight() ? leftKeys : rightKeys)) keys.add(bind(k, sAttrs));
    Expression lo = bind(buildRight() ? leftLo : rightLo, sAttrs);
    Expression hi = bind(buildRight() ? leftHi : rightHi, sAttrs);
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
        types(streamed().output()), numOut, numCand);
    q.perRow = perRow;
    q.keepsUnmatched = preservesLeft();
    q.nearest = nearest;
    return q;
  }

  /** Everything a task needs to probe; serialised into the task closure. */
  static final class Probe implements Serializable {
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

  /**
   * A k-nearest probe of an index of only the right rows within reach of its stream rows (a piece
   * of a merge's busy chromosome, {@code MergePlan.leftPieces}): every right row left out has
   * hi at most {@link #restHi} or lo at least {@link #restLo}, so its gap to a stream row's hull
   * [qlo, qhi] is at least {@code min(qlo - restHi, restLo - qhi)}. When the k-th nearest found
   * is nearer than that (or, with fewer than k found, the gap limit is), no row left out can be
   * among the nearest nor tie with them, and the answer is the one all rows would give.
   * Otherwise the probe asks {@link #all} for the index of all of them and uses it from then on.
   */
  static final class Reach {
    final long restHi;
    final long restLo;
    final java.util.function.Supplier<IntervalIndex> all;

    Reach(long restHi, long restLo, java.util.function.Supplier<IntervalIndex> all) {
      this.restHi = restHi;
      this.restLo = restLo;
      this.all = all;
    }

    /** Whether {@code found} (nearest first) are the nearest of all rows to [qlo, qhi]. */
    boolean certain(Nearest near, IntervalIndex idx, long qlo, long qhi,
        IntervalIndex.IntBuffer found) {
      // the least gap of a row left out (no row on a side: no bound from it)
      long outside = Math.min(restHi == Long.MIN_VALUE ? Long.MAX_VALUE : minus(qlo, restHi),
          restLo == Long.MAX_VALUE ? Long.MAX_VALUE : minus(restLo, qhi));
      if (found.n >= near.k) {
        return Nearest.gap(idx, found.a[near.k - 1], qlo, qhi) < outside;
      }
      return near.maxGap >= 0 && near.maxGap < outside;
    }

    /** a - b, saturating at the longs' ends. */
    private static long minus(long a, long b) {
      long d = a - b;
      if (((a ^ b) & (a ^ d)) < 0) return a > b ? Long.MAX_VALUE : Long.MIN_VALUE;
      return d;
    }
  }

  /** Probes one partition of the streamed side. */
  static final class ProbeIterator extends JoinIterator {
    private final Probe p;
    private final Iterator<InternalRow> stream;
    private IntervalIndex idx;
    Reach reach;        // a k-nearest probe of the right rows within reach, or null
    private final UnsafeProjection keyProj;
    private final UnsafeProjection boundsProj;
    private final Residual residual;
    private final UnsafeProjection resultProj;
    private final RowConcat concat;  // a pair's row as its two rows' bytes (null: resultProj)
    private final UnsafeProjection streamToUnsafe;
    private final JoinedRow joined = new JoinedRow();
    private final JoinedRow counted = new JoinedRow();
    private final PerRow.Acc acc;   // COUNT mode only
    private final PerRow.Sums sums; // the current stream row's sums (COUNT mode with sums)
    private long matches;
    private long curLo;             // the stream row's closed hull
    private long curHi;
    private final UnsafeRow buildRow;
    private final InternalRow nullBuild;
    private final IntervalIndex.IntBuffer cand = new IntervalIndex.IntBuffer();
    private final Nearest.Scratch nearScratch = new Nearest.Scratch();
    private EntryResidual values; // null: the residual is asked of the rows
    final long[] matchedBuild; // MARK mode only
    private InternalRow cur;
    private boolean curMatched;
    private int candPos;
    private GroupLookup groups;
    private int hint = -1;

    ProbeIterator(Probe p, int partition, Iterator<InternalRow> stream) {
      this(p, p.bc.value(), partition, stream);
    }

    /** Probes {@code idx}, an index not broadcast (one unit of a merge's right side). */
    ProbeIterator(Probe p, IntervalIndex idx, int partition, Iterator<InternalRow> stream) {
      super(p.numOut, p.numCand);
      this.p = p;
      this.stream = stream;
      this.idx = idx;
      this.groups = new GroupLookup(idx);
      this.keyProj = UnsafeProjection.create(p.streamKeys);
      this.boundsProj = UnsafeProjection.create(Scala.seqOf(p.streamLo, p.streamHi));
      this.residual = Residual.of(p.residual, p.residualInput, p.leftOut, p.rightOut, partition);
      this.resultProj = p.resultProjection();
      this.concat = p.mode == Mode.PAIRS || p.mode == Mode.PAIRS_OR_PAD
          ? RowConcat.of(p.output, p.joinedInput, p.buildRight ? p.streamFields : p.buildFields)
          : null;
      this.streamToUnsafe = p.mode == Mode.SEMI || p.mode == Mode.ANTI
          ? UnsafeProjection.create(p.streamTypes)
          : null;
      this.values = EntryResidual.of(residual, idx, p.buildRight);
      this.accept = p.nearest != null && p.nearest.filtered && residual != null ? this::holds : null;
      this.buildRow = new UnsafeRow(p.buildFields);
      this.nullBuild = new GenericInternalRow(p.buildFields);
      this.matchedBuild = p.mode == Mode.MARK ? new long[(idx.numRows() + 63) >>> 6] : null;
      if (p.mode == Mode.COUNT) {
        // a padded row's sums read NULL right columns
        List<Attribute> in = new ArrayList<>(Scala.list(p.leftOut));
        for (Attribute a : Scala.list(p.rightOut)) in.add(a.withNullability(true));
        this.acc = p.perRow.acc(Scala.seq(in));
        this.sums = acc.fresh();
      } else {
        this.acc = null;
        this.sums = null;
      }
    }

    private void pair(InternalRow s, InternalRow b) {
      if (p.buildRight) joined.apply(s, b);
      else joined.apply(b, s);
    }

    private InternalRow asUnsafe(InternalRow r) {
      return r instanceof UnsafeRow ? r : streamToUnsafe.apply(r);
    }

    /**
     * Whether the residual holds for the current stream row and entry {@code entry}: a filtered
     * k-nearest join's search asks it of each entry it finds (null: the join is not one).
     */
    private final Nearest.Accept accept;

    private boolean holds(int entry) {
      int v = values == null ? FastResidual.UNKNOWN : values.eval(entry);
      if (v != FastResidual.UNKNOWN || residual == null) return v != FastResidual.FALSE;
      idx.pointTo(buildRow, idx.rowOf[entry]);
      pair(cur, buildRow);
      return p.buildRight ? residual.holds(cur, buildRow, joined)
          : residual.holds(buildRow, cur, joined);
    }

    /** Loads the candidates of the current stream row. */
    private void candidates() {
      cand.clear();
      candPos = 0;
      UnsafeRow key = keyProj.apply(cur);
      if (key.anyNull()) return;
      UnsafeRow b = boundsProj.apply(cur);
      if (b.anyNull()) return;
      long x = b.getLong(0);
      long y = b.getLong(1);
      curLo = Math.min(x, y);
      curHi = Math.max(x, y);
      int g = groups.group(key);
      if (groups.changed) hint = -1;
      if (g >= 0) probe(g);
      if (reach != null && (g < 0 || !reach.certain(p.nearest, idx, curLo, curHi, cand))) {
        // this row's nearest may lie among the right rows not read (or its key has no row that
        // can match among those read): read them all, once, and probe them from here on
        idx = reach.all.get();
        reach = null;
        groups = new GroupLookup(idx);
        values = EntryResidual.of(residual, idx, p.buildRight);
        hint = -1;
        cand.clear();
        g = groups.group(key);
        if (g >= 0) probe(g);
      }
      candRows += cand.n;
    }

    /** The candidates of the current row (its hull [curLo, curHi]) in group {@code g}. */
    private void probe(int g) {
      if (values != null) values.stream(cur);
      if (p.nearest != null) {
        p.nearest.find(idx, g, curLo, curHi, nearScratch, cand, accept);
      } else {
        hint = idx.query(g, curLo, curHi, hint, cand);
      }
    }

    @Override
    protected boolean advance() {
      while (true) {
        if (cur != null) {
          while (candPos < cand.n) {
            int entry = cand.a[candPos++];
            // a filtered search's entries have met the residual already
            int v = accept != null ? FastResidual.TRUE
                : values == null ? FastResidual.UNKNOWN : values.eval(entry);
            if (v == FastResidual.FALSE) continue;
            int r = idx.rowOf[entry];
            idx.pointTo(buildRow, r);
            pair(cur, buildRow);
            if (residual != null && v != FastResidual.TRUE && !(p.buildRight
                ? residual.holds(cur, buildRow, joined) : residual.holds(buildRow, cur, joined))) {
              continue;
            }
            curMatched = true;
            switch (p.mode) {
              case PAIRS:
              case PAIRS_OR_PAD:
                out = concat == null ? null
                    : p.buildRight ? concat.apply(cur, buildRow, joined) : concat.apply(buildRow, cur, joined);
                if (out == null) out = resultProj.apply(joined);
                return true;
              case SEMI:
                out = asUnsafe(cur);
                cur = null;
                return true;
              case ANTI:
                candPos = cand.n;
                break;
              case MARK:
                matchedBuild[r >>> 6] |= 1L << r;
                break;
              case COUNT:
                matches++;
                // build right: joined is (left, right)
                if (sums != null) acc.add(sums, joined, curLo, curHi, idx.lo(entry), idx.hi(entry));
                break;
              default:
                throw new IllegalStateException();
            }
          }
          InternalRow s = cur;
          cur = null;
          if (p.mode == Mode.COUNT) {
            long v = p.perRow.value(matches, p.keepsUnmatched);
            if (v >= 0) {
              if (matches == 0 && sums != null) {
                pair(s, nullBuild);
                acc.add(sums, joined, curLo, curHi, 1, 0); // the padded join row
              }
              out = resultProj.apply(counted.apply(s, acc.row(v, sums)));
              return true;
            }
            continue;
          }
          if (!curMatched) {
            if (p.mode == Mode.PAIRS_OR_PAD) {
              pair(s, nullBuild);
              out = resultProj.apply(joined);
              return true;
            }
            if (p.mode == Mode.ANTI) {
              out = asUnsafe(s);
              return true;
            }
          }
        }
        if (!stream.hasNext()) {
          flush();
          return false;
        }
        cur = stream.next();
        curMatched = false;
        matches = 0;
        if (sums != null) sums.clear();
        candidates();
      }
    }
  }

  /**
   * The fast residual on values: the build side's from the index's arrays by entry (made once per
   * JVM), the stream row's read once per row. A candidate it rejects costs no access to its row.
   */
  static final class EntryResidual {
    private final FastResidual fast;
    private final boolean buildRight;
    private final long[][] build;     // by column, then entry
    private final long[] buildNulls;  // NULL bits by entry, or null
    private final int[] streamOrds;
    private final boolean[] streamInt;
    private final long[] sv;
    private final long[] bv;
    private long sn;

    private EntryResidual(FastResidual fast, IntervalIndex idx, boolean buildRight) {
      int bs = buildRight ? 1 : 0;
      long[][] cols = idx.entryColumns(fast.columns(bs), fast.columnsAreInt(bs));
      this.fast = fast;
      this.buildRight = buildRight;
      this.build = cols;
      this.buildNulls = cols[cols.length - 1];
      this.streamOrds = fast.columns(1 - bs);
      this.streamInt = fast.columnsAreInt(1 - bs);
      this.sv = new long[streamOrds.length];
      this.bv = new long[cols.length - 1];
    }

    /** The residual's evaluator on values, or null where it has no fast form. */
    static EntryResidual of(Residual r, IntervalIndex idx, boolean buildRight) {
      return r == null || r.fast() == null ? null : new EntryResidual(r.fast(), idx, buildRight);
    }

    /** Reads the stream row the next {@link #eval}s pair with. */
    void stream(InternalRow row) {
      sn = read(row, sv, 0);
    }

    /** The number of stream values a row carries. */
    int streamWidth() {
      return streamOrds.length;
    }

    /** Reads a stream row's values into {@code out[off..]}; returns their NULL bits. */
    long read(InternalRow row, long[] out, int off) {
      long nulls = 0;
      for (int k = 0; k < streamOrds.length; k++) {
        if (row.isNullAt(streamOrds[k])) nulls |= 1L << k;
        else out[off + k] = streamInt[k] ? row.getInt(streamOrds[k]) : row.getLong(streamOrds[k]);
      }
      return nulls;
    }

    /** Takes the stream values the next {@link #eval}s pair with from {@code vals[off..]}. */
    void stream(long[] vals, int off, long nulls) {
      System.arraycopy(vals, off, sv, 0, sv.length);
      sn = nulls;
    }

    boolean exact() {
      return fast.exact();
    }

    /** {@link FastResidual}'s answer for the stream row and build entry {@code entry}. */
    int eval(int entry) {
      for (int k = 0; k < bv.length; k++) bv[k] = build[k][entry];
      long bn = buildNulls == null ? 0 : buildNulls[entry];
      return buildRight ? fast.evalValues(sv, sn, bv, bn) : fast.evalValues(bv, bn, sv, sn);
    }
  }

  static PartitionFn<InternalRow, InternalRow> probeFn(Probe p) {
    return (partition, it) -> new ProbeIterator(p, partition, it);
  }

  /** Probes every row and hands back the bitmap of the build rows some row matched. */
  static PartitionFn<InternalRow, long[]> markFn(Probe p) {
    return (partition, it) -> {
      ProbeIterator pi = new ProbeIterator(p, partition, it);
      while (pi.hasNext()) pi.next();
      return Scala.iterator(java.util.List.of(pi.matchedBuild).iterator());
    };
  }

  /** Emits the build rows that matched (semi) or did not (anti, outer) exactly once. */
  static final class BuildRowsFn
      extends AbstractFunction2<Object, Iterator<Object>, Iterator<InternalRow>>
      implements Serializable {
    private static final long serialVersionUID = 1L;
    private final Probe p;
    private final long[] matched;
    private final boolean wantMatched;
    private final boolean rowsOnly;

    BuildRowsFn(Probe p, long[] matched, boolean wantMatched, boolean rowsOnly) {
      this.p = p;
      this.matched = matched;
      this.wantMatched = wantMatched;
      this.rowsOnly = rowsOnly;
    }

    @Override
    public Iterator<InternalRow> apply(Object partition, Iterator<Object> ignored) {
      IntervalIndex idx = p.bc.value();
      int n = idx.numRows();
      UnsafeProjection proj = p.resultProjection();
      InternalRow nullStream = new GenericInternalRow(p.streamFields);
      JoinedRow joined = new JoinedRow();
      SQLMetric numOut = p.numOut;
      return new AbstractIterator<InternalRow>() {
        int r = next(0);
        final UnsafeRow row = new UnsafeRow(p.buildFields);

        private int next(int from) {
          int i = from;
          while (i < n && (((matched[i >>> 6] >>> i) & 1L) != 0) != wantMatched) i++;
          return i;
        }

        @Override
        public boolean hasNext() {
          return r < n;
        }

        @Override
        public InternalRow next() {
          idx.pointTo(row, r);
          r = next(r + 1);
          numOut.add(1);
          if (rowsOnly) return row;
          if (p.buildRight) joined.apply(nullStream, row);
          else joined.apply(row, nullStream);
          return proj.apply(joined);
        }
      };
    }
  }
}
