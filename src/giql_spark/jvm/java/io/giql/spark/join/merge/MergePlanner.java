package io.giql.spark.join.merge;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.ExprId;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.NamedExpression;
import org.apache.spark.sql.catalyst.expressions.SubqueryExpression$;
import org.apache.spark.sql.catalyst.planning.PhysicalOperation$;
import org.apache.spark.sql.catalyst.plans.InnerLike;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftAnti$;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.Project;
import org.apache.spark.sql.execution.datasources.DataSourceStrategy$;
import org.apache.spark.sql.execution.datasources.FileStatusWithMetadata;
import org.apache.spark.sql.execution.datasources.HadoopFsRelation;
import org.apache.spark.sql.execution.datasources.LogicalRelation;
import org.apache.spark.sql.execution.datasources.PartitionDirectory;
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.ByteType$;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.IntegerType$;
import org.apache.spark.sql.types.LongType$;
import org.apache.spark.sql.types.ShortType$;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import io.giql.spark.columns.Fields;
import io.giql.spark.compat.Scala;
import io.giql.spark.compat.HadoopConf;
import io.giql.spark.compat.Sessions;


import scala.Option;
import scala.Tuple3;
import scala.collection.immutable.Seq;

/**
 * Decides whether a marked join can run as a {@link MergeIntervalJoinExec}, and plans it: both
 * sides must be a (filtered, projected) scan of unpartitioned Parquet files whose footers show the
 * rows grouped by one of the join's equality keys, a plain column on both sides, in runs, and the
 * join type must be inner, left outer, left semi or left anti. Otherwise it says why (the caller
 * keeps the other operators).
 */
public final class MergePlanner {
  private MergePlanner() {}

  /** Why the last join considered for a merge did or did not get one (diagnostics, tests). */
  public static volatile String lastDecision = "";
  static final java.util.ArrayDeque<String> decisions = new java.util.ArrayDeque<>();

  /** This thread's last decision: null when it merged, else why not (see {@link #refusal}). */
  private static final ThreadLocal<String[]> THREAD = new ThreadLocal<>();

  /** {@code why}: null when the join got the merge join, else the reason it did not. */
  public static void decided(String merged, String why) {
    THREAD.set(new String[] {why});
    record(why == null ? "merge: " + merged : "no merge: " + why);
  }

  /**
   * Plans {@code df} (nothing runs) and says why its marked join did not get the merge join, or
   * "" when it did. Planning in this thread is what decides, so concurrent plans do not mix.
   */
  public static String refusal(org.apache.spark.sql.Dataset<?> df) {
    THREAD.remove();
    org.apache.spark.sql.execution.SparkPlan p = df.queryExecution().sparkPlan();
    if (has(p)) return "";
    String[] d = THREAD.get();
    return d == null || d[0] == null ? "the join was not planned as a marked interval join" : d[0];
  }

  private static boolean has(org.apache.spark.sql.execution.SparkPlan p) {
    if (p instanceof MergeIntervalJoinExec) return true;
    for (org.apache.spark.sql.execution.SparkPlan c : Scala.list(p.children())) {
      if (has(c)) return true;
    }
    return false;
  }

  private static synchronized void record(String d) {
    lastDecision = d;
    decisions.addLast(d);
    while (decisions.size() > 20) decisions.removeFirst();
  }

  public static synchronized String recentDecisions() {
    return String.join("\n", decisions);
  }

  static boolean supported(JoinType t) {
    return t instanceof InnerLike || t == LeftOuter$.MODULE$ || t == LeftSemi$.MODULE$
        || t == LeftAnti$.MODULE$;
  }

  static boolean keyType(DataType t) {
    if (t instanceof StringType) return Sessions.binaryEquality((StringType) t);
    return t == LongType$.MODULE$ || t == IntegerType$.MODULE$ || t == ShortType$.MODULE$
        || t == ByteType$.MODULE$;
  }

  /**
   * The merge operator, or null with {@code why[0]} set; {@code counted}: the join's pairs are
   * counted inside it (a count, or a count per left row), not returned.
   */
  public static MergeIntervalJoinExec plan(Join j, List<Expression> hl, List<Expression> hr,
      Expression llo, Expression lhi, Expression rlo, Expression rhi, Option<Expression> residual,
      Option<Seq<NamedExpression>> projection, Seq<Attribute> countOutput, boolean counted,
      String[] why) {
    return plan(j, hl, hr, llo, lhi, rlo, rhi, residual, projection, countOutput, false, counted,
        why);
  }

  /** As above; {@code keyUnits}: one key per unit ({@link MergePlan#build}). */
  public static MergeIntervalJoinExec plan(Join j, List<Expression> hl, List<Expression> hr,
      Expression llo, Expression lhi, Expression rlo, Expression rhi, Option<Expression> residual,
      Option<Seq<NamedExpression>> projection, Seq<Attribute> countOutput, boolean keyUnits,
      boolean counted, String[] why) {
    if (!supported(j.joinType())) {
      why[0] = "join type " + j.joinType() + " (the merge join does inner, left, semi, anti)";
      return null;
    }
    if (hl.isEmpty()) {
      why[0] = "no equality key";
      return null;
    }
    MergeIntervalJoinExec.Side ls = side(j.left(), "left", why);
    if (ls == null) return null;
    MergeIntervalJoinExec.Side rs = side(j.right(), "right", why);
    if (rs == null) return null;
    // the key the files are sorted by: the first key that is a plain column on both sides
    // whose footers show both sides' rows in runs of that key
    SQLConf conf = SQLConf.get();
    boolean cs = conf.caseSensitiveAnalysis();
    int k = -1;
    Side lside = null;
    Side rside = null;
    String firstWhy = null;
    // a k-nearest join's busy chromosomes split between tasks (Units.leftPieces), unless
    // turned off: each piece reads its chromosome's right rows again, or those within reach
    boolean splitKeys = Boolean.parseBoolean(conf.getConfString("spark.giql.merge.splitKeys",
        "true"));
    // what cuts a chromosome into ranges, or a k-nearest piece's right rows to those within
    // reach of its left rows: each row group's bounds of the sweep positions
    Bounds lb = !keyUnits || splitKeys ? bounds(ls, llo, lhi) : null;
    Bounds rb = !keyUnits || splitKeys ? bounds(rs, rlo, rhi) : null;
    for (int i = 0; i < hl.size() && k < 0; i++) {
      if (!keyType(hl.get(i).dataType())) continue;
      String a = column(ls, hl.get(i));
      String b = column(rs, hr.get(i));
      if (a == null || b == null) continue;
      lside = layout(ls, a, positions(ls, llo), lb, cs, "left", why);
      rside = lside == null ? null : layout(rs, b, positions(rs, rlo), rb, cs, "right", why);
      if (lside != null && rside != null) {
        k = i;
      } else if (firstWhy == null) {
        firstWhy = why[0];
      }
    }
    if (k < 0) {
      why[0] = firstWhy != null ? firstWhy
          : "no equality key is a plain string or integer column of both scans";
      return null;
    }
    long slack = Long.parseLong(conf.getConfString("spark.giql.merge.slack", "1"));
    int sample = Integer.parseInt(conf.getConfString("spark.giql.merge.sampleRows",
        String.valueOf(SortedSample.ROWS)));
    // one key per unit (a k-nearest join) reads each key's rows whatever their order within
    // the key: only the footers' key runs matter, so the rows' order is not sampled
    if (!keyUnits && (!SortedSample.check(ls, lside, hl.get(k), llo, lhi, slack, sample, "left", why)
        || !SortedSample.check(rs, rside, hr.get(k), rlo, rhi, slack, sample, "right", why))) {
      return null;
    }
    // the other keys are checked with the residual
    Expression res = residual.isDefined() ? residual.get() : null;
    for (int i = 0; i < hl.size(); i++) {
      if (i == k) continue;
      Expression eq = new EqualTo(hl.get(i), hr.get(i));
      res = res == null ? eq : new And(res, eq);
    }
    // a key's own bounds in a row group it shares with its neighbours, read when a range or a
    // k-nearest piece asks (a shared group's footer spans both keys' positions, and would reach
    // every piece of either)
    if (lb != null) {
      Expression key = hl.get(k);
      lside.shared = new SharedBounds(lside, () -> MergeIntervalJoinExec.spec(ls, "left", key,
          llo, lhi), reading(ls, key, llo, lhi));
    }
    if (rb != null) {
      Expression key = hr.get(k);
      rside.shared = new SharedBounds(rside, () -> MergeIntervalJoinExec.spec(rs, "right", key,
          rlo, rhi), reading(rs, key, rlo, rhi));
    }
    boolean leftKeysOnly = j.joinType() == LeftOuter$.MODULE$ || j.joinType() == LeftAnti$.MODULE$;
    SparkSession session = ls.relation.sparkSession();
    // as many tasks as the cluster has cores (the cost model's spark.giql.cores, when set)
    int tasks = Integer.parseInt(conf.getConfString("spark.giql.merge.tasks",
        conf.getConfString("spark.giql.cores",
            String.valueOf(session.sparkContext().defaultParallelism()))));
    // a pair's weight of a kept row in the task cut (counted inside the join, or returned)
    double pairWeight = Double.parseDouble(conf.getConfString("spark.giql.merge.pairWeight",
        String.valueOf(counted ? COUNTED_PAIR : RETURNED_PAIR)));
    // a decoded row's weight of a kept row in the task cut (Balance.DECODED); 0 cuts by the kept
    // rows alone
    double decodedWeight = Double.parseDouble(conf.getConfString("spark.giql.merge.decodedWeight",
        String.valueOf(Balance.DECODED)));
    MergePlan plan = MergePlan.build(lside, rside, leftKeysOnly, Math.max(1, tasks), keyUnits,
        splitKeys, pairWeight, decodedWeight);
    why[0] = null;
    return new MergeIntervalJoinExec(ls, rs, j.joinType(), hl.get(k), hr.get(k), llo, lhi, rlo,
        rhi, Option.apply(res), projection, countOutput, plan);
  }

  /**
   * {@code p} with a Project over a Project made one, where Spark leaves them apart because the
   * lower one is not deterministic: a row id ({@code monotonically_increasing_id()}) under the
   * pruning Project that an aggregate over the join puts above it. Each of the lower's
   * non-deterministic expressions must be read at most once by the upper one, so it is still
   * evaluated once per row; the upper one's output attributes keep their ids. {@code p} itself
   * where there is nothing to collapse.
   */
  static LogicalPlan collapsed(LogicalPlan p) {
    if (!(p instanceof Project) || !(((Project) p).child() instanceof Project)) return p;
    Project up = (Project) p;
    Project lo = (Project) up.child();
    java.util.Map<ExprId, Expression> defs = new java.util.HashMap<>();
    for (NamedExpression e : Scala.list(lo.projectList())) {
      defs.put(e.exprId(), e instanceof Alias ? ((Alias) e).child() : (Expression) e);
    }
    java.util.Map<ExprId, Integer> reads = new java.util.HashMap<>();
    List<NamedExpression> out = new ArrayList<>();
    for (NamedExpression ne : Scala.list(up.projectList())) {
      if (!((Expression) ne).deterministic()) return p;
      Expression body = (ne instanceof Alias ? ((Alias) ne).child() : (Expression) ne)
          .transformUp(new scala.runtime.AbstractPartialFunction<Expression, Expression>() {
            @Override
            public boolean isDefinedAt(Expression x) {
              return x instanceof Attribute && defs.containsKey(((Attribute) x).exprId());
            }

            @Override
            public Expression apply(Expression x) {
              reads.merge(((Attribute) x).exprId(), 1, Integer::sum);
              return defs.get(((Attribute) x).exprId());
            }
          });
      for (Attribute a : Scala.list(body.references().toSeq())) {
        if (!lo.child().outputSet().contains(a)) return p; // not from below the lower Project
      }
      if (body instanceof NamedExpression && ((NamedExpression) body).exprId().equals(ne.exprId())) {
        out.add((NamedExpression) body);
      } else {
        out.add(new Alias(body, ne.name(), ne.exprId(), ne.qualifier(), Option.empty(), Scala.seqOf()));
      }
    }
    for (java.util.Map.Entry<ExprId, Integer> r : reads.entrySet()) {
      // a non-deterministic expression read twice would be evaluated twice
      if (!defs.get(r.getKey()).deterministic() && r.getValue() > 1) return p;
    }
    return collapsed(new Project(Scala.seq(out), lo.child()));
  }

  /** A side as a Parquet scan, or null with why. */
  static MergeIntervalJoinExec.Side side(LogicalPlan p, String name, String[] why) {
    Option<? extends Tuple3<? extends scala.collection.Seq<NamedExpression>,
        ? extends scala.collection.Seq<Expression>, LogicalPlan>> m =
        PhysicalOperation$.MODULE$.unapply(p);
    if (m.isEmpty() || !(m.get()._3() instanceof LogicalRelation)) {
      LogicalPlan c = collapsed(p);
      if (c != p) m = PhysicalOperation$.MODULE$.unapply(c);
    }
    if (m.isEmpty() || !(m.get()._3() instanceof LogicalRelation)) {
      why[0] = name + " side is not a scan of files (with filters and projections): "
          + (m.isEmpty() ? p.nodeName() : m.get()._3().nodeName());
      return null;
    }
    LogicalRelation lr = (LogicalRelation) m.get()._3();
    BaseRelation br = lr.relation();
    if (lr.isStreaming() || !(br instanceof HadoopFsRelation)) {
      why[0] = name + " side is not a file relation";
      return null;
    }
    HadoopFsRelation rel = (HadoopFsRelation) br;
    if (!(rel.fileFormat() instanceof ParquetFileFormat)) {
      why[0] = name + " side is not Parquet (" + rel.fileFormat() + ")";
      return null;
    }
    if (rel.partitionSchema().nonEmpty()) {
      why[0] = name + " side is a partitioned table";
      return null;
    }
    List<NamedExpression> project = Scala.list(m.get()._1());
    List<Expression> filters = Scala.list(m.get()._2());
    Set<ExprId> used = new HashSet<>();
    List<Expression> all = new ArrayList<>();
    for (NamedExpression e : project) all.add((Expression) e);
    all.addAll(filters);
    for (Expression e : all) {
      if (SubqueryExpression$.MODULE$.hasSubquery(e)) {
        why[0] = name + " side has a subquery in its filter or projection";
        return null;
      }
      for (Attribute a : Scala.list(e.references().toSeq())) used.add(a.exprId());
    }
    List<AttributeReference> out = Scala.list(lr.output());
    List<Attribute> scan = new ArrayList<>();
    List<StructField> fields = new ArrayList<>();
    StructField[] data = rel.dataSchema().fields();
    Set<ExprId> found = new HashSet<>();
    for (int i = 0; i < out.size(); i++) {
      if (used.contains(out.get(i).exprId())) {
        if (i >= data.length) {
          why[0] = name + " side reads a column that is not a data column";
          return null;
        }
        scan.add(out.get(i));
        fields.add(data[i]);
        found.add(out.get(i).exprId());
      }
    }
    if (!found.containsAll(used)) {
      why[0] = name + " side reads metadata columns";
      return null;
    }
    List<Filter> pushed = new ArrayList<>();
    for (Expression f : filters) {
      Option<Filter> t = DataSourceStrategy$.MODULE$.translateFilter(f, true);
      if (t.isDefined()) pushed.add(t.get());
    }
    String[] files = rel.location().inputFiles();
    String shown = files.length == 1 ? files[0] : files.length + " files";
    return new MergeIntervalJoinExec.Side(rel, Scala.seq(scan),
        new StructType(fields.toArray(new StructField[0])), Scala.seq(filters),
        Scala.seq(project), Scala.seq(pushed), shown);
  }

  /** The relation column {@code e} (over the side's output) is, or null. */
  static String column(MergeIntervalJoinExec.Side s, Expression e) {
    Expression c = overScan(s, e);
    if (!(c instanceof AttributeReference)) return null;
    ExprId cid = ((AttributeReference) c).exprId();
    List<Attribute> scan = Scala.list(s.scanAttrs);
    for (int i = 0; i < scan.size(); i++) {
      if (scan.get(i).exprId().equals(cid)) return s.requiredSchema.fields()[i].name();
    }
    return null;
  }

  /**
   * {@code e}, an expression over the side's output, as an expression over the columns read,
   * for an attribute or a field of a struct the side's projection builds (giql's sides pack
   * each table's columns into one struct); null for anything else.
   */
  static Expression overScan(MergeIntervalJoinExec.Side s, Expression e) {
    if (e instanceof AttributeReference) {
      ExprId id = ((AttributeReference) e).exprId();
      for (NamedExpression p : Scala.list(s.project)) {
        if (p.exprId().equals(id)) return Fields.plain((Expression) p);
      }
      return null;
    }
    if (e instanceof org.apache.spark.sql.catalyst.expressions.GetStructField) {
      org.apache.spark.sql.catalyst.expressions.GetStructField g =
          (org.apache.spark.sql.catalyst.expressions.GetStructField) e;
      Expression c = overScan(s, g.child());
      if (c instanceof org.apache.spark.sql.catalyst.expressions.CreateNamedStruct) {
        return Fields.plain(((org.apache.spark.sql.catalyst.expressions.CreateNamedStruct) c).valExprs()
            .apply(g.ordinal()));
      }
    }
    return null;
  }

  /**
   * The columns whose footer statistics may order the rows like lo does (lo is the column,
   * perhaps widened or shifted by a constant, or the LEAST of such terms), in the order lo names
   * them; {@link #layout} takes the first the footers show in order. A band's hull
   * {@code least(end, start - 999)} is ordered by start in a file sorted by start, though end
   * comes first.
   */
  static List<String> positions(MergeIntervalJoinExec.Side s, Expression lo) {
    List<String> out = new ArrayList<>();
    positions(s, lo, out);
    return out;
  }

  private static void positions(MergeIntervalJoinExec.Side s, Expression lo, List<String> out) {
    Expression e = lo;
    while (true) {
      if (e instanceof org.apache.spark.sql.catalyst.expressions.Cast) {
        e = ((org.apache.spark.sql.catalyst.expressions.Cast) e).child();
      } else if ((e instanceof org.apache.spark.sql.catalyst.expressions.Add
          || e instanceof org.apache.spark.sql.catalyst.expressions.Subtract)
          && e.children().apply(1).foldable()) {
        e = e.children().apply(0);
      } else {
        break;
      }
    }
    if (e instanceof org.apache.spark.sql.catalyst.expressions.Least) {
      // the operator checks every row, so any term whose column the files are sorted by will do
      for (Expression c : Scala.list(e.children())) positions(s, c, out);
      return;
    }
    String c = column(s, e);
    if (c != null && !out.contains(c)) out.add(c);
  }

  /**
   * A pair counted inside the join, and one returned, in kept rows' work (the unit of the task
   * cut, where a decoded row weighs {@link Balance#DECODED} more). A counted pair: fitted on the
   * event log of 64 merge tasks on the 10M sets (benchmarks/reports/TASK-COST-10M.md), a task's
   * CPU time was 97-118 ns per row it decoded and 11 ns per pair it counted, a pair 0.14-0.17
   * of a kept row. At 0.05, the tasks of a dense chromosome ran 1.2-1.3 times the mean.
   */
  static final double COUNTED_PAIR = 0.15;
  static final double RETURNED_PAIR = 0.25;

  /**
   * The expressions as SQL text, which names columns without their expression ids: the same
   * side of the next query (analysed anew, with new ids) finds its sample in the cache.
   */
  private static String sql(Seq<?> exprs) {
    StringBuilder b = new StringBuilder();
    for (Object e : Scala.list(exprs)) b.append(((Expression) e).sql()).append(',');
    return b.toString();
  }

  /**
   * What decides a side's rows and their key and bounds, as text over the columns read: the
   * scan's filters, and key, lo and hi over the columns read ({@link #overScanAll}). The driver's
   * reads (the sample, a shared row group's bounds) are cached by it, so that the merge check,
   * whose sides keep each table's row as a struct, and the query it admits, which projects
   * other columns, read the files once.
   */
  static String reading(MergeIntervalJoinExec.Side s, Expression... read) {
    StringBuilder b = new StringBuilder(sql(s.filters));
    for (Expression e : read) {
      Expression c = overScanAll(s, e);
      // not over the columns read: as it is, with the whole projection that defines it
      b.append('|').append(c == null ? e.sql() + "|" + sql(s.project) : c.sql());
    }
    return b.toString();
  }

  /**
   * The side's layout with the first of {@code posCols} whose footers show the rows in order
   * (without one, no position is checked in the footers); null with why when none does.
   */
  static Side layout(MergeIntervalJoinExec.Side s, String keyCol, List<String> posCols,
      Bounds bounds, boolean caseSensitive, String name, String[] why) {
    if (posCols.isEmpty()) {
      return layout(s, keyCol, (String) null, bounds, caseSensitive, name, why);
    }
    String first = null;
    for (String p : posCols) {
      Side found = layout(s, keyCol, p, bounds, caseSensitive, name, why);
      if (found != null) return found;
      if (first == null) first = why[0];
    }
    why[0] = first;
    return null;
  }

  static Side layout(MergeIntervalJoinExec.Side s, String keyCol, String posCol,
      Bounds bounds, boolean caseSensitive, String name, String[] why) {
    String[] boundCols = bounds == null ? new String[0] : bounds.columns;
    HadoopFsRelation rel = s.relation;
    // made only when a footer is not yet cached: a relation's Hadoop configuration is a copy
    // of the session's thousand settings, about a millisecond of every query's planning
    Configuration[] conf = new Configuration[1];
    java.util.function.Supplier<Configuration> lazyConf = () -> {
      if (conf[0] == null) conf[0] = HadoopConf.of(rel);
      return conf[0];
    };
    List<ParquetLayout> layouts = new ArrayList<>();
    try {
      for (PartitionDirectory d : Scala.list(rel.location().listFiles(Scala.seqOf(),
          Scala.seqOf()))) {
        for (FileStatusWithMetadata f : Scala.list(d.files())) {
          FileStatus st = f.fileStatus();
          layouts.add(ParquetLayout.of(lazyConf, st, keyCol, posCol, boundCols, caseSensitive));
        }
      }
    } catch (IOException | RuntimeException e) {
      why[0] = name + " side: could not read the Parquet footers (" + e + ")";
      return null;
    }
    Side side = Side.of(layouts, name, why);
    if (side != null && bounds != null) side.bound(bounds);
    return side;
  }

  /**
   * The bounds of the side's sweep positions from its footers, or null when lo or hi is not
   * arithmetic over its columns.
   */
  static Bounds bounds(MergeIntervalJoinExec.Side s, Expression lo, Expression hi) {
    Expression l = overScanAll(s, lo);
    Expression h = overScanAll(s, hi);
    if (l == null || h == null) return null;
    List<AttributeReference> attrs = new ArrayList<>();
    for (Attribute a : Scala.list(s.scanAttrs)) {
      if (!(a instanceof AttributeReference)) return null;
      attrs.add((AttributeReference) a);
    }
    String[] names = new String[attrs.size()];
    for (int i = 0; i < names.length; i++) names[i] = s.requiredSchema.fields()[i].name();
    return Bounds.of(l, h, attrs, names);
  }

  /** {@code e} over the side's output as an expression over the columns read, or null. */
  static Expression overScanAll(MergeIntervalJoinExec.Side s, Expression e) {
    java.util.Map<ExprId, Expression> defs = new java.util.HashMap<>();
    for (NamedExpression p : Scala.list(s.project)) defs.put(p.exprId(), Fields.plain((Expression) p));
    boolean[] missing = {false};
    Expression out = e.transformUp(
        new scala.runtime.AbstractPartialFunction<Expression, Expression>() {
          @Override
          public boolean isDefinedAt(Expression x) {
            return x instanceof Attribute || x instanceof Alias
                || x instanceof org.apache.spark.sql.catalyst.expressions.GetStructField;
          }

          @Override
          public Expression apply(Expression x) {
            if (x instanceof Attribute) {
              Expression d = defs.get(((Attribute) x).exprId());
              if (d == null) missing[0] = true;
              return d == null ? x : d;
            }
            return Fields.plain(x);
          }
        });
    return missing[0] ? null : Fields.plain(out);
  }
}
