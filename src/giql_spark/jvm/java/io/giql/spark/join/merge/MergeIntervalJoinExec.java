package io.giql.spark.join.merge;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftAnti$;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.sql.catalyst.plans.physical.Partitioning;
import org.apache.spark.sql.catalyst.plans.physical.UnknownPartitioning;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.FileFormat$;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.PartitionedFile;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import io.giql.spark.columns.Bind;
import io.giql.spark.compat.Scala;
import io.giql.spark.compat.HadoopConf;
import io.giql.spark.compat.PartitionFn;
import io.giql.spark.compat.Partitions;
import io.giql.spark.files.Readers;
import io.giql.spark.index.IntervalIndexMode;
import io.giql.spark.index.Nearest;
import io.giql.spark.index.PerRow;
import io.giql.spark.index.IntervalIndex;
import io.giql.spark.exec.ExecNode;
import io.giql.spark.join.probe.Probe;
import io.giql.spark.join.probe.ProbeIterator;
import io.giql.spark.join.probe.Reach;
import io.giql.spark.exec.SumCountsExec;

import scala.Function1;
import scala.Option;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;

/**
 * Interval join of two Parquet scans already sorted by (key, position), with no shuffle and no
 * broadcast: each task reads, for both sides, the row groups of a contiguous range of keys with
 * Spark's own Parquet reader and sweeps the two sorted streams ({@link MergeSweep}). Which row
 * groups each task reads comes from the files' footers ({@link MergePlan}), decided when the
 * query is planned.
 *
 * <p>Join types: inner, left outer, left semi, left anti; with {@code count} the operator returns
 * one row per task holding the number of rows the join would return (for {@link SumCountsExec}),
 * and no joined row is built.
 */
public final class MergeIntervalJoinExec extends ExecNode {
  private static final long serialVersionUID = 1L;

  /** One side: a Parquet relation, the columns read, the filters and projection over them. */
  public static final class Side implements Serializable {
    private static final long serialVersionUID = 1L;
    public final transient HadoopFsRelation relation;
    public final Seq<Attribute> scanAttrs;      // relation columns read, in relation order
    public final StructType requiredSchema;
    public final Seq<Expression> filters;       // conjuncts over scanAttrs
    public final Seq<NamedExpression> project;  // over scanAttrs; its attributes are the side's output
    final Seq<Filter> pushed;            // the filters Parquet can use to skip row groups
    final String files;

    public Side(HadoopFsRelation relation, Seq<Attribute> scanAttrs, StructType requiredSchema,
        Seq<Expression> filters, Seq<NamedExpression> project, Seq<Filter> pushed, String files) {
      this.relation = relation;
      this.scanAttrs = scanAttrs;
      this.requiredSchema = requiredSchema;
      this.filters = filters;
      this.project = project;
      this.pushed = pushed;
      this.files = files;
    }

    List<Attribute> output() {
      List<Attribute> out = new ArrayList<>();
      for (NamedExpression e : Scala.list(project)) out.add(e.toAttribute());
      return out;
    }

    /**
     * This side with only the projected columns in {@code needed}, reading only the relation
     * columns those and the filters use; itself when it needs them all. Why: the join's sides
     * come from the logical plan as they were before the join's output was known; a row id
     * made for an aggregate the operator replaced (the DataFrame API's {@code count_overlaps})
     * was still computed for every row, and kept the rows from being built off the vectors.
     */
    Side pruned(Set<ExprId> needed) {
      List<NamedExpression> kept = new ArrayList<>();
      for (NamedExpression e : Scala.list(project)) if (needed.contains(e.exprId())) kept.add(e);
      if (kept.size() == project.size()) return this;
      Set<ExprId> reads = new HashSet<>();
      for (NamedExpression e : kept) references((Expression) e, reads);
      for (Expression f : Scala.list(filters)) references(f, reads);
      List<Attribute> scan = new ArrayList<>();
      List<StructField> fields = new ArrayList<>();
      List<Attribute> all = Scala.list(scanAttrs);
      StructField[] schema = requiredSchema.fields();
      for (int i = 0; i < all.size(); i++) {
        if (!reads.contains(all.get(i).exprId())) continue;
        scan.add(all.get(i));
        fields.add(schema[i]);
      }
      return new Side(relation, Scala.seq(scan), new StructType(fields.toArray(new StructField[0])),
          filters, Scala.seq(kept), pushed, files);
    }

    @Override
    public String toString() {
      // what the side computes per row beyond the columns it reads
      List<String> computed = new ArrayList<>();
      for (NamedExpression e : Scala.list(project)) {
        if (!(e instanceof Attribute)) computed.add(e.toString());
      }
      return files + (filters.isEmpty() ? "" : " filter " + filters.mkString("[", ", ", "]"))
          + (computed.isEmpty() ? "" : " computing " + computed);
    }
  }

  /**
   * A k-nearest join on the merge: per unit (one key each), the right side's rows are indexed as
   * the broadcast's are and the left rows look up their k nearest ({@link Nearest}), with all the
   * marker's equality keys as the index's groups.
   */
  public static final class KNearest implements Serializable {
    private static final long serialVersionUID = 1L;
    final Nearest nearest;
    final Seq<Expression> leftKeys;
    final Seq<Expression> rightKeys;
    final String index;

    public KNearest(Nearest nearest, Seq<Expression> leftKeys, Seq<Expression> rightKeys,
        String index) {
      this.nearest = nearest;
      this.leftKeys = leftKeys;
      this.rightKeys = rightKeys;
      this.index = index;
    }

    @Override
    public String toString() {
      return nearest + " over each key's right rows";
    }
  }

  private final Side left;
  private final Side right;
  private final JoinType joinType;
  private final Expression leftKey;
  private final Expression rightKey;
  private final Expression leftLo;
  private final Expression leftHi;
  private final Expression rightLo;
  private final Expression rightHi;
  private final Option<Expression> residual;
  private final Option<Seq<NamedExpression>> projection;
  private final Seq<Attribute> countOutput; // one attribute in count mode, else empty
  private final MergePlan plan;
  private final PerRow perRow; // one row per left row with its count, or null
  private final KNearest near; // a k-nearest join, or null

  public MergeIntervalJoinExec(Side left, Side right, JoinType joinType, Expression leftKey,
      Expression rightKey, Expression leftLo, Expression leftHi, Expression rightLo,
      Expression rightHi, Option<Expression> residual, Option<Seq<NamedExpression>> projection,
      Seq<Attribute> countOutput, MergePlan plan) {
    this(left, right, joinType, leftKey, rightKey, leftLo, leftHi, rightLo, rightHi, residual,
        projection, countOutput, plan, Option.empty());
  }

  public MergeIntervalJoinExec(Side left, Side right, JoinType joinType, Expression leftKey,
      Expression rightKey, Expression leftLo, Expression leftHi, Expression rightLo,
      Expression rightHi, Option<Expression> residual, Option<Seq<NamedExpression>> projection,
      Seq<Attribute> countOutput, MergePlan plan, Option<PerRow> perRow) {
    this(left, right, joinType, leftKey, rightKey, leftLo, leftHi, rightLo, rightHi, residual,
        projection, countOutput, plan, perRow, Option.empty());
  }

  public MergeIntervalJoinExec(Side left, Side right, JoinType joinType, Expression leftKey,
      Expression rightKey, Expression leftLo, Expression leftHi, Expression rightLo,
      Expression rightHi, Option<Expression> residual, Option<Seq<NamedExpression>> projection,
      Seq<Attribute> countOutput, MergePlan plan, Option<PerRow> perRow, Option<KNearest> near) {
    this.perRow = perRow.isDefined() ? perRow.get() : null;
    this.near = near.isDefined() ? near.get() : null;
    Set<ExprId> needed = new HashSet<>();
    if (projection.isDefined()) {
      for (NamedExpression e : Scala.list(projection.get())) references((Expression) e, needed);
    } else if (countOutput.isEmpty()) {
      for (Attribute a : left.output()) needed.add(a.exprId());
      for (Attribute a : right.output()) needed.add(a.exprId());
    }
    for (Expression e : new Expression[] {leftKey, rightKey, leftLo, leftHi, rightLo, rightHi}) {
      references(e, needed);
    }
    if (residual.isDefined()) references(residual.get(), needed);
    if (this.perRow != null) for (Expression e : this.perRow.sums) references(e, needed);
    if (this.near != null) {
      for (Expression e : Scala.list(this.near.leftKeys)) references(e, needed);
      for (Expression e : Scala.list(this.near.rightKeys)) references(e, needed);
    }
    this.left = left.pruned(needed);
    this.right = right.pruned(needed);
    this.joinType = joinType;
    this.leftKey = leftKey;
    this.rightKey = rightKey;
    this.leftLo = leftLo;
    this.leftHi = leftHi;
    this.rightLo = rightLo;
    this.rightHi = rightHi;
    this.residual = residual;
    this.projection = projection;
    this.countOutput = countOutput;
    this.plan = plan;
  }

  private static void references(Expression e, Set<ExprId> out) {
    for (Attribute a : Scala.list(e.references().toSeq())) out.add(a.exprId());
  }

  boolean counting() {
    return !countOutput.isEmpty();
  }

  /**
   * This join as one row per left row: {@code keep}, over the left side's output and the per-row
   * attributes ({@link PerRow#outputs}), is its output. Only inner and left joins, whose left
   * rows the sweep retires one by one.
   */
  public MergeIntervalJoinExec withPerRow(Seq<NamedExpression> keep, PerRow p) {
    return new MergeIntervalJoinExec(left, right, joinType, leftKey, rightKey, leftLo, leftHi,
        rightLo, rightHi, residual, Option.apply(keep), Scala.seqOf(), plan, Option.apply(p));
  }

  /** This join (inner or left outer, planned with one key per unit) as a k-nearest join. */
  public MergeIntervalJoinExec withNearest(KNearest k) {
    return new MergeIntervalJoinExec(left, right, joinType, leftKey, rightKey, leftLo, leftHi,
        rightLo, rightHi, residual, projection, countOutput, plan, Option.empty(),
        Option.apply(k));
  }

  public MergePlan mergePlan() {
    return plan;
  }

  private JoinKind kind() {
    if (joinType == LeftOuter$.MODULE$) return JoinKind.LEFT;
    if (joinType == LeftSemi$.MODULE$) return JoinKind.SEMI;
    if (joinType == LeftAnti$.MODULE$) return JoinKind.ANTI;
    return JoinKind.INNER;
  }

  private boolean existence() {
    return joinType == LeftSemi$.MODULE$ || joinType == LeftAnti$.MODULE$;
  }

  // ------------------------------------------------------------------ plan node plumbing

  @Override
  public Seq<Attribute> output() {
    if (counting()) return countOutput;
    if (existence()) return Scala.seq(left.output());
    if (projection.isDefined()) return projectionOutput();
    return Scala.seq(joinOutput());
  }

  private Seq<Attribute> projectionOutput() {
    List<Attribute> out = new ArrayList<>();
    for (NamedExpression e : Scala.list(projection.get())) out.add(e.toAttribute());
    return Scala.seq(out);
  }

  private List<Attribute> joinOutput() {
    List<Attribute> out = new ArrayList<>(left.output());
    boolean nullRight = joinType == LeftOuter$.MODULE$;
    for (Attribute a : right.output()) out.add(nullRight ? a.withNullability(true) : a);
    return out;
  }

  @Override
  public Seq<SparkPlan> children() {
    return Scala.seqOf();
  }

  @Override
  protected SparkPlan withChildren(List<SparkPlan> c) {
    return this;
  }

  @Override
  protected Object[] fields() {
    return new Object[] {
        left, right, joinType, leftKey, rightKey, leftLo, leftHi, rightLo, rightHi, residual,
        projection, countOutput, plan, perRow == null ? Option.empty() : Option.apply(perRow),
        near == null ? Option.empty() : Option.apply(near)};
  }

  @Override
  protected java.util.Map<String, String> metricDescriptions() {
    java.util.Map<String, String> m = joinMetrics();
    m.put("numFailovers", "units read again: swept from sorted copies (input out of order), or "
        + "k-nearest pieces that read all of their key's right rows (a nearest beyond reach)");
    m.put("rowsRead", "rows read from Parquet");
    return m;
  }

  @Override
  public String nodeName() {
    return "MergeIntervalJoin";
  }

  @Override
  public String simpleString(int maxFields) {
    return nodeName() + " " + joinType + (counting() ? " (count)" : "")
        + (perRow != null ? " (" + perRow + ")" : "")
        + (near != null ? " (" + near + ")" : "") + ", keys [" + leftKey
        + "] = [" + rightKey + "], hull [" + leftLo + ", " + leftHi + "] ~ [" + rightLo + ", "
        + rightHi + "]" + (residual.isDefined() ? ", residual " + residual.get() : "")
        + (projection.isDefined() ? ", output " + projection.get().mkString("[", ", ", "]") : "")
        + ", " + plan.describe() + ", left " + left + ", right " + right;
  }

  @Override
  public Partitioning outputPartitioning() {
    return new UnknownPartitioning(plan.tasks.length);
  }

  // ------------------------------------------------------------------ execution

  private static Expression bind(Expression e, Seq<Attribute> attrs) {
    return Bind.bind(e, attrs);
  }

  public static SideSpec spec(Side s, String name, Expression key, Expression lo,
      Expression hi) {
    HadoopFsRelation rel = s.relation;
    SparkSession session = rel.sparkSession();
    Configuration conf = HadoopConf.of(rel);
    boolean batch = rel.fileFormat().supportBatch(session, s.requiredSchema);
    scala.collection.immutable.Map<String, String> options = rel.options()
        .updated(FileFormat$.MODULE$.OPTION_RETURNING_BATCH(), String.valueOf(batch));
    Function1<PartitionedFile, Iterator<InternalRow>> reader =
        Readers.of(rel, s.requiredSchema, s.pushed, options, conf);
    Expression filter = null;
    for (Expression f : Scala.list(s.filters)) {
      Expression b = bind(f, s.scanAttrs);
      filter = filter == null ? b : new And(filter, b);
    }
    List<Expression> project = new ArrayList<>();
    for (NamedExpression e : Scala.list(s.project)) project.add(bind((Expression) e, s.scanAttrs));
    Seq<Attribute> sideAttrs = Scala.seq(s.output());
    List<Attribute> out = s.output();
    DataType[] types = new DataType[out.size()];
    for (int i = 0; i < types.length; i++) types[i] = out.get(i).dataType();
    return new SideSpec(name, reader, filter, Scala.seq(project),
        bind(key, sideAttrs), bind(lo, sideAttrs), bind(hi, sideAttrs), types);
  }

  @Override
  public RDD<InternalRow> doExecute() {
    SideSpec ls = spec(left, "left", leftKey, leftLo, leftHi);
    SideSpec rs = spec(right, "right", rightKey, rightLo, rightHi);
    List<Attribute> la = left.output();
    List<Attribute> ra = right.output();
    List<Attribute> joined = new ArrayList<>();
    for (Attribute a : la) joined.add(a.withNullability(true));
    for (Attribute a : ra) joined.add(a.withNullability(true));
    Seq<Expression> out = null;
    if (!counting() && !existence()) {
      List<Expression> e = new ArrayList<>();
      if (projection.isDefined()) {
        for (NamedExpression x : Scala.list(projection.get())) e.add((Expression) x);
      } else {
        e.addAll(joinOutput());
      }
      out = Scala.seq(e);
    }
    MergeJob job = new MergeJob(kind(), counting(), ls, rs,
        residual.isDefined() ? residual.get() : null, Scala.seq(la), Scala.seq(ra), out,
        Scala.seq(joined), plan, longMetric("numOutputRows"), longMetric("numCandidates"),
        longMetric("numFailovers"), longMetric("rowsRead"), Long.parseLong(
            org.apache.spark.sql.internal.SQLConf.get().getConfString("spark.giql.merge.slack",
                "1"))).withPerRow(perRow);
    int n = plan.tasks.length;
    List<Object> seeds = new ArrayList<>();
    for (int i = 0; i < n; i++) seeds.add(i);
    RDD<Object> rdd = sparkContext().parallelize(Scala.seq(seeds), n, Scala.tag(Object.class));
    if (near != null) {
      List<Expression> rk = new ArrayList<>();
      for (Expression k : Scala.list(near.rightKeys)) rk.add(bind(k, Scala.seq(ra)));
      IntervalIndexMode mode = new IntervalIndexMode(Scala.seq(rk), bind(rightLo, Scala.seq(ra)),
          bind(rightHi, Scala.seq(ra)), near.index, Bind.types(Scala.seq(ra)));
      Probe probe = Probe.forUnit(
          joinType == LeftOuter$.MODULE$, Scala.seq(la), Scala.seq(ra), near.leftKeys, leftLo,
          leftHi, residual.isDefined() ? residual.get() : null, out, near.nearest,
          longMetric("numOutputRows"), longMetric("numCandidates"));
      PartitionFn<Object, InternalRow> fn = (partition, ignored) ->
          unitsProbed(probe, mode, partition, new UnitReader(job,
              partition));
      return Partitions.mapWithIndex(rdd, PartitionFn.scala(fn), false, false,
          Scala.tag(InternalRow.class));
    }
    return Partitions.mapWithIndex(rdd, new MergeSweep(job), false, false,
        Scala.tag(InternalRow.class));
  }

  /** Per unit of a merge task: its right rows indexed by {@code mode}, its left rows probed. */
  static Iterator<InternalRow> unitsProbed(Probe p, IntervalIndexMode mode, int partition,
      UnitReader units) {
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

}
